/**
 * How `agentwire chat` shows one tool call on stderr: a line with its title
 * and tool name (and, when the user is asked, its arguments), then the diff
 * of the change it would make (`changes` on tool_pending, recomputed on
 * tool_executing) coloured like `git diff`, cut after MAX_DIFF_LINES, and a
 * warning for each file the call would fail on as proposed.
 */
import type { ToolExecutingNotification, ToolPendingNotification } from "../../clients/typescript/index.js";
import { formatArguments, type Palette, printable } from "./render.js";

/** Most diff lines shown for one call: a rewrite of a big file must not push the question off screen. */
export const MAX_DIFF_LINES = 80;
/** Longest diff line shown, in characters (a minified file is one line). */
const MAX_DIFF_LINE_CHARS = 300;

type FileChange = NonNullable<ToolPendingNotification["changes"]>[number];
type Call = Pick<ToolPendingNotification, "toolName" | "title" | "arguments"> & { changes?: FileChange[] };

export interface CallLineOptions {
  /** Show the arguments (the user decides on this call and no diff shows what it does). */
  withArguments?: boolean;
  /** Dimmed words after the title line: "(runs without asking)", "(as edited)". */
  suffix?: string;
}

/** The lines (without newlines) showing `call`. */
export function toolCallLines(call: Call, colors: Palette, options: CallLineOptions = {}): string[] {
  const title = printable(call.title || call.toolName);
  const head = title === call.toolName ? colors.cyan(`⚙ ${title}`) : `${colors.cyan(`⚙ ${title}`)} · ${call.toolName}`;
  // A diff says what an edit does better than its arguments (which hold the whole text); a failing one does not.
  const showArguments = options.withArguments && (call.changes === undefined || call.changes.every((c) => c.problem !== undefined));
  const lines = [`${head}${showArguments ? ` ${formatArguments(call.arguments)}` : ""}${options.suffix ? colors.dim(` ${options.suffix}`) : ""}`];
  if (call.changes !== undefined) lines.push(...changeLines(call.changes, colors));
  return lines;
}

/** The diff of every change, then a warning per change that would fail; bounded as a whole. */
export function changeLines(changes: readonly FileChange[], colors: Palette, maxLines = MAX_DIFF_LINES): string[] {
  if (changes.length === 0) return [colors.dim("(the call would change nothing)")];
  const diff = changes.flatMap((change) => (change.problem === undefined ? change.diff.replace(/\n$/, "").split("\n") : []));
  const shown = diff.slice(0, maxLines).map((line) => colorDiffLine(cutLine(printable(line)), colors));
  const left = diff.length - shown.length;
  if (left > 0) shown.push(colors.dim(`… ${left} more diff ${left === 1 ? "line" : "lines"} not shown`));
  for (const change of changes) {
    if (change.problem !== undefined) shown.push(colors.red(`⚠ this call would fail as proposed: ${printable(change.problem)}`));
  }
  return shown;
}

function cutLine(line: string): string {
  return line.length > MAX_DIFF_LINE_CHARS ? `${line.slice(0, MAX_DIFF_LINE_CHARS)}… (${line.length} chars)` : line;
}

function colorDiffLine(line: string, colors: Palette): string {
  if (line.startsWith("+++ ") || line.startsWith("--- ")) return colors.bold(line);
  if (line.startsWith("+")) return colors.green(line);
  if (line.startsWith("-")) return colors.red(line);
  if (line.startsWith("@@")) return colors.cyan(line);
  return line;
}

/** Words after a tool_executing's title when it carries recomputed changes. */
export function recomputedSuffix(call: Pick<ToolExecutingNotification, "edited">): string {
  return call.edited ? "(as edited)" : "(the files changed since it was proposed)";
}
