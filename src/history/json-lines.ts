/**
 * The lines of a JSONL session file, each parsed on its own: a damaged line
 * (not JSON, not an object, or longer than the bound) is reported by number
 * and the others still count. A last line without its newline is being
 * written right now: it is left for the next read, not called damaged.
 */
export type JsonLine = { n: number; value: Record<string, unknown> } | { n: number; damaged: true };

export function* jsonLines(text: string, maxLineBytes: number): Iterable<JsonLine> {
  const lines = text.split("\n");
  if (!text.endsWith("\n")) lines.pop();
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === "") continue;
    // Characters bound bytes from below: only a line near the bound needs counting.
    if (line.length * 3 > maxLineBytes && Buffer.byteLength(line) > maxLineBytes) {
      yield { n: i + 1, damaged: true };
      continue;
    }
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      yield { n: i + 1, damaged: true };
      continue;
    }
    if (typeof value === "object" && value !== null && !Array.isArray(value)) yield { n: i + 1, value: value as Record<string, unknown> };
    else yield { n: i + 1, damaged: true };
  }
}

/** The readable lines only; each damaged line's number goes to `damaged`. */
export function* readableLines(text: string, maxLineBytes: number, damaged: number[]): Iterable<{ n: number; value: Record<string, unknown> }> {
  for (const line of jsonLines(text, maxLineBytes)) {
    if ("damaged" in line) damaged.push(line.n);
    else yield line;
  }
}
