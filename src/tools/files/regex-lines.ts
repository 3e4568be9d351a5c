/**
 * The lines of a text that a model's regular expression matches. A JS
 * RegExp runs synchronously and a pattern like `(a+)+$` can backtrack for
 * minutes on one line, so this runs as an offload job (see
 * ../offload/deadline-workers.ts): in a worker thread, terminated when
 * search_files' time budget runs out.
 */

export interface LineMatchesInput {
  /** The pattern's source and flags, compiled in the worker (and kept for the next file of the same search). */
  source: string;
  flags: string;
  text: string;
  /** Most matches returned. */
  max: number;
  /** Characters kept of a matching line. */
  maxChars: number;
}

export interface LineMatch {
  /** 1-based. */
  line: number;
  /** The line's text, cut to `maxChars` (no line break). */
  text: string;
  /** The line's full length in characters. */
  length: number;
}

/** The last pattern compiled, by the source and flags it was given (RegExp#source is normalized, so it is no key). */
let compiled: { source: string; flags: string; re: RegExp } | undefined;

/** Up to `max` matching lines of `text`, in order. */
export function matchLines({ source, flags, text, max, maxChars }: LineMatchesInput): LineMatch[] {
  if (compiled?.source !== source || compiled.flags !== flags) compiled = { source, flags, re: new RegExp(source, flags) };
  const { re } = compiled;
  const found: LineMatch[] = [];
  let start = 0;
  let line = 0;
  while (start < text.length && found.length < max) {
    let end = text.indexOf("\n", start);
    if (end === -1) end = text.length;
    line++;
    let content = text.slice(start, end);
    if (content.endsWith("\r")) content = content.slice(0, -1);
    // A "g" or "y" flag would carry lastIndex from line to line; the caller never sets them, and this keeps it so.
    re.lastIndex = 0;
    if (re.test(content)) found.push({ line, text: content.slice(0, maxChars), length: content.length });
    if (end === text.length) break;
    start = end + 1;
  }
  return found;
}
