/**
 * The client side of one chat: open (create or continue) a conversation, and
 * run turns — append the user's message, `step`, answer each tool_pending
 * through a decider, and wait for the generation's one terminal event
 * (generation_complete with final: true, interrupted, or error). No terminal
 * here: what is shown and how tools are decided are passed in, so scripts,
 * the REPL and tests drive the same state machine.
 */
import type {
  AgentwireClient,
  Conversation,
  GenerationWaitResult,
  NotificationMethod,
  NotificationParams,
  ToolPendingNotification,
} from "../../clients/typescript/index.js";
import { randomUUID } from "node:crypto";
import { AgentwireConnectionError, AgentwireRpcError, ErrorCodes } from "../../clients/typescript/index.js";
import { checkFrameSize, frameLimitClose } from "./frame-limit.js";
import type { AttachSpec } from "./chat-options.js";
import type { InputAsker, InputReply } from "./input-prompt.js";
import type { InputRequest } from "../../protocol/input-request.js";

export type ToolDecision =
  | { action: "confirm"; remember?: "conversation" | "workspace" }
  | { action: "skip"; message?: string }
  | { action: "edit"; arguments: Record<string, unknown> }
  | { action: "auto"; count: number };

/** What a turn sends: the user's text, or a template command (commands.list) with the text after its name. */
export type TurnInput = string | { command: string; arguments: string };

/** Decides on tool calls that wait for the user. */
export interface ToolDecider {
  /** `from.subAgent`: the call is a sub-agent's (that conversation's id), asked about here so the parent is not left waiting. */
  decide(call: ToolPendingNotification, from?: { subAgent?: string }): Promise<ToolDecision>;
  /** Give up on an open question (the generation was interrupted); its decide() may resolve skip. */
  cancel?(): void;
}

/** What the session reports; the terminal renderer and the NDJSON writer implement it. */
export interface SessionView {
  notification<N extends NotificationMethod>(method: N, params: NotificationParams<N>): void;
  result(method: string, result: unknown): void;
  requestFailed(method: string, error: unknown): void;
}

/** How a turn ended, in the protocol's words (GenerationOutcome: `completed`, never "complete"): --json prints `kind` as is. */
export type TurnOutcome = { kind: "completed" } | { kind: "interrupted" } | { kind: "error"; message: string; code?: number };

// The outcome words are the protocol's: this fails to compile if either side gains, loses or renames one.
type SameWords<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
const _outcomeWords: SameWords<TurnOutcome["kind"], Extract<GenerationWaitResult, { done: true }>["outcome"]> = true;
void _outcomeWords;

/** Exit status of a command whose last turn ended so (documented in --help). */
export function exitCodeOf(outcome: TurnOutcome): number {
  return outcome.kind === "completed" ? 0 : outcome.kind === "interrupted" ? 130 : 1;
}

export interface ChatSessionOptions {
  view: SessionView;
  decider: ToolDecider;
  /** Passed to every `step`: true runs every tool call without asking, N the first N of the step. */
  autoConfirm?: boolean | number;
  /** Model for each step (overrides the conversation's). */
  model?: string;
  /** A generation of this conversation started that no turn of this session asked for (a queued message's): follow() it. */
  onOtherGeneration?: (generationId: string) => void;
  /** Answers questions (input_requested) of the conversation and its running sub-agents. Absent: they are left open. */
  asker?: InputAsker;
  /** Ask the questions already open when the conversation is opened (state.pendingInputs): only where someone can answer. */
  askPendingInputs?: boolean;
}

/** What message.append answered for a line sent while a generation runs. */
export type HeldDelivery = "appended" | "steer" | "queued";

type Terminal = { method: string; outcome: TurnOutcome };

