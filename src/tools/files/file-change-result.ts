/**
 * The result a writing tool gives: a one-line summary, then the unified diff,
 * in the text for the model; the diff alone in `diff` for the record. The
 * file is already written when this runs: whatever happens to the diff (too
 * slow, interrupted), the result says the change was made.
 *
 * The same diff is what a preview shows before the call is approved
 * (filePreview): one function computes both, so for an unedited call the
 * diff shown before equals the diff the write produces.
 */
import type { FileChange as WireFileChange } from "../../../protocol/index.js";
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
  const change = await changeDiff(display, before, after, signal);
  const counts = change.added === null ? "" : ` (+${change.added} -${change.removed} lines)`;
  return { success: true, output: `${summary}${counts}\n\n${change.diff}`, diff: change.diff, change: { path: display, before, after } };
}

/** The change a write of `after` over `before` would make, as tool_pending shows it. */
export async function filePreview(
  display: string,
  before: string | null | undefined,
  after: string,
  signal: AbortSignal,
): Promise<WireFileChange> {
  const { diff } = await changeDiff(display, before, after, signal);
  return { path: display, kind: before === null ? "add" : "modify", diff };
}

/** A preview of a call that would fail: `problem` says why, as the tool's error would. */
export function problemPreview(path: string, kind: WireFileChange["kind"], problem: string): WireFileChange {
  return { path, kind, diff: "", problem };
}

/** The diff of one change, or a note saying why there is none. */
export async function changeDiff(
  display: string,
  before: string | null | undefined,
  after: string,
  signal: AbortSignal,
): Promise<FileChange> {
  if (before === undefined) {
    return { diff: `[no diff: the old content of ${display} was not text or too large to compare]\n`, added: null, removed: null };
  }
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
