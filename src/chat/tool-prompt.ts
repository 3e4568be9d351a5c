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
import { MAX_SKIP_MESSAGE_CHARS } from "../../protocol/limits/generation.js";
import type { ToolDecider, ToolDecision } from "./chat-session.js";
import type { Palette } from "./render.js";
import { toolCallLines } from "./tool-call-lines.js";

/** A rule (tool_pending `rememberAs`) in words: "`git status`-like commands", "every `read_file` call". */
export function ruleInWords(rule: { tool: string; prefix?: string }): string {
  return rule.prefix !== undefined ? `\`${rule.prefix}\`-like ${rule.tool} commands` : `every ${rule.tool} call`;
}

/** Always the same answer: for scripts (--yes, --deny, and skip when nobody can be asked). */
export function fixedDecider(action: "confirm" | "skip"): ToolDecider {
  return { decide: async () => ({ action }) };
}

/**
 * y / yes / n [REASON] / no / skip / e / edit / a N / auto N / A (always) → what it means; undefined
 * for anything else. A reason after n ("n because the tests are slow") reaches the model (skip `message`).
 */
export function parseToolAnswer(text: string): ToolDecision | "edit" | "always" | undefined {
  const trimmed = text.trim();
  const answer = trimmed.toLowerCase();
  if (answer === "y" || answer === "yes") return { action: "confirm" };
  if (trimmed === "A" || answer === "always") return "always";
  const skip = /^(?:n|no|s|skip)(?:\s+(.+))?$/is.exec(trimmed);
  if (skip) {
    const reason = skip[1]?.trim().slice(0, MAX_SKIP_MESSAGE_CHARS);
    return reason ? { action: "skip", message: reason } : { action: "skip" };
  }
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

  async decide(call: ToolPendingNotification, from?: { subAgent?: string }): Promise<ToolDecision> {
    const { err, colors } = this.options;
    this.options.beforeAsk?.();
    try {
      // The parent's spawn_agent call waits on it: asked here so the chat is not stuck on a call nobody sees.
      if (from?.subAgent) err.write(`${colors.bold(`sub-agent ${from.subAgent}`)} ${colors.dim("(its call; the parent waits for it)")}\n`);
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
        const always = call.rememberAs ? " / [A]lways" : "";
        answer = await rl.question(colors.bold(`Run ${call.toolName}? [y]es / [n]o [reason] / [e]dit / [a]uto N${always}: `), { signal: abort.signal });
      } catch {
        return { action: "skip" }; // cancelled: the generation was interrupted, the call is skipped anyway
      } finally {
        this.#abort = undefined;
      }
      const decision = parseToolAnswer(answer);
      if (decision === undefined || (decision === "always" && !call.rememberAs)) {
        const always = call.rememberAs ? `, or A (run it and always allow ${ruleInWords(call.rememberAs)})` : "";
        err.write(colors.dim(`Answer y (run it), n (skip it; words after n tell the model why), e (edit its arguments), a N (run it and the next N without asking)${always}.\n`));
        continue;
      }
      if (decision === "always") {
        const scope = await this.#scope(call.rememberAs!);
        if (scope === "cancelled") return { action: "skip" };
        if (scope === undefined) continue;
        return { action: "confirm", remember: scope };
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

  /** Where to remember the rule: c (this conversation) or w (the workspace); undefined to ask about the call again. */
  async #scope(rule: { tool: string; prefix?: string }): Promise<"conversation" | "workspace" | "cancelled" | undefined> {
    const { rl, colors } = this.options;
    const abort = (this.#abort = new AbortController());
    try {
      const answer = await rl.question(
        colors.bold(`Always allow ${ruleInWords(rule)} for this [c]onversation or this [w]orkspace? (Enter: back) `),
        { signal: abort.signal },
      );
      const word = answer.trim().toLowerCase();
      if (word === "c" || word === "conversation") return "conversation";
      if (word === "w" || word === "workspace") return "workspace";
      return undefined;
    } catch {
      return "cancelled";
    } finally {
      this.#abort = undefined;
    }
  }

  cancel(): void {
    this.#abort?.abort();
  }
}
