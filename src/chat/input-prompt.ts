/**
 * Questions to the user (input_requested: the model's ask_user, an MCP
 * server's elicitation) on the terminal: the question, numbered choices
 * (picked by number; several, comma-separated, with `multiple`), free text,
 * a secret typed without echo, or a form asked field by field. An empty
 * answer asks whether to decline; `/decline` and `/cancel` end it at once.
 * Without a terminal a question is declined at once: a script must never
 * hang on a question nobody can see.
 */
import type { Interface } from "node:readline/promises";
import type { InputAnswer } from "../../protocol/input.js";
import type { FormField, InputRequest } from "../../protocol/input-request.js";
import type { Palette } from "./render.js";
import { printable } from "./render.js";

/** What the user said: input.respond's action (and answer). */
export type InputReply = { action: "answer"; answer: InputAnswer } | { action: "decline" } | { action: "cancel" };

/** The question and who asks it: `subAgent` names a sub-agent's conversation. */
export interface AskedInput {
  request: InputRequest;
  subAgent?: string;
}

/** Answers questions; resolves undefined when `signal` aborts (answered elsewhere, the generation ended). */
export interface InputAsker {
  ask(input: AskedInput, signal: AbortSignal): Promise<InputReply | undefined>;
}

/** Who asks, in words: "the agent", "MCP server docs", "sub-agent c_… ". */
export function askerInWords({ request, subAgent }: AskedInput): string {
  const who = request.source === "mcp" ? `MCP server ${request.server ?? "(unnamed)"}` : "the agent";
  return subAgent ? `${who} (sub-agent ${subAgent})` : who;
}

/** Declines every question at once, saying so (`note`): the answer of a run nobody watches. */
export function decliningAsker(note: (text: string) => void): InputAsker {
  return {
    ask: async (input) => {
      note(`${askerInWords(input)} asks: ${printable(input.request.question.split("\n")[0]!)} — declined: no terminal to answer on (run agentwire chat on a terminal to answer questions)`);
      return { action: "decline" };
    },
  };
}

/** Numbers (1-based) into choices: one, or with `multiple` a comma-separated list; a string saying what is wrong otherwise. */
export function parseChoices(text: string, choices: readonly string[], multiple: boolean): { answer: string | string[] } | { problem: string } {
  const parts = text.split(",").map((p) => p.trim()).filter((p) => p !== "");
  if (parts.length === 0) return { problem: "pick a number" };
  if (!multiple && parts.length > 1) return { problem: "pick one number" };
  const picked: string[] = [];
  for (const part of parts) {
    const n = Number(part);
    if (!/^\d+$/.test(part) || n < 1 || n > choices.length) {
      // A choice typed out in full is taken as it is.
      const exact = choices.find((c) => c === part);
      if (exact === undefined) return { problem: `${part} is not a choice: a number from 1 to ${choices.length}` };
      if (!picked.includes(exact)) picked.push(exact);
      continue;
    }
    if (!picked.includes(choices[n - 1]!)) picked.push(choices[n - 1]!);
  }
  return { answer: multiple ? picked : picked[0]! };
}

/** One form field's answer: numbers parsed, booleans y/n, an enum by number; undefined for an empty answer; a string saying what is wrong. */
export function parseField(text: string, field: FormField): { value: string | number | boolean | undefined } | string {
  const t = text.trim();
  if (t === "") return { value: undefined };
  if (field.type === "boolean") {
    if (/^(y|yes|true)$/i.test(t)) return { value: true };
    if (/^(n|no|false)$/i.test(t)) return { value: false };
    return "answer y or n";
  }
  if (field.type === "number" || field.type === "integer") {
    const n = Number(t);
    if (!Number.isFinite(n)) return `${t} is not a number`;
    if (field.type === "integer" && !Number.isInteger(n)) return `${t} is not a whole number`;
    if (field.minimum !== undefined && n < field.minimum) return `must be at least ${field.minimum}`;
    if (field.maximum !== undefined && n > field.maximum) return `must be at most ${field.maximum}`;
    return { value: n };
  }
  const str = field as Extract<FormField, { type: "string" }>;
  if (str.enum) {
    const picked = parseChoices(t, str.enum, false);
    return "problem" in picked ? picked.problem : { value: picked.answer as string };
  }
  if (str.minLength !== undefined && t.length < str.minLength) return `must be at least ${str.minLength} characters`;
  if (str.maxLength !== undefined && t.length > str.maxLength) return `must be at most ${str.maxLength} characters`;
  return { value: t };
}

export interface TerminalInputOptions {
  rl: Interface;
  err: NodeJS.WritableStream;
  colors: Palette;
  /** Hide (true) or show again (false) what is typed: for a secret. */
  mute: (on: boolean) => void;
  /** Called before a question is shown (stop the spinner, hold other output back)… */
  beforeAsk?: () => void;
  /** …and after it is answered. */
  afterAsk?: () => void;
}

/** Why a line ended the question rather than answering it. */
class Ended {
  constructor(readonly reply: InputReply | undefined) {}
}

