/**
 * The result a writing tool gives: a one-line summary, then the unified diff,
 * in the text for the model; the diff alone in `diff` for the record. The
 * file is already written when this runs: whatever happens to the diff (too
 * slow, interrupted), the result says the change was made.
 */
import { OffThreadError, runOffThread } from "../offload/deadline-workers.js";
import type { ToolResult } from "../tool.js";
import type { FileChange } from "./file-diff.js";

/** Hard limit on computing one diff (in a worker thread); the diff's own limit is shorter. */
const DIFF_DEADLINE_MS = 5000;

/**
 * `before` null: the file was created. `before` undefined: it existed but its
 * old content is not known (binary or too large). `signal`: interrupt stops
 * the diff (the result then says it was left out).
 */
export async function fileChangeResult(
  display: string,
  summary: string,
  before: string | null | undefined,
  after: string,
  signal: AbortSignal,
): Promise<ToolResult> {
  if (before === undefined) {
    const diff = `[no diff: the old content of ${display} was not text or too large to compare]\n`;
    return { success: true, output: `${summary}\n\n${diff}`, diff };
  }
  const change = await describeChange(display, before, after, signal);
  const counts = change.added === null ? "" : ` (+${change.added} -${change.removed} lines)`;
  return { success: true, output: `${summary}${counts}\n\n${change.diff}`, diff: change.diff };
}

async function describeChange(display: string, before: string | null, after: string, signal: AbortSignal): Promise<FileChange> {
  try {
    return await runOffThread("file-diff", { display, before, after }, { timeoutMs: DIFF_DEADLINE_MS, signal });
  } catch (error) {
    const why = signal.aborted
      ? "the call was stopped before it was computed"
      : error instanceof OffThreadError && error.kind === "timeout"
        ? `computing it took over ${DIFF_DEADLINE_MS} ms`
        : `computing it failed (${error instanceof Error ? error.message : String(error)})`;
    return { diff: `[no diff of ${display}: ${why}]\n`, added: null, removed: null };
  }
}
