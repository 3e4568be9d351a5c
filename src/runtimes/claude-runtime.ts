/**
 * The Claude runtime: Claude Code, driven through @anthropic-ai/claude-agent-sdk
 * (its `query()`, which runs the Claude Code binary the package ships), one
 * query per turn.
 *
 * Why a query per turn and not one open query per conversation: between
 * turns no process is held (a server with many Claude conversations holds
 * none while they are idle), and every turn after the first resumes the
 * session by id (`resume`), so a restarted server goes on where it was. The
 * model is given per query, which is how a model switch maps; the SDK's
 * `setModel` would only matter inside a turn, where agentwire does not
 * switch. A turn's input stays open until its `result`, because the SDK
 * serves `interrupt()` only in streaming-input mode.
 *
 * Mapping: stream events (includePartialMessages) → text and reasoning
 * deltas; each finished text block → a message; tool_use blocks are
 * announced when Claude asks about them (`canUseTool` → approval, answered
 * allow — with the edited input on an edit — or deny with the user's
 * reason) or, for calls it runs without asking (Read, Glob, …), when their
 * tool_result comes back; AskUserQuestion (a canUseTool question too) →
 * a question to the user; TodoWrite's list → the plan; each model call's
 * usage from the stream; `result` ends the turn.
 *
 * The package's types are not imported (it is optional, so not installed
 * when agentwire is built); the few shapes read here follow its sdk.d.ts
 * (0.3.332).
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { ParsedRuntimeDefinition } from "../../protocol/config-runtimes.js";
import type { PlanEntry } from "../../protocol/plan.js";
import type { TokenUsage } from "../../protocol/usage.js";
import type { ReasoningLevel } from "../llm/provider.js";
import { inheritedEnv } from "./runtime-env.js";
import { findRuntimePackage, type RuntimePackage } from "./runtime-package.js";
import {
  RuntimeError,
  RuntimeUnavailableError,
  type AgentRuntime,
  type RuntimeApprovalAnswer,
  type RuntimeCapabilities,
  type RuntimeEvent,
  type RuntimeSession,
  type RuntimeSessionOptions,
  type RuntimeTurnOptions,
} from "./runtime.js";
import { TurnChannel } from "./turn-channel.js";

/** The package (it pulls in the Claude Code binary of this platform, @anthropic-ai/claude-agent-sdk-<platform>) and the version this mapping was written against. */
export const CLAUDE_PACKAGE: RuntimePackage = { name: "@anthropic-ai/claude-agent-sdk", version: "0.3.332" };

const CAPABILITIES: RuntimeCapabilities = {
  approvals: true,
  // canUseTool may answer allow with updatedInput.
  editApproval: true,
  interrupt: true,
  resume: true,
  setModel: true,
  reasoning: true,
  // Claude takes images in a prompt; agentwire's assets are not handed to it yet.
  images: false,
  temperature: false,
  maxTokens: false,
};

/**
 * Claude Code's own calls that are not the model's, turned off: telemetry,
 * error reports, update checks and the rest of its "nonessential traffic"
 * (documented in Claude Code's settings reference). With them it talks to
 * ANTHROPIC_BASE_URL only.
 */
const QUIET_ENV: Record<string, string> = {
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  DISABLE_TELEMETRY: "1",
  DISABLE_ERROR_REPORTING: "1",
  DISABLE_AUTOUPDATER: "1",
  CLAUDE_AGENT_SDK_CLIENT_APP: "agentwire",
};

/** After asking Claude to stop, how long before its process is closed (runtime-turn.ts allows 2 s for the whole interrupt). */
const INTERRUPT_WAIT_MS = 1200;
/** How much of Claude Code's stderr is kept to explain a failure. */
const STDERR_KEEP = 4000;

type Json = Record<string, any>;

/** The slice of the SDK's Query this file uses. */
interface SdkQuery extends AsyncIterable<Json> {
  interrupt(): Promise<unknown>;
  close(): void;
}
type QueryFunction = (params: { prompt: AsyncIterable<Json>; options: Json }) => SdkQuery;

export class ClaudeRuntime implements AgentRuntime {
  readonly capabilities = CAPABILITIES;
  private sdk: Promise<QueryFunction> | undefined;
  /** Sessions with a turn running (none is kept between turns). */
  private readonly running = new Set<ClaudeSession>();