export class ChatSession {
  #conversation: Conversation | undefined;
  /** Terminal events by generation id; they may arrive before `step`'s answer names the generation. */
  readonly #ended = new Map<string, TurnOutcome>();
  #waiter: { generationId: string; resolve: (outcome: TurnOutcome) => void } | undefined;
  #running: string | undefined;
  /** Between a turn's message.append and its end: a generation_started then is the turn's own. */
  #inTurn = false;
  /** Generations started without a turn of ours, not yet followed. */
  readonly #others: string[] = [];
  #decisions: Promise<void> = Promise.resolve();
  #closedReason: string | undefined;
  #closedCode: number | undefined;
  /** The conversation's mode (settings.mode), as last seen; undefined: the server's default. */
  #mode: string | undefined;
  /** Questions asked or waiting to be, by requestId: aborting one abandons its prompt (input_resolved came). */
  readonly #openInputs = new Map<string, AbortController>();
  /** Sub-agents running under this conversation that this session follows: child conversation id → its generation. */
  readonly #children = new Map<string, string>();
  /** Tool calls and questions already queued (a child's snapshot may list what its events also announce). */
  readonly #seen = new Set<string>();

  constructor(
    private readonly client: AgentwireClient,
    private readonly options: ChatSessionOptions,
  ) {
    client.onAny((method, params) => this.#onNotification(method, params));
    client.onClose((info) => {
      this.#closedCode = info.code;
      this.#closedReason =
        info.code === 1009 ? frameLimitClose(client) : `connection closed (${info.code}${info.reason ? ` ${info.reason}` : ""})`;
      this.#waiter?.resolve({ kind: "error", message: this.#closedReason });
    });
  }

  get conversation(): Conversation | undefined {
    return this.#conversation;
  }

  /** The conversation's mode (settings.mode) as last seen; undefined when it names none (the server's default). */
  get mode(): string | undefined {
    return this.#mode;
  }

  /** Switch the conversation's mode (conversation.update { mode }); the server's -32602 names the valid ones. */
  async setMode(mode: string): Promise<void> {
    const conversationId = this.#requireConversation();
    this.#conversation = await this.#call("conversation.update", () => this.client.conversation.update({ conversationId, mode }));
    this.#mode = this.#conversation.settings?.mode ?? mode;
  }

  /** True while a generation this session started (or follows) has not ended. */
  get generating(): boolean {
    return this.#running !== undefined;
  }

  /** The running generation's id, while generating. */
  get runningGeneration(): string | undefined {
    return this.#running;
  }

  /**
   * Send a line while a generation runs: steer it into the running generation
   * (at its next model call) or queue it (a generation of its own after this
   * one completes). Guarded by the running generation's id, and made
   * idempotent by a fresh clientMessageId.
   */
  async sendWhileRunning(text: string, delivery: "steer" | "queue"): Promise<HeldDelivery> {
    const conversationId = this.#requireConversation();
    const result = await this.#call("message.append", () =>
      this.client.message.append({
        conversationId,
        role: "user",
        content: text,
        delivery,
        ...(this.#running ? { expectedGenerationId: this.#running } : {}),
        clientMessageId: randomUUID(),
      }),
    );
    return result.delivery ?? "appended";
  }

  /** Wait for a generation this session did not start (one a queued message started) to end, answering its tool calls meanwhile. */
  async follow(generationId: string): Promise<TurnOutcome> {
    this.#running = generationId;
    try {
      const outcome = await this.#endOf(generationId);
      await this.#decisions;
      return outcome;
    } finally {
      if (this.#running === generationId) this.#running = undefined;
    }
  }

  /** The next generation started without us that is still running, if any (removed from the list). */
  takeOtherGeneration(): string | undefined {
    while (this.#others.length > 0) {
      const id = this.#others.shift()!;
      if (!this.#ended.has(id)) return id;
    }
    return undefined;
  }

  /** Continue `conversationId`, or create a conversation whose workspace is `workspace`; then subscribe. */
  async open(options: { conversationId?: string; workspace: string; title?: string; model?: string; mode?: string }): Promise<Conversation> {
    if (options.conversationId !== undefined) {
      const got = await this.#call("conversation.get", () => this.client.conversation.get({ conversationId: options.conversationId! }));
      this.#conversation = got.conversation;
      this.#mode = got.conversation.settings?.mode;
      if (options.mode !== undefined) await this.setMode(options.mode);
    } else {
      this.#conversation = await this.#call("conversation.create", () =>
        this.client.conversation.create({
          workspace: options.workspace,
          ...(options.title ? { title: options.title } : {}),
          ...(options.model ? { model: options.model } : {}),
          ...(options.mode ? { settings: { mode: options.mode } } : {}),
        }),
      );
      this.#mode = this.#conversation.settings?.mode;
    }
    const conversationId = this.#conversation.id;
    const { state } = await this.#call("conversation.subscribe", () => this.client.conversation.subscribe({ conversationId }));
    // Questions left open (by an earlier run, or a restart): asked now, where someone can answer.
    if (this.options.askPendingInputs) for (const request of state.pendingInputs ?? []) this.#queueInput(conversationId, request);
    return this.#conversation;
  }

  /** One user message (text, or a prompt template the server expands) and the generation it starts, to its end. Never throws for a request the server refuses. */
  async turn(prompt: TurnInput, attachments: AttachSpec[] = []): Promise<TurnOutcome> {
    const conversationId = this.#requireConversation();
    if (this.#closedReason) return { kind: "error", message: this.#closedReason };
    this.#inTurn = true;
    try {
      await this.#call("message.append", () => {
        const params = {
          conversationId,
          role: "user" as const,
          ...(typeof prompt === "string" ? { content: prompt } : { command: prompt.command, arguments: prompt.arguments }),
          ...(attachments.length > 0
            ? { attachments: attachments.map((a) => ({ type: "file" as const, path: a.path, ...(a.lines ? { lines: a.lines } : {}) })) }
            : {}),
        };
        // Measured before sending: a frame over the limit would close the connection with a bare 1009.
        checkFrameSize(this.client, "message.append", params, "the prompt");
        return this.client.message.append(params);
      });
      const { autoConfirm, model } = this.options;
      const { generationId } = await this.#call("step", () =>
        this.client.step({
          conversationId,
          ...(autoConfirm !== undefined ? { autoConfirm } : {}),
          ...(model !== undefined ? { model } : {}),
        }),
      );
      this.#running = generationId;
      const outcome = await this.#endOf(generationId);
      // Decisions still being sent (a skip racing the end) settle before the next turn.
      await this.#decisions;
      return outcome;
    } catch (error) {
      return { kind: "error", message: describeError(error), code: error instanceof AgentwireRpcError ? error.code : undefined };
    } finally {
      this.#running = undefined;
      this.#inTurn = false;
      if (this.#others.length > 0) this.options.onOtherGeneration?.(this.#others[0]!);
    }
  }

  /** Ask the server to end the running generation; its `interrupted` event ends the turn. */
  async interrupt(): Promise<void> {
    const conversationId = this.#conversation?.id;
    this.options.decider.cancel?.();
    if (!conversationId || !this.#running) return;
    await this.#call("interrupt", () => this.client.interrupt({ conversationId })).catch(() => {});
  }

  #requireConversation(): string {
    if (!this.#conversation) throw new Error("ChatSession: open() first");
    return this.#conversation.id;
  }

  /** A request whose answer (or failure) the view sees. */
  async #call<T>(method: string, send: () => Promise<T>): Promise<T> {
    try {
      const result = await send();
      this.options.view.result(method, result);
      return result;
    } catch (caught) {
      // The close handler has run by now (it fires before the rejection is seen): say what a 1009 meant.
      const error = caught instanceof AgentwireConnectionError && this.#closedCode === 1009 ? new Error(this.#closedReason, { cause: caught }) : caught;
      this.options.view.requestFailed(method, error);
      throw error;
    }
  }

  #endOf(generationId: string): Promise<TurnOutcome> {
    const ended = this.#ended.get(generationId);
    if (ended) return Promise.resolve(ended);
    if (this.#closedReason) return Promise.resolve({ kind: "error", message: this.#closedReason });
    return new Promise((resolve) => {
      this.#waiter = {
        generationId,
        resolve: (outcome) => {
          this.#waiter = undefined;
          resolve(outcome);
        },
      };
    });
  }

