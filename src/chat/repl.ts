/**
 * The interactive session of `agentwire chat` on a terminal: a prompt that
 * stays open while the agent works. A line typed while a generation runs is
 * steered into it (it joins at the next model call); `/queue TEXT` holds it
 * for a generation of its own once this one completes. Between turns the
 * slash commands rewind, unrewind, compact and list the queue; any other
 * `/NAME ARGS` is a prompt template of the workspace or the user
 * (commands.list), sent for the server to expand. The tool
 * prompt shares the one readline: while it asks, the REPL's own question is
 * put away (what was typed is kept) and comes back after the answer.
 */
import type { Interface } from "node:readline/promises";
import type { AgentwireClient } from "../../clients/typescript/index.js";
import { AgentwireRpcError, ErrorCodes } from "../../clients/typescript/index.js";
import type { ChatSession, TurnInput, TurnOutcome } from "./chat-session.js";
import { describeError } from "./chat-session.js";
import { compactAndWait, nthLastUserMessage, rewindLines } from "./history-actions.js";
import type { Palette } from "./render.js";
import { DEFAULT_MODE } from "../../protocol/mode-table.js";

/** Lets the tool prompt borrow the readline: the REPL's question is cancelled while a tool question is open. */
export class PromptGate {
  #asking: { done: Promise<void>; resolve: () => void } | undefined;
  #current: AbortController | undefined;

  /** Before a tool question: put the REPL's question away. */
  beforeAsk(): void {
    let resolve!: () => void;
    const done = new Promise<void>((r) => (resolve = r));
    this.#asking = { done, resolve };
    this.#current?.abort();
  }

  /** After the answer: the REPL may ask again. */
  afterAsk(): void {
    const asking = this.#asking;
    this.#asking = undefined;
    asking?.resolve();
  }