  constructor(
    readonly name: string,
    private readonly definition: ParsedRuntimeDefinition,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {}

  checkAvailable(): void {
    findRuntimePackage(CLAUDE_PACKAGE, this.definition.packageDir, this.env);
  }

  async open(options: RuntimeSessionOptions): Promise<RuntimeSession> {
    const query = await this.load();
    // A new session gets its id now (the SDK takes it as `sessionId`), so it is stored before the first turn runs.
    return new ClaudeSession(options.resumeId ?? randomUUID(), options.resumeId !== undefined, query, options, this.definition, this.processEnv(), this.running);
  }

  async close(): Promise<void> {
    for (const session of [...this.running]) session.stop("the runtime was closed");
  }

  /** The SDK's `query`, imported from the package directory on first use. */
  private load(): Promise<QueryFunction> {
    this.sdk ??= (async () => {
      const dir = findRuntimePackage(CLAUDE_PACKAGE, this.definition.packageDir, this.env);
      const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Json;
      const entry = String(manifest.exports?.["."]?.default ?? manifest.main ?? "sdk.mjs");
      const module = (await import(pathToFileURL(join(dir, entry)).href)) as { query?: QueryFunction };
      if (typeof module.query !== "function") throw new RuntimeUnavailableError(`${CLAUDE_PACKAGE.name} in ${dir} has no query(): install ${CLAUDE_PACKAGE.name}@${CLAUDE_PACKAGE.version}`);
      return module.query;
    })().catch((error: unknown) => {
      this.sdk = undefined;
      throw error;
    });
    return this.sdk;
  }

  private processEnv(): Record<string, string> {
    // The SDK's `env` replaces Claude Code's environment whole: the inherited few, then what is set here (its key by name).
    const env = inheritedEnv(this.env);
    const home = this.definition.home ?? this.env.CLAUDE_CONFIG_DIR;
    if (home) env.CLAUDE_CONFIG_DIR = home;
    // The SDK adds /v1/messages itself.
    if (this.definition.baseUrl) env.ANTHROPIC_BASE_URL = this.definition.baseUrl.replace(/\/v1\/?$/, "");
    const keyEnv = this.definition.apiKeyEnv;
    if (keyEnv && this.env[keyEnv] !== undefined) env.ANTHROPIC_API_KEY = this.env[keyEnv]!;
    return { ...env, ...QUIET_ENV };
  }
}

/** Claude's effort for agentwire's reasoning level ("off" turns thinking off instead). */
function thinkingOptions(level: ReasoningLevel | undefined): Json {
  if (level === undefined) return {};
  if (level === "off") return { thinking: { type: "disabled" } };
  return { effort: level };
}

class ClaudeSession implements RuntimeSession {
  private readonly channel = new TurnChannel();
  private query: SdkQuery | undefined;
  private endInput: (() => void) | undefined;
  private interrupting = false;
  /** Whether this turn's query got as far as Claude Code's init (so a failure is not a missing session). */
  private started = false;
  /** Set when the session to resume was not found: the turn runs again as a new session (once). */
  private restart = false;
  private retried = false;
  private reasoning = "";
  private stderr = "";
  /** The running model call's usage from its message_start. */
  private callUsage: Json | undefined;
  /** Whether this turn's usage came per model call (then `result`'s total is not counted again). */
  private usageCounted = false;

  constructor(
    readonly sessionId: string,
    /** Whether Claude Code has the session on disk already (then a turn resumes it). */
    private resumable: boolean,
    private readonly queryFn: QueryFunction,
    private readonly options: RuntimeSessionOptions,
    private readonly definition: ParsedRuntimeDefinition,
    private readonly env: Record<string, string>,
    private readonly running: Set<ClaudeSession>,
  ) {}

  turn(options: RuntimeTurnOptions): AsyncIterable<RuntimeEvent> {
    if (this.channel.running) throw new RuntimeError("a turn is already running in this Claude session");
    const events = this.channel.begin();
    this.reasoning = "";
    this.stderr = "";
    this.interrupting = false;
    this.restart = false;
    this.retried = false;
    this.usageCounted = false;
    this.callUsage = undefined;
    this.running.add(this);
    void this.run(options);
    return events;
  }