  #onNotification(method: string, params: any): void {
    if (params?.conversationId !== undefined && this.#children.has(params.conversationId)) return this.#onChildNotification(method, params);
    // A server-wide notice (an MCP server down or back) has no conversation: it is for whoever is connected.
    const serverWide = method === "notice" && params?.conversationId === undefined;
    if (!serverWide && (!this.#conversation || params?.conversationId !== this.#conversation.id)) return;
    this.options.view.notification(method as NotificationMethod, params);
    if (method === "conversation_updated" && !params.deleted) this.#mode = params.conversation?.settings?.mode;
    if (method === "input_requested") this.#queueInput(params.conversationId, params as InputRequest);
    if (method === "input_resolved") this.#inputEnded(params.requestId);
    if (method === "subagent_started") void this.#followChild(params.childConversationId, params.childGenerationId);
    if (method === "generation_started" && params.generationId !== this.#running && !(this.#inTurn && this.#running === undefined)) {
      // Not this session's turn: a queued message started it (or another client did). The REPL follows it once its own turn is over.
      this.#others.push(params.generationId);
      if (!this.#inTurn && this.#running === undefined) this.options.onOtherGeneration?.(params.generationId);
    }
    if (method === "tool_pending" && !params.autoConfirmed) this.#queueDecision(params as ToolPendingNotification);
    const terminal = terminalOf(method, params);
    if (!terminal) return;
    // An error before the generation got an id (generationId null) belongs to the step in flight.
    const generationId: string | null = params.generationId ?? this.#running ?? null;
    if (generationId === null) return;
    this.#ended.set(generationId, terminal.outcome);
    if (this.#waiter?.generationId === generationId) this.#waiter.resolve(terminal.outcome);
  }

  /**
   * A sub-agent's event: its tool calls and questions are asked here like the
   * parent's (the parent's spawn_agent call waits on them); its end
   * unsubscribes. Its other events are not shown: the parent's tool line
   * stands for the whole sub-agent.
   */
  #onChildNotification(method: string, params: any): void {
    const child: string = params.conversationId;
    if (method === "tool_pending" && !params.autoConfirmed) this.#queueDecision(params as ToolPendingNotification, child);
    if (method === "input_requested") this.#queueInput(child, params as InputRequest, child);
    if (method === "input_resolved") this.#inputEnded(params.requestId);
    if (method === "subagent_started") void this.#followChild(params.childConversationId, params.childGenerationId);
    const terminal = terminalOf(method, params);
    if (terminal && params.generationId === this.#children.get(child)) {
      this.#ended.set(params.generationId, terminal.outcome);
      this.#children.delete(child);
      void this.client.conversation.unsubscribe({ conversationId: child }).catch(() => {});
    }
  }

  /** Subscribe to a sub-agent while it runs, and take up what it already waits on (its events before the subscription are not replayed). */
  async #followChild(child: string, generationId: string): Promise<void> {
    this.#children.set(child, generationId);
    try {
      const { state } = await this.client.conversation.subscribe({ conversationId: child });
      if (state.generationId !== generationId && !state.generating) {
        this.#children.delete(child);
        void this.client.conversation.unsubscribe({ conversationId: child }).catch(() => {});
        return;
      }
      for (const pending of state.pendingTools) {
        this.#queueDecision({ ...pending, conversationId: child, generationId } as unknown as ToolPendingNotification, child);
      }
      for (const request of state.pendingInputs ?? []) this.#queueInput(child, request, child);
    } catch (error) {
      this.#children.delete(child);
      this.options.view.requestFailed("conversation.subscribe", error);
    }
  }

  /** A question, asked in turn with the tool calls; answered with input.respond. */
  #queueInput(conversationId: string, request: InputRequest, subAgent?: string): void {
    const asker = this.options.asker;
    if (!asker || this.#seen.has(`input:${request.requestId}`)) return;
    this.#seen.add(`input:${request.requestId}`);
    const abort = new AbortController();
    this.#openInputs.set(request.requestId, abort);
    this.#decisions = this.#decisions.then(async () => {
      try {
        if (abort.signal.aborted) return; // answered elsewhere while an earlier question was open
        const reply: InputReply | undefined = await asker.ask({ request, ...(subAgent ? { subAgent } : {}) }, abort.signal);
        if (!reply || abort.signal.aborted) return;
        await this.client.input
          .respond({ conversationId, requestId: request.requestId, ...reply })
          .then((result) => this.options.view.result("input.respond", result))
          .catch((error) => {
            // Answered elsewhere in the meantime: nothing to say (input_resolved has said it).
            if (!(error instanceof AgentwireRpcError && error.code === ErrorCodes.INPUT_NOT_PENDING)) this.options.view.requestFailed("input.respond", error);
          });
      } finally {
        this.#openInputs.delete(request.requestId);
      }
    });
  }

