/**
 * The unified diff a writing tool reports: in its result text (so the model
 * sees what it changed) and on the tool call record (so a client can show
 * it). Both are capped: a rewrite of a large file must not make a huge record.
 */
import { createTwoFilesPatch, FILE_HEADERS_ONLY } from "diff";
import { utf8Prefix } from "../output-budget.js";

/** Most bytes of diff kept; beyond it the diff is cut at a line end with a note. */
export const MAX_DIFF_BYTES = 64 * 1024;

/** Diffing is quadratic in the worst case: past this the change is summarised instead. */
const DIFF_TIME_LIMIT_MS = 1000;

export interface FileChange {
  /** The unified diff (capped), or a note when it could not be computed in time. */
  diff: string;
  added: number;
  removed: number;
}

/** `before` null: the file is new. `display` names the file in the headers (workspace-relative). */
export function describeChange(display: string, before: string | null, after: string): FileChange {
  const patch = createTwoFilesPatch(
    before === null ? "/dev/null" : `a/${display}`,
    `b/${display}`,
    before ?? "",
    after,
    undefined,
    undefined,
    { context: 3, timeout: DIFF_TIME_LIMIT_MS, headerOptions: FILE_HEADERS_ONLY },
  );
  if (patch === undefined) {
    return { diff: `[the diff of ${display} took too long to compute and is left out]\n`, added: 0, removed: 0 };
  }
  let added = 0;
  let removed = 0;
  let inHunks = false; // the ---/+++ headers come first and are not changes
  for (const line of patch.split("\n")) {
    if (line.startsWith("@@")) inHunks = true;
    else if (inHunks && line.startsWith("+")) added++;
    else if (inHunks && line.startsWith("-")) removed++;
  }
  return { diff: capDiff(patch), added, removed };
}

function capDiff(diff: string): string {
  const bytes = Buffer.from(diff, "utf8");
  if (bytes.length <= MAX_DIFF_BYTES) return diff;
  let kept = utf8Prefix(bytes, MAX_DIFF_BYTES);
  const lastLine = kept.lastIndexOf("\n");
  if (lastLine > 0) kept = kept.slice(0, lastLine + 1);
  const cut = bytes.length - Buffer.byteLength(kept, "utf8");
  return `${kept}[… diff cut: ${cut} more bytes; read the file to see the rest]\n`;
}