  async interrupt(): Promise<void> {
    const query = this.query;
    if (!this.channel.running || !query) return;
    this.interrupting = true;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<"late">((resolve) => {
      timer = setTimeout(() => resolve("late"), INTERRUPT_WAIT_MS);
    });
    const ended = await Promise.race([
      query
        .interrupt()
        .catch(() => undefined)
        .then(() => this.channel.wait()),
      late,
    ]);
    clearTimeout(timer);
    // Claude did not end its turn when asked: its process goes (the session resumes from its transcript next time).
    if (ended === "late") this.stop();
  }

  wait(): Promise<void> {
    return this.channel.wait();
  }

  /** End the running turn now, closing its process: interrupted when asked to stop, else failed with `reason`. */
  stop(reason?: string): void {
    this.query?.close();
    this.finish(this.interrupting || reason === undefined ? { type: "done", outcome: "interrupted" } : { type: "done", outcome: "failed", error: reason });
  }

  /**
   * The turn, once more as a new session under the same id when Claude Code
   * has no transcript of the session it was to resume (its home was cleared
   * or moved, or its first turn died before Claude wrote anything): the
   * conversation keeps its stored id, and the runtime its own context from
   * here on.
   */
  private async run(options: RuntimeTurnOptions): Promise<void> {
    await this.attempt(options);
    if (this.restart && this.channel.running) {
      this.restart = false;
      this.resumable = false;
      await this.attempt(options);
    }
  }

  private async attempt(options: RuntimeTurnOptions): Promise<void> {
    this.started = false;
    this.stderr = "";
    const inputEnded = new Promise<void>((resolve) => {
      this.endInput = resolve;
    });
    const sessionId = this.sessionId;
    async function* input(): AsyncIterable<Json> {
      yield { type: "user", message: { role: "user", content: options.prompt }, parent_tool_use_id: null, session_id: sessionId };
      // Open until the turn's result: interrupt() needs streaming input.
      await inputEnded;
    }
    const instructions = this.options.instructions;
    const never = this.definition.approvalPolicy === "never";
    try {
      const query = this.queryFn({
        prompt: input(),
        options: {
          cwd: this.options.cwd,
          model: options.model,
          ...(this.resumable ? { resume: this.sessionId } : { sessionId: this.sessionId }),
          systemPrompt: { type: "preset", preset: "claude_code", ...(instructions ? { append: instructions } : {}) },
          // "never" is not bypassPermissions: Claude Code refuses that when run as root; every question is allowed here instead.
          permissionMode: "default",
          canUseTool: (name: string, input: Record<string, unknown>, context: Json) =>
            name === "AskUserQuestion" ? this.question(input, context) : never ? this.allow(name, input, context) : this.ask(name, input, context),
          includePartialMessages: true,
          ...thinkingOptions(options.reasoning),
          env: this.env,
          stderr: (data: string) => {
            this.stderr = (this.stderr + data).slice(-STDERR_KEEP);
          },
        },
      });
      this.query = query;
      for await (const message of query) {
        this.message(message);
        if (!this.channel.running || this.restart) break;
      }
      if (this.restart) return this.endInput?.();
      this.finish(this.interrupting ? { type: "done", outcome: "interrupted" } : { type: "done", outcome: "failed", error: this.failure("Claude Code ended without finishing the turn") });
    } catch (error) {
      if (this.restart) return this.endInput?.();
      this.finish(this.interrupting ? { type: "done", outcome: "interrupted" } : { type: "done", outcome: "failed", error: this.failure((error as Error).message) });
    }
  }

  private failure(message: string): string {
    const said = this.stderr.trim().split("\n").slice(-3).join(" ");
    return said ? `${message} (${said})` : message;
  }

  private finish(done: RuntimeEvent & { type: "done" }): void {
    this.channel.finish(done, () => {
      this.query = undefined;
      this.endInput?.();
      this.running.delete(this);
    });
  }

  private emit(event: RuntimeEvent): void {
    this.channel.emit(event);
  }

  private announce(id: string): void {
    this.channel.announce(id);
  }

  private get calls() {
    return this.channel.calls;
  }

