/**
 * The unified diff a writing tool reports: in its result text (so the model
 * sees what it changed) and on the tool call record (so a client can show
 * it). Both are capped: a rewrite of a large file must not make a huge record.
 *
 * Diffing is CPU work proportional to the file (and worse: quadratic at
 * worst), so it runs as an offload job, in a worker thread with a deadline
 * (file-change-result.ts asks for it). It is also kept small: the lines both
 * texts share at their start and end are set aside first (an edit touches a
 * few lines of a large file), and a change whose differing part is still
 * larger than MAX_DIFF_INPUT_CHARS is described instead of diffed.
 */
import { FILE_HEADERS_ONLY, formatPatch, structuredPatch } from "diff";
import { utf8Prefix } from "../output-budget.js";

/** Most bytes of diff kept; beyond it the diff is cut at a line end with a note. */
export const MAX_DIFF_BYTES = 64 * 1024;

/** The differing part of the two texts (both sides together) past which no diff is computed. */
export const MAX_DIFF_INPUT_CHARS = 2 * 1024 * 1024;

/** jsdiff's own limit: past it, it gives up and the change is summarised. The worker's deadline backs it. */
const DIFF_TIME_LIMIT_MS = 1000;

/** Lines of unchanged text shown around each change. */
const CONTEXT_LINES = 3;

export interface FileChangeInput {
  /** Names the file in the headers (workspace-relative). */
  display: string;
  /** null: the file is new. */
  before: string | null;
  after: string;
}

export interface FileChange {
  /** The unified diff (capped), or a note when it was not computed. */
  diff: string;
  /** Lines added and removed; null when no diff was computed. */
  added: number | null;
  removed: number | null;
}

export function computeFileChange({ display, before, after }: FileChangeInput): FileChange {
  const old = before ?? "";
  const { start, line, oldEnd, newEnd } = differingPart(old, after);
  const changed = oldEnd - start + (newEnd - start);
  if (changed > MAX_DIFF_INPUT_CHARS) {
    return {
      diff: `[no diff: the changed part of ${display} is too large to diff (${changed} characters, over ${MAX_DIFF_INPUT_CHARS}); read the file to see it]\n`,
      added: null,
      removed: null,
    };
  }
  const patch = structuredPatch(
    before === null ? "/dev/null" : `a/${display}`,
    `b/${display}`,
    old.slice(start, oldEnd),
    after.slice(start, newEnd),
    undefined,
    undefined,
    { context: CONTEXT_LINES, timeout: DIFF_TIME_LIMIT_MS },
  );
  if (patch === undefined) {
    return { diff: `[no diff: the diff of ${display} took too long to compute and is left out]\n`, added: null, removed: null };
  }
  let added = 0;
  let removed = 0;
  for (const hunk of patch.hunks) {
    // Back to the whole file's line numbers.
    hunk.oldStart += line;
    hunk.newStart += line;
    for (const text of hunk.lines) {
      if (text.startsWith("+")) added++;
      else if (text.startsWith("-")) removed++;
    }
  }
  return { diff: capDiff(formatPatch(patch, FILE_HEADERS_ONLY)), added, removed };
}

/**
 * The part of the two texts a diff must look at: everything but the whole
 * lines they share at the start and at the end, less CONTEXT_LINES of each
 * (the diff shows them as context). `start` is the same offset in both texts
 * and `line` the number of lines before it; `oldEnd`/`newEnd` end the part
 * in each. The diff of that part, its line numbers moved down by `line`, is
 * the diff of the whole texts.
 */
export function differingPart(old: string, now: string): { start: number; line: number; oldEnd: number; newEnd: number } {
  const shortest = Math.min(old.length, now.length);
  let prefix = 0;
  while (prefix < shortest && old.charCodeAt(prefix) === now.charCodeAt(prefix)) prefix++;
  // Back to the start of the line the first difference is on, then over the context lines.
  let start = lineStart(old, prefix);
  for (let i = 0; i < CONTEXT_LINES && start > 0; i++) start = lineStart(old, start - 1);
  let line = 0;
  for (let at = old.indexOf("\n"); at !== -1 && at < start; at = old.indexOf("\n", at + 1)) line++;

  let suffix = 0;
  const room = shortest - start;
  while (suffix < room && old.charCodeAt(old.length - 1 - suffix) === now.charCodeAt(now.length - 1 - suffix)) suffix++;
  // The shared end, from the first line start inside it (the line break before it is shared too,
  // so both parts end with one), then CONTEXT_LINES further on.
  const firstBreak = suffix === 0 ? -1 : old.indexOf("\n", old.length - suffix);
  let tail = firstBreak === -1 ? 0 : old.length - firstBreak - 1;
  for (let i = 0; i < CONTEXT_LINES && tail > 0; i++) {
    const next = old.indexOf("\n", old.length - tail);
    tail = next === -1 ? 0 : old.length - next - 1;
  }
  return { start, line, oldEnd: old.length - tail, newEnd: now.length - tail };
}

/** Where the line holding position `at` starts. */
function lineStart(text: string, at: number): number {
  return at <= 0 ? 0 : text.lastIndexOf("\n", at - 1) + 1;
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
