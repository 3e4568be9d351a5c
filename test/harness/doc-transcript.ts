/**
 * Transcripts in the docs: a `text` block of `$ command` lines, each followed
 * by what it printed. The rules that let a transcript stand for a real run
 * whose ids, times and paths differ every time:
 *
 * - `…` inside a line stands for any text on that line (an id, a time, a
 *   path, the rest of a long JSON line);
 * - a line that is only `…` stands for any number of lines (an excerpt);
 * - a run of spaces matches any run of spaces (column widths follow the
 *   length of paths), and trailing spaces are ignored.
 *
 * For terminal sessions, `screenOf` replays what a terminal shows from the
 * bytes a program wrote to its pseudo-terminal (carriage returns, line
 * erases and cursor columns, as spinners and line editors use them).
 */

export interface TranscriptStep {
  command: string;
  /** The lines shown after the command, as written in the doc. */
  expected: string[];
}

/** Splits a transcript block into its commands; throws when it does not start with `$ `. */
export function parseTranscript(body: string): TranscriptStep[] {
  const lines = body.replace(/\n$/, "").split("\n");
  if (!lines[0]?.startsWith("$ ")) throw new Error("a transcript starts with a `$ command` line");
  const steps: TranscriptStep[] = [];
  for (const line of lines) {
    if (line.startsWith("$ ")) steps.push({ command: line.slice(2), expected: [] });
    else steps.at(-1)!.expected.push(line);
  }
  return steps;
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** A regular expression for the whole output from the expected lines (rules above). */
export function outputPattern(expected: readonly string[]): RegExp {
  let source = "";
  for (const raw of trimTrailingBlankLines(expected.map((l) => l.trimEnd()))) {
    if (raw.trim() === "…") {
      source += "(?:[^\\n]*\\n)*?";
      continue;
    }
    const line = raw
      .split("…")
      .map((part) => escape(part).replace(/ +/g, " +"))
      .join("[^\\n]*?");
    source += `${line}\\n`;
  }
  return new RegExp(`^${source}$`);
}

function trimTrailingBlankLines(lines: string[]): string[] {
  const out = [...lines];
  while (out.length > 0 && out.at(-1) === "") out.pop();
  return out;
}

/** Output as compared: \r\n as \n, no trailing spaces, no trailing blank lines, ending with \n (or empty). */
export function normalizeOutput(text: string): string {
  const lines = trimTrailingBlankLines(text.replace(/\r+\n/g, "\n").split("\n").map((l) => l.trimEnd()));
  return lines.length === 0 ? "" : `${lines.join("\n")}\n`;
}

/** null when `actual` matches the expected lines, else a message showing both. */
export function compareOutput(command: string, expected: readonly string[], actual: string): string | null {
  const text = normalizeOutput(actual);
  if (outputPattern(expected).test(text)) return null;
  return `\`$ ${command}\` printed:\n${text}--- but the doc shows:\n${expected.join("\n")}\n`;
}

/**
 * What a terminal shows after `raw` was written to it: printable text at the
 * cursor, `\r`, `\n`, backspace, and the CSI sequences line editors and
 * spinners use (cursor column G, up/down/right/left A/B/C/D, erase in line K,
 * erase below J); colours and modes are dropped. Lines do not wrap.
 */
export function screenOf(raw: string): string {
  const lines: string[][] = [[]];
  let row = 0;
  let col = 0;
  const line = () => (lines[row] ??= []);
  const chars = Array.from(raw); // by code point: one character, one cell
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i]!;
    if (ch === "\x1b") {
      const ahead = chars.slice(i, i + 256).join("");
      const csi = /^\x1b\[([?0-9;]*)([A-Za-z])/.exec(ahead);
      const osc = /^\x1b\][^\x07]*\x07/.exec(ahead);
      if (csi) {
        i += csi[0].length - 1;
        const n = Number(csi[1]!.replace("?", "").split(";")[0] || 0);
        switch (csi[2]) {
          case "G":
            col = Math.max(0, (n || 1) - 1);
            break;
          case "A":
            row = Math.max(0, row - (n || 1));
            break;
          case "B":
            row += n || 1;
            break;
          case "C":
            col += n || 1;
            break;
          case "D":
            col = Math.max(0, col - (n || 1));
            break;
          case "K":
            if (n === 2) lines[row] = [];
            else if (n === 1) for (let c = 0; c <= col; c++) line()[c] = " ";
            else line().length = Math.min(line().length, col);
            break;
          case "J":
            if (n === 0) {
              line().length = Math.min(line().length, col);
              lines.length = row + 1;
            }
            break;
          default: // colours (m), modes (h, l) and the rest change nothing shown here
        }
      } else if (osc) {
        i += osc[0].length - 1;
      }
      continue;
    }
    if (ch === "\r") col = 0;
    else if (ch === "\n") {
      row++;
      line();
    } else if (ch === "\b") col = Math.max(0, col - 1);
    else if (ch >= " " || ch === "\t") {
      const current = line();
      while (current.length < col) current.push(" ");
      current[col++] = ch;
    }
  }
  return lines.map((l) => Array.from(l, (c) => c ?? " ").join("").trimEnd()).join("\n");
}