  private message(message: Json): void {
    // A sub-agent's own frames (Claude's Task tool) stay inside its call.
    if (message.parent_tool_use_id) return;
    switch (message.type) {
      case "system":
        // Claude Code runs the session: later turns resume it.
        if (message.subtype === "init") {
          this.started = true;
          this.resumable = true;
        }
        return;
      case "stream_event":
        return this.streamEvent(message.event as Json);
      case "assistant":
        return this.assistant(message.message as Json);
      case "user":
        return this.toolResults(message.message as Json);
      case "tool_progress":
        return this.announce(String(message.tool_use_id));
      case "result":
        return this.result(message);
      default:
        return;
    }
  }

  private streamEvent(event: Json): void {
    // Each model call's usage: input at message_start, output at message_delta (one usage event per call).
    if (event?.type === "message_start") {
      this.callUsage = (event.message as Json | undefined)?.usage as Json | undefined;
      return;
    }
    if (event?.type === "message_delta" && event.usage) {
      this.usageCounted = true;
      this.emit({ type: "usage", usage: usageOf({ ...this.callUsage, ...(event.usage as Json) }) });
      this.callUsage = undefined;
      return;
    }
    if (event?.type !== "content_block_delta") return;
    const delta = event.delta as Json;
    if (delta.type === "text_delta") this.emit({ type: "text", delta: String(delta.text ?? "") });
    else if (delta.type === "thinking_delta") {
      const piece = String(delta.thinking ?? "");
      this.reasoning += piece;
      this.emit({ type: "reasoning", delta: piece });
    }
  }

  private assistant(message: Json): void {
    for (const block of (message?.content ?? []) as Json[]) {
      if (block.type === "thinking" && this.reasoning === "" && typeof block.thinking === "string") this.reasoning = block.thinking;
      else if (block.type === "text") {
        const reasoning = this.reasoning;
        this.reasoning = "";
        this.emit({ type: "message", text: String(block.text ?? ""), ...(reasoning ? { reasoning } : {}) });
      } else if (block.type === "tool_use" && !this.calls.has(block.id)) {
        this.calls.set(String(block.id), { toolName: String(block.name), arguments: isObject(block.input) ? block.input : {}, announced: false });
        // Its to-do list, whole: the conversation's plan.
        if (block.name === "TodoWrite" && isObject(block.input)) this.emit({ type: "plan", entries: todosOf(block.input.todos) });
      }
    }
  }

  private toolResults(message: Json): void {
    const content = message?.content;
    if (!Array.isArray(content)) return;
    for (const block of content as Json[]) {
      if (block.type !== "tool_result") continue;
      const id = String(block.tool_use_id);
      if (!this.calls.has(id)) this.calls.set(id, { toolName: "tool", arguments: {}, announced: false });
      this.announce(id);
      this.emit({ type: "tool_finished", callId: id, success: block.is_error !== true, result: resultText(block.content) });
    }
  }

  private result(message: Json): void {
    if (message.usage && !this.usageCounted) this.emit({ type: "usage", usage: usageOf(message.usage as Json) });
    if (this.interrupting) return this.finish({ type: "done", outcome: "interrupted" });
    if (message.subtype === "success" && message.is_error !== true) return this.finish({ type: "done", outcome: "completed" });
    const said = typeof message.result === "string" && message.result ? message.result : Array.isArray(message.errors) ? message.errors.join("; ") : "";
    // Refused before it started: the session to resume is not on disk (the message is Claude Code's own).
    if (!this.started && this.resumable && !this.retried && /No conversation found with session ID/i.test(said)) {
      this.retried = true;
      this.restart = true;
      return;
    }
    this.finish({ type: "done", outcome: "failed", error: this.failure(said || `the turn ended: ${String(message.subtype)}`) });
  }

