/**
 * Deciding tool calls: on a terminal, ask — confirm, skip, edit the
 * arguments in $EDITOR, or auto N; without one, a fixed answer (--yes,
 * --deny, or skip: a script must never hang on a question nobody can see).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Interface } from "node:readline/promises";
import type { ToolPendingNotification } from "../../clients/typescript/index.js";
import type { ToolDecider, ToolDecision } from "./chat-session.js";
import type { Palette } from "./render.js";
import { toolCallLines } from "./tool-call-lines.js";

/** Always the same answer: for scripts (--yes, --deny, and skip when nobody can be asked). */
export function fixedDecider(action: "confirm" | "skip"): ToolDecider {
  return { decide: async () => ({ action }) };
}

/** y / yes / n / no / skip / e / edit / a N / auto N → what it means; undefined for anything else. */
export function parseToolAnswer(text: string): ToolDecision | "edit" | undefined {
  const answer = text.trim().toLowerCase();
  if (answer === "y" || answer === "yes") return { action: "confirm" };
  if (answer === "n" || answer === "no" || answer === "s" || answer === "skip") return { action: "skip" };
  if (answer === "e" || answer === "edit") return "edit";
  const auto = /^(?:a|auto)\s+(\d{1,6})$/.exec(answer);
  if (auto) return { action: "auto", count: Number(auto[1]) };
  return undefined;
}

export type EditResult = { ok: true; arguments: Record<string, unknown> } | { ok: false; message: string };

/**
 * Open the arguments, pretty-printed JSON, in $VISUAL / $EDITOR (default vi)
 * and read back what was saved. The editor command goes through sh, so
 * `EDITOR="code --wait"` works as it does for git.
 */
export function editArguments(args: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env): EditResult {
  const editor = env.VISUAL || env.EDITOR || "vi";
  const dir = mkdtempSync(join(tmpdir(), "agentwire-edit-"));
  const file = join(dir, "arguments.json");
  try {
    writeFileSync(file, `${JSON.stringify(args, null, 2)}\n`);
    const run = spawnSync("/bin/sh", ["-c", `${editor} "$1"`, "sh", file], { stdio: "inherit" });
    if (run.error) return { ok: false, message: `cannot run the editor (${editor}): ${run.error.message}` };
    if (run.status !== 0) return { ok: false, message: `the editor (${editor}) exited with status ${run.status ?? run.signal}; arguments unchanged` };
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(file, "utf8"));
    } catch (error) {
      return { ok: false, message: `the edited arguments are not JSON: ${(error as Error).message}` };
    }
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
      return { ok: false, message: "the edited arguments must be a JSON object" };
    }
    return { ok: true, arguments: parsed as Record<string, unknown> };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface TerminalPromptOptions {
  rl: Interface;
  err: NodeJS.WritableStream;
  colors: Palette;
  env?: NodeJS.ProcessEnv;
  /** Called before a question is shown (stop the spinner, hold other output back)… */
  beforeAsk?: () => void;
  /** …and after it is answered. */
  afterAsk?: () => void;
  /** Called around the editor, which needs the terminal to itself. */
  setRawMode?: (raw: boolean) => void;
}

/** Asks on the terminal, one question per pending call. */
export class TerminalToolPrompt implements ToolDecider {
  #abort: AbortController | undefined;

  constructor(private readonly options: TerminalPromptOptions) {}

  async decide(call: ToolPendingNotification): Promise<ToolDecision> {
    const { rl, err, colors } = this.options;
    this.options.beforeAsk?.();
    try {
      // Several calls may be pending at once: each question shows the call it is about, and the diff of what it would change.
      for (const line of toolCallLines(call, colors, { withArguments: true })) err.write(`${line}\n`);
      return await this.#ask(call);
    } finally {
      this.options.afterAsk?.();
    }
  }

  async #ask(call: ToolPendingNotification): Promise<ToolDecision> {
    const { rl, err, colors } = this.options;
    for (;;) {
      const abort = (this.#abort = new AbortController());
      let answer: string;
      try {
        answer = await rl.question(colors.bold(`Run ${call.toolName}? [y]es / [n]o / [e]dit / [a]uto N: `), { signal: abort.signal });
      } catch {
        return { action: "skip" }; // cancelled: the generation was interrupted, the call is skipped anyway
      } finally {
        this.#abort = undefined;
      }
      const decision = parseToolAnswer(answer);
      if (decision === undefined) {
        err.write(colors.dim("Answer y (run it), n (skip it), e (edit its arguments), or a N (run it and the next N without asking).\n"));
        continue;
      }
      if (decision !== "edit") return decision;
      this.options.setRawMode?.(false);
      let edited: EditResult;
      try {
        edited = editArguments(call.arguments, this.options.env);
      } finally {
        this.options.setRawMode?.(true);
      }
      if (edited.ok) return { action: "edit", arguments: edited.arguments };
      err.write(colors.red(`${edited.message}\n`));
    }
  }

  cancel(): void {
    this.#abort?.abort();
  }
}