  async idle(): Promise<void> {
    while (this.#asking) await this.#asking.done;
  }

  set current(abort: AbortController | undefined) {
    this.#current = abort;
  }
}

export const REPL_HELP = [
  "While the agent works, type a line and press Enter to steer it (the line joins at its next model call).",
  "  /queue TEXT       hold TEXT for a turn of its own after this one (while the agent works; else it is sent now)",
  "  /queue            the held messages",
  "  /rewind [N]       take back the last N user messages (default 1) and everything after; asks whether to restore files",
  "  /unrewind         put the last rewind back",
  "  /compact [TEXT]   have the model summarize the conversation (TEXT: what to keep); prints tokens before → after",
  "  /mode [NAME]      the modes (the current one marked), or switch to NAME from the next model call",
  "  /help             this list (and the workspace's prompt templates)",
  "  /NAME [ARGS]      a prompt template (.agentwire/commands/NAME.md): the server fills in ARGS and sends it as your message",
  "Ctrl-C interrupts the agent (twice quits); Ctrl-D ends.",
];

export interface ReplOptions {
  rl: Interface;
  session: ChatSession;
  client: AgentwireClient;
  gate: PromptGate;
  colors: Palette;
  /** A status line on stderr (through the view, which ends a half-written answer line first). */
  note: (text: string) => void;
  /** An error line on stderr. */
  fail: (text: string) => void;
  /** Start a turn with a user message. */
  runTurn: (input: TurnInput) => Promise<TurnOutcome>;
  /** Follow a generation a queued message started. */
  follow: (generationId: string) => Promise<TurnOutcome>;
  /** Ctrl-C at the prompt with nothing running: the loop ends as interrupted. */
  onStop: (stop: (() => void) | undefined) => void;
  /** Resolves when a generation starts that no turn of ours asked for (set up by the caller). */
  otherGeneration: () => Promise<void>;
}

type Event =
  | { kind: "line"; text: string }
  | { kind: "eof" }
  | { kind: "interrupt" }
  | { kind: "aborted" }
  | { kind: "ended"; outcome: TurnOutcome }
  | { kind: "other" };

/** Runs the REPL until Ctrl-D (or Ctrl-C at an idle prompt); answers the last turn's outcome, if any. */
export async function runRepl(options: ReplOptions, first: Promise<TurnOutcome> | undefined): Promise<TurnOutcome | undefined> {
  const { rl, session, gate } = options;
  // While a generation runs no question is open: readline still echoes what is typed and emits each
  // line, so a tool question (rl.question) takes the lines typed while it is open and this the others.
  const typed: string[] = [];
  let closed = false;
  let wake: (() => void) | undefined;
  const onLine = (text: string) => {
    typed.push(text);
    wake?.();
  };
  const onClose = () => {
    closed = true;
    wake?.();
  };
  rl.on("line", onLine);
  rl.once("close", onClose);
  const nextTyped = () =>
    new Promise<Event>((resolve) => {
      const check = () => {
        if (typed.length > 0) resolve({ kind: "line", text: typed.shift()! });
        else if (closed) resolve({ kind: "eof" });
        else wake = check;
      };
      check();
    });

  let outcome: TurnOutcome | undefined;
  let running = first;
  try {
    for (;;) {
      if (!running) {
        const other = session.takeOtherGeneration();
        if (other) running = options.follow(other);
      }
      await gate.idle();
      let abort: AbortController | undefined;
      const waits: Promise<Event>[] = [];
      if (running || typed.length > 0 || closed) {
        waits.push(nextTyped());
        if (running) waits.push(running.then((o) => ({ kind: "ended", outcome: o })));
      } else {
        // Idle: the prompt, with whatever was typed before the turn ended still on it.
        abort = new AbortController();
        gate.current = abort;
        // A mode other than the default shows in the prompt ("plan> "): what the next message will run under.
        waits.push(question(rl, options.colors.bold(`${session.mode && session.mode !== DEFAULT_MODE ? session.mode : ""}> `), abort, options.onStop));
        waits.push(options.otherGeneration().then(() => ({ kind: "other" })));
      }
      const event = await Promise.race(waits);
      wake = undefined;
      gate.current = undefined;
      options.onStop(undefined);
      if (event.kind === "ended") {
        outcome = event.outcome;
        running = undefined;
        continue;
      }
      if (event.kind === "other") {
        // A queued message started a generation while the prompt was open: put the prompt away, keeping what was typed.
        const carried = rl.line;
        abort?.abort();
        if (carried) rl.write(carried);
        continue;
      }
      if (event.kind === "aborted") continue;
      if (event.kind === "eof") {
        if (running) outcome = await running;
        return outcome;
      }
      if (event.kind === "interrupt") return { kind: "interrupted" };
      const text = event.text.trim();
      if (text === "") continue;
      if (text.startsWith("/")) {
        const started = await command(options, text, running !== undefined);
        if (started) running = started.turn;
        continue;
      }
      if (running && (await send(options, event.text, "steer")) === "changed") {
        // The generation ended between the keystroke and the server: the line is the next message instead.
        options.note("the agent had just finished: sending it as the next message");
        outcome = await running;
        running = options.runTurn(event.text);
      } else if (!running) running = options.runTurn(event.text);
    }
  } finally {
    rl.off("line", onLine);
    rl.off("close", onClose);
  }
}

/** A line while a generation runs: steer or queue it, and say what the server did ("changed": refused as the generation had ended). */
async function send(options: ReplOptions, text: string, delivery: "steer" | "queue"): Promise<"sent" | "changed" | "failed"> {
  try {
    const held = await options.session.sendWhileRunning(text, delivery);
    if (held === "steer") options.note("steered: it joins at the next model call");
    else if (held === "queued") {
      const { messages } = await options.client.queue.list({ conversationId: options.session.conversation!.id });
      // The list also holds steered lines not yet taken: those are not waiting for a turn.
      options.note(`queued (${messages.filter((m) => m.delivery === "queue").length} waiting)`);
    } else options.note("sent (the agent had finished)");
    return "sent";
  } catch (error) {
    // The view has said why (a stale generation, the queue full…).
    return error instanceof AgentwireRpcError && error.code === ErrorCodes.GENERATION_CHANGED ? "changed" : "failed";
  }
}

/** A slash command; answers a turn it started (/queue TEXT when idle). */
async function command(options: ReplOptions, text: string, running: boolean): Promise<{ turn: Promise<TurnOutcome> } | undefined> {
  const [name, ...rest] = text.split(/\s+/);
  const argument = text.slice(name!.length).trim();
  const conversationId = options.session.conversation!.id;
  const { client, note, fail } = options;
  try {
    switch (name) {
      case "/help": {
        for (const line of REPL_HELP) note(line);
        const { commands, problems } = await client.commands.list({ conversationId });
        if (commands.length > 0) note("Prompt templates:");
        for (const c of commands) {
          const usage = `/${c.name}${c.argumentHint ? ` ${c.argumentHint}` : ""}`;
          note(`  ${usage.padEnd(17)} ${c.description || `(${c.source})`}`);
        }
        for (const p of problems) note(options.colors.yellow(`  skipped ${p.path}: ${p.message}`));
        return undefined;
      }
      case "/queue": {
        if (argument) {
          if (running) await send(options, argument, "queue");
          else return { turn: options.runTurn(argument) };
          return undefined;
        }
        const { messages } = await client.queue.list({ conversationId });
        if (messages.length === 0) note("the queue is empty");
        messages.forEach((m, i) => note(`${i + 1}. [${m.delivery}] ${m.record.content.split("\n")[0]}`));
        return undefined;
      }
      case "/mode":
        await mode(options, argument);
        return undefined;
      case "/rewind":
      case "/unrewind":
      case "/compact":
        if (running) {
          fail(`${name} waits until the agent has finished (Ctrl-C interrupts it)`);
          return undefined;
        }
        break;
      default: {
        // Not built in: a prompt template of the workspace or the user, if one has that name.
        const { commands } = await client.commands.list({ conversationId });
        const template = commands.find((c) => `/${c.name}` === name);
        if (!template) {
          fail(`unknown command ${name} (/help lists them)`);
          return undefined;
        }
        if (running) {
          fail(`${name} waits until the agent has finished (Ctrl-C interrupts it)`);
          return undefined;
        }
        return { turn: options.runTurn({ command: template.name, arguments: argument }) };
      }
    }
    if (name === "/rewind") {
      const n = rest.length === 0 ? 1 : Number(rest[0]);
      if (!Number.isInteger(n) || n < 1 || rest.length > 1) {
        fail("/rewind takes one whole number N ≥ 1: rewind to before the Nth-last user message");
        return undefined;
      }
      const target = await nthLastUserMessage(client, conversationId, n);
      if (!target) {
        fail(n === 1 ? "nothing to rewind: no user message yet" : `nothing to rewind: fewer than ${n} user messages`);
        return undefined;
      }
      note(`rewinding to before: ${target.content.split("\n")[0]!.slice(0, 80)}`);
      const answer = await options.rl.question(options.colors.bold("restore files? [y/N] "));
      const restoreFiles = /^y(es)?$/i.test(answer.trim());
      const result = await client.conversation.rewind({ conversationId, beforeRecordId: target.id, restoreFiles });
      for (const line of rewindLines(result)) note(line);
    } else if (name === "/unrewind") {
      for (const line of rewindLines(await client.conversation.unrewind({ conversationId }))) note(line);
    } else {
      const compacted = await compactAndWait(client, conversationId, argument || undefined);
      // The view printed compaction_completed's figures (tokens before → after) as they came; a failure is said here.
      if (!compacted.ok) fail(`compaction failed: ${compacted.message}`);
    }
  } catch (error) {
    fail(`${name} failed: ${describeError(error)}`);
  }
  return undefined;
}

/** /mode: list the modes (modes.list), marking the current one; /mode NAME switches (an unknown name: the server's message lists the valid ones). */
async function mode(options: ReplOptions, name: string): Promise<void> {
  const { session, note } = options;
  if (name) {
    try {
      await session.setMode(name);
    } catch {
      return; // the view has said why (an unknown mode: the server's message lists the valid ones)
    }
    note(`mode: ${name} (from the next model call)`);
    return;
  }
  const { modes, default: fallback } = await options.client.modes.list();
  const current = session.mode ?? fallback;
  for (const m of modes) note(`${m.id === current ? "*" : " "} ${m.id.padEnd(8)} ${m.description || m.name}`);
}

/** One line; "aborted" when the question was put away (the turn ended, a tool question took the readline). */
function question(rl: Interface, promptText: string, abort: AbortController, onStop: (stop: () => void) => void): Promise<Event> {
  return new Promise((resolve) => {
    const onClose = () => resolve({ kind: "eof" });
    rl.once("close", onClose);
    onStop(() => {
      abort.abort();
      resolve({ kind: "interrupt" });
    });
    rl.question(promptText, { signal: abort.signal }).then(
      (text) => {
        rl.off("close", onClose);
        resolve({ kind: "line", text });
      },
      () => {
        rl.off("close", onClose);
        resolve(abort.signal.aborted ? { kind: "aborted" } : { kind: "eof" });
      },
    );
  });
}