/** Asks on the terminal, sharing the REPL's readline. */
export class TerminalInputPrompt implements InputAsker {
  constructor(private readonly options: TerminalInputOptions) {}

  async ask(input: AskedInput, signal: AbortSignal): Promise<InputReply | undefined> {
    const { err, colors } = this.options;
    const { request } = input;
    this.options.beforeAsk?.();
    try {
      err.write(`${colors.bold(`? ${askerInWords(input)} asks:`)} ${printable(request.question)}\n`);
      const hint = request.secret ? "typed hidden; " : "";
      err.write(colors.dim(`  (${hint}an empty answer offers to decline; /decline or /cancel end the question)\n`));
      if (request.schema) return await this.#form(request.schema, signal);
      if (request.choices) return await this.#choices(request.choices, request.multiple === true, signal);
      const text = await this.#line(request.secret ? "secret: " : "answer: ", signal, request.secret === true);
      return { action: "answer", answer: text };
    } catch (caught) {
      if (caught instanceof Ended) {
        if (caught.reply === undefined) err.write(colors.dim("  (the question was answered elsewhere or ended)\n"));
        return caught.reply;
      }
      throw caught;
    } finally {
      this.options.afterAsk?.();
    }
  }

  async #choices(choices: readonly string[], multiple: boolean, signal: AbortSignal): Promise<InputReply> {
    const { err, colors } = this.options;
    choices.forEach((c, i) => err.write(`  ${i + 1}. ${printable(c)}\n`));
    for (;;) {
      const text = await this.#line(multiple ? "numbers (comma-separated): " : `number (1-${choices.length}): `, signal);
      const picked = parseChoices(text, choices, multiple);
      if ("problem" in picked) {
        err.write(colors.red(`  ${picked.problem}\n`));
        continue;
      }
      return { action: "answer", answer: picked.answer };
    }
  }

  async #form(schema: NonNullable<InputRequest["schema"]>, signal: AbortSignal): Promise<InputReply> {
    const { err, colors } = this.options;
    const required = new Set(schema.required ?? []);
    const answer: Record<string, string | number | boolean> = {};
    for (const [name, field] of Object.entries(schema.properties)) {
      const label = field.title ? `${field.title} (${name})` : name;
      const kind = field.type === "boolean" ? "y/n" : field.type === "string" && field.enum ? "pick a number" : field.type;
      const extra = [required.has(name) ? "required" : "optional", field.default !== undefined ? `Enter: ${String(field.default)}` : undefined].filter(Boolean).join(", ");
      err.write(`  ${colors.bold(printable(label))} ${colors.dim(`[${kind}; ${extra}]`)}${field.description ? colors.dim(` — ${printable(field.description)}`) : ""}\n`);
      if (field.type === "string" && field.enum) field.enum.forEach((v, i) => err.write(`    ${i + 1}. ${printable(field.enumNames?.[i] ?? v)}\n`));
      for (;;) {
        // An empty answer to a required field without a default offers to decline (as with any question); an optional one is left out.
        const text = await this.#line(`  ${name}: `, signal, false, !required.has(name) || field.default !== undefined);
        const parsed = parseField(text, field);
        if (typeof parsed === "string") {
          err.write(colors.red(`  ${parsed}\n`));
          continue;
        }
        const value = parsed.value ?? field.default;
        if (value !== undefined) answer[name] = value;
        break;
      }
    }
    return { action: "answer", answer };
  }

  /**
   * One line. "/decline" and "/cancel" end the question; an empty line asks
   * "decline?" (unless `emptyOk`, then it is the answer). Throws Ended when
   * the question ends without an answer.
   */
  async #line(prompt: string, signal: AbortSignal, secret = false, emptyOk = false): Promise<string> {
    const { rl, err, colors } = this.options;
    for (;;) {
      let text: string;
      try {
        if (secret) {
          // The prompt is written past the muted readline, which then echoes nothing of what is typed.
          err.write(colors.bold(prompt));
          this.options.mute(true);
        }
        text = await rl.question(secret ? "" : colors.bold(prompt), { signal });
        // Nor may the up arrow bring it back: readline keeps every line in its history.
        const history = (rl as unknown as { history?: string[] }).history;
        if (secret && Array.isArray(history) && history[0] === text) history.shift();
      } catch {
        throw new Ended(signal.aborted ? undefined : { action: "cancel" });
      } finally {
        if (secret) {
          this.options.mute(false);
          err.write("\n");
        }
      }
      const word = text.trim();
      if (word === "/decline") throw new Ended({ action: "decline" });
      if (word === "/cancel") throw new Ended({ action: "cancel" });
      if (word !== "" || emptyOk) return secret ? text : word;
      let sure: string;
      try {
        sure = await rl.question(colors.bold("Decline to answer? [y/N] "), { signal });
      } catch {
        throw new Ended(signal.aborted ? undefined : { action: "cancel" });
      }
      if (/^y(es)?$/i.test(sure.trim())) throw new Ended({ action: "decline" });
      if (signal.aborted) throw new Ended(undefined);
    }
  }
}