  #inputEnded(requestId: string): void {
    this.#seen.add(`input:${requestId}`);
    this.#openInputs.get(requestId)?.abort();
  }

  /** One question at a time, in the order the calls were proposed. */
  #queueDecision(call: ToolPendingNotification, subAgent?: string): void {
    const conversationId = call.conversationId;
    if (subAgent) {
      if (this.#seen.has(`tool:${call.toolCallId}`)) return;
      this.#seen.add(`tool:${call.toolCallId}`);
    }
    this.#decisions = this.#decisions.then(async () => {
      if (this.#ended.has(call.generationId)) return; // the generation ended while an earlier question was open
      const decision = await this.options.decider.decide(call, subAgent ? { subAgent } : undefined);
      if (this.#ended.has(call.generationId)) return;
      const confirm = (d: ToolDecision) =>
        this.#call("tool.confirm", () =>
          this.client.tool.confirm({
            conversationId,
            toolCallId: call.toolCallId,
            action: d.action,
            ...(d.action === "edit" ? { arguments: d.arguments } : {}),
            ...(d.action === "auto" ? { count: d.count } : {}),
            ...(d.action === "confirm" && d.remember ? { remember: d.remember } : {}),
            ...(d.action === "skip" && d.message ? { message: d.message } : {}),
          }),
        );
      await confirm(decision).catch(async (error) => {
        // Reported to the view; a call no longer pending (interrupted, timed out) needs nothing more.
        // A rule the server would not store (-32602 on remember): the user still said run it, so it runs, asked again next time.
        if (decision.action === "confirm" && decision.remember && error instanceof AgentwireRpcError && error.code === ErrorCodes.INVALID_PARAMS) {
          await confirm({ action: "confirm" }).catch(() => {});
        }
      });
    });
  }
}

function terminalOf(method: string, params: any): Terminal | undefined {
  if (method === "generation_complete" && params.final === true) return { method, outcome: { kind: "completed" } };
  if (method === "interrupted") return { method, outcome: { kind: "interrupted" } };
  if (method === "error") return { method, outcome: { kind: "error", message: String(params.message), code: params.code } };
  return undefined;
}

export function describeError(error: unknown): string {
  if (error instanceof AgentwireRpcError) {
    const name = Object.entries(ErrorCodes).find(([, code]) => code === error.code)?.[0];
    // INVALID_PARAMS names the field in data.issues: the one thing a user needs to fix their flag.
    const issues = (error.data as { issues?: { path: string; message: string }[] } | undefined)?.issues ?? [];
    const detail = issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join("; ");
    return `${error.message}${detail && !error.message.includes(detail) ? ` — ${detail}` : ""}${name ? ` (${name})` : ` (code ${error.code})`}`;
  }
  return (error as Error)?.message ?? String(error);
}
