/**
 * The result a writing tool gives: a one-line summary, then the unified diff,
 * in the text for the model; the diff alone in `diff` for the record.
 */
import type { ToolResult } from "../tool.js";
import { describeChange } from "./file-diff.js";

/** `before` null: the file was created. `before` undefined: it existed but its old content is not known (binary or too large). */
export function fileChangeResult(display: string, summary: string, before: string | null | undefined, after: string): ToolResult {
  if (before === undefined) {
    const diff = `[no diff: the old content of ${display} was not text or too large to compare]\n`;
    return { success: true, output: `${summary}\n\n${diff}`, diff };
  }
  const change = describeChange(display, before, after);
  return { success: true, output: `${summary} (+${change.added} -${change.removed} lines)\n\n${change.diff}`, diff: change.diff };
}