  /**
   * AskUserQuestion: its questions go to the user (input_requested), and the
   * answers come back as the SDK takes them — the tool's input with
   * `answers` (question text → the label(s) picked, or the text typed). A
   * declined or cancelled question denies the call.
   */
  private question(input: Record<string, unknown>, context: Json): Promise<Json> {
    const callId = String(context.toolUseID ?? randomUUID());
    // Shown as a call running (its tool_result ends it), so the question's toolCallId names a record.
    if (!this.calls.has(callId)) this.calls.set(callId, { toolName: "AskUserQuestion", arguments: input, announced: false });
    this.announce(callId);
    const asked = (Array.isArray(input.questions) ? input.questions : []) as Json[];
    return new Promise((resolve) => {
      let answered = false;
      const respond = (answers: Record<string, string[]> | null) => {
        if (answered) return;
        answered = true;
        if (!answers) return resolve({ behavior: "deny", message: "The user did not answer." });
        const byText = Object.fromEntries(asked.map((q, i) => [String(q.question ?? ""), (answers[String(i)] ?? []).join(", ")]));
        resolve({ behavior: "allow", updatedInput: { ...input, answers: byText } });
      };
      (context.signal as AbortSignal | undefined)?.addEventListener("abort", () => respond(null), { once: true });
      this.emit({
        type: "question",
        question: {
          callId,
          questions: asked.map((q, i) => ({
            id: String(i),
            question: [q.header, q.question].filter((part) => typeof part === "string" && part !== "").join(": ") || "?",
            ...(Array.isArray(q.options) && q.options.length > 0 ? { choices: (q.options as Json[]).map((o) => String(o.label)), ...(q.multiSelect ? { multiple: true } : {}) } : {}),
          })),
          respond,
        },
      });
    });
  }

  /** canUseTool under approvalPolicy "never": allowed at once, and shown as running (a read-only mirror). */
  private allow(toolName: string, input: Record<string, unknown>, context: Json): Promise<Json> {
    const callId = String(context.toolUseID ?? randomUUID());
    if (!this.calls.has(callId)) this.calls.set(callId, { toolName, arguments: input, announced: false });
    this.announce(callId);
    return Promise.resolve({ behavior: "allow", updatedInput: input });
  }

  /** canUseTool: Claude asks before running a call; the answer waits for tool.confirm (or the abort of the turn). */
  private ask(toolName: string, input: Record<string, unknown>, context: Json): Promise<Json> {
    const callId = String(context.toolUseID ?? randomUUID());
    const call = this.calls.get(callId);
    if (call) call.announced = true;
    else this.calls.set(callId, { toolName, arguments: input, announced: true });
    const reason = typeof context.decisionReason === "string" ? context.decisionReason : typeof context.title === "string" ? context.title : undefined;
    return new Promise((resolve) => {
      let answered = false;
      const respond = (decision: "accept" | "decline" | "cancel", answer?: RuntimeApprovalAnswer) => {
        if (answered) return;
        answered = true;
        if (decision === "accept") resolve({ behavior: "allow", updatedInput: answer?.arguments ?? input });
        else if (decision === "decline") resolve({ behavior: "deny", message: answer?.message ? `The user declined this call: ${answer.message}` : "The user declined this call." });
        else resolve({ behavior: "deny", message: "The user stopped the turn.", interrupt: true });
      };
      (context.signal as AbortSignal | undefined)?.addEventListener("abort", () => respond("cancel"), { once: true });
      this.emit({ type: "approval", approval: { callId, toolName, arguments: input, ...(reason ? { reason } : {}), respond } });
    });
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A tool_result's content as text (a string, or text blocks; other blocks are named). */
function resultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((block: Json) => (block?.type === "text" ? String(block.text ?? "") : `[${String(block?.type ?? "content")}]`)).join("\n");
}

/** TodoWrite's todos ({content, status, activeForm}) as agentwire's plan entries. */
function todosOf(todos: unknown): PlanEntry[] {
  if (!Array.isArray(todos)) return [];
  return todos.map((todo: Json) => ({
    content: String(todo?.content ?? ""),
    status: todo?.status === "completed" ? "completed" : todo?.status === "in_progress" ? "in_progress" : "pending",
  }));
}

/** A model call's or the turn's usage (Anthropic's: input counted apart from the cache's reads and writes). */
function usageOf(usage: Json): TokenUsage {
  const input = Number(usage.input_tokens ?? 0);
  const read = Number(usage.cache_read_input_tokens ?? 0);
  const written = Number(usage.cache_creation_input_tokens ?? 0);
  const output = Number(usage.output_tokens ?? 0);
  const thinking = usage.output_tokens_details?.thinking_tokens;
  return {
    promptTokens: input + read + written,
    cachedPromptTokens: read,
    cacheWritePromptTokens: written,
    completionTokens: output,
    reasoningTokens: typeof thinking === "number" ? thinking : null,
    totalTokens: input + read + written + output,
  };
}
