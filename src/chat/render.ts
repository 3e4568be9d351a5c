/**
 * Colours for the terminal client: ANSI styles when the stream is a terminal
 * and NO_COLOR (https://no-color.org) is unset; plain text otherwise, so piped
 * output and logs carry no escape codes.
 */
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
