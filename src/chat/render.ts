/**
 * Colours for the terminal client: ANSI styles when the stream is a terminal
 * and NO_COLOR (https://no-color.org) is unset; plain text otherwise, so piped
 * output and logs carry no escape codes. And the small layout helpers of the
 * listings (tools, mcp list).
 */
import { firstSentence } from "../cli-help.js";

export interface Palette {
  dim(text: string): string;
  bold(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  cyan(text: string): string;
}

export function wantsColor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  return stream.isTTY === true && !env.NO_COLOR && env.TERM !== "dumb";
}

const style = (open: number, close: number) => (text: string) => `\x1b[${open}m${text}\x1b[${close}m`;

const COLORED: Palette = {
  dim: style(2, 22),
  bold: style(1, 22),
  red: style(31, 39),
  green: style(32, 39),
  yellow: style(33, 39),
  cyan: style(36, 39),
};

const identity = (text: string) => text;
const PLAIN: Palette = { dim: identity, bold: identity, red: identity, green: identity, yellow: identity, cyan: identity };

export function palette(color: boolean): Palette {
  return color ? COLORED : PLAIN;
}

/** Tool arguments on one line, cut so a huge argument does not flood the terminal. */
export function formatArguments(args: Record<string, unknown>, max = 400): string {
  const text = JSON.stringify(args);
  return text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text;
}

/** A description as one line of a listing: its first sentence, cut at `max` characters. */
export function summaryLine(description: string, max = 72): string {
  const first = firstSentence(description.split("\n")[0]!.trim());
  return first.length > max ? `${first.slice(0, max - 1).trimEnd()}…` : first;
}

/** Rows of cells as aligned columns (two spaces apart; the last cell is not padded). */
export function columns(rows: string[][]): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  "));
}

/**
 * Text from the model or a file made safe to print: control characters (an
 * escape sequence in a diffed file, a carriage return in a plan entry) are
 * shown as `^X` instead of acting on the terminal. Tabs stay.
 */
export function printable(text: string): string {
  return text.replace(/[\x00-\x08\x0a-\x1f\x7f]/g, (c) => (c === "\x7f" ? "^?" : `^${String.fromCharCode(c.charCodeAt(0) + 64)}`));
}
