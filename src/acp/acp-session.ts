/**
 * One ACP session: one agentwire conversation (the session id is the
 * conversation id). It turns the conversation's events into
 * `session/update`s, runs prompt turns (message.append + step, resolved by
 * the generation's one terminal event), and asks the editor about each tool
 * call that waits for a decision (session/request_permission → tool.confirm).
 *
 * Other clients may drive the same conversation (a web client approving a
 * call, a bot appending a message): their effects arrive as the same events,
 * and a permission request the editor still shows for a call decided
 * elsewhere is withdrawn ($/cancel_request).
 */
import type * as acp from "@agentclientprotocol/sdk";
import { RequestError } from "@agentclientprotocol/sdk";
import type { AgentwireClient, Conversation, InputRequestedNotification, MessageAppendParams, MessageAppendResult, ToolPendingNotification } from "../../clients/typescript/index.js";
import { AgentwireRpcError, ErrorCodes } from "../../clients/typescript/index.js";
import { checkFrameSize, FrameTooLargeError } from "../chat/frame-limit.js";
import { elicitationOf, respondOf } from "./input-requests.js";
import { promptMessage } from "./prompt-content.js";
import { chunk, compactionUpdate, noticeUpdate, planUpdate, usageUpdate } from "./session-updates.js";
import { executingUpdate, settledUpdate, textContent, toolCallOf, MAX_TOOL_TEXT_CHARS } from "./tool-call-updates.js";
import { type UnsentBytes, UpdateOutbox } from "./update-outbox.js";

/** The permission options offered for every call; ids are what the editor answers with. */
export const PERMISSION_OPTIONS: acp.PermissionOption[] = [
  { optionId: "allow_once", name: "Allow", kind: "allow_once" },
  { optionId: "allow_always", name: "Always allow", kind: "allow_always" },
  { optionId: "reject_once", name: "Reject", kind: "reject_once" },
  { optionId: "reject_always", name: "Always reject", kind: "reject_always" },
];

type StopReason = acp.StopReason;

/** Shortest time between two updates of one running tool's output. */
const OUTPUT_INTERVAL_MS = 100;
type Ending = { stopReason: StopReason } | { error: RequestError };

export interface SessionLink {
  client: AgentwireClient;
  /** The ACP side: notifications and requests to the editor. */
  editor: acp.AgentContext;
  log(message: string): void;
  /** The editor advertised form elicitation (clientCapabilities.elicitation.form) in initialize. */
  canElicit(): boolean;
  /** What the editor advertised in initialize's clientCapabilities.session (notices, compaction). */
  shows(kind: "notices" | "compaction"): boolean;
  /** The session's config options for the conversation as it is now (config-options.ts). */
  configOptions(conversation: Conversation): Promise<acp.SessionConfigOption[]>;
  /** The updates waiting for the editor, all sessions together, and their bound. */
  unsent: UnsentBytes;
}

export class AcpSession {
  /** Every update goes out through it, in the order the events came, bounded when the editor stops reading. */
  readonly #outbox: UpdateOutbox;
  /** Terminal outcomes by generation id: they may arrive before step's answer names the generation. */
  readonly #ended = new Map<string, Ending>();
  #turn:
    | {
        generationId?: string;
        resolve: (ending: Ending) => void;
        maxIterations: boolean;
        cancelled: boolean;
        steered?: boolean;
        /** The prompt's message, and whether a generation has taken it yet (a held message is stored when one does). */
        recordId?: string;
        taken?: boolean;
        /** The message was taken as a queued one before its generation started: the next generation_started is the prompt's. */
        followNext?: boolean;
      }
    | undefined;
  /** The generation running now, as its events told (a queued message is taken by the one that starts for it). */
  #running: string | undefined;
  /** Open permission requests by tool call id, withdrawn when the call is decided elsewhere. */
  readonly #asking = new Map<string, AbortController>();
  /**
   * Calls the editor has answered: a call left pending by a restart is offered again by the generation
   * its tool.confirm starts, which must not ask a second time.
   */
  readonly #answered = new Set<string>();
  /** Tool calls the editor has been sent a tool_call for (bounded: the oldest are forgotten). */
  readonly #shown = new Set<string>();
  /** User messages this session appended (not echoed back as user_message_chunk). */
  readonly #ownMessages = new Set<string>();
  /** Output of running tools, by call id (the tail only), and the timer that sends it. */
  readonly #output = new Map<string, { text: string; timer?: NodeJS.Timeout }>();
  #closed = false;
  /** The conversation has a title (else the first prompt's first line becomes it, as `agentwire chat` does). */
  #titled: boolean;
  /** The mode the editor was last told of, and the server's default (a conversation without settings.mode is in it). */
  #mode: string | undefined;
  readonly #defaultMode: string | undefined;
  /** The model and reasoning effort the editor was last told of ("model|reasoning"): a change made elsewhere is a config_option_update. */
  #config: string;
  /** Compactions running, by generation id: the id their compaction_update carries. */
  readonly #compacting = new Map<string, string>();

  constructor(
    readonly conversationId: string,
    readonly workspace: string,
    private readonly link: SessionLink,
    initial: { title?: string; mode?: string; defaultMode?: string; conversation?: Conversation } = {},
  ) {
    this.#config = initial.conversation ? AcpSession.#configKey(initial.conversation) : "";
    this.#titled = (initial.title ?? "") !== "";
    this.#mode = initial.mode;
    this.#defaultMode = initial.defaultMode;
    this.#outbox = new UpdateOutbox(
      (update) => link.editor.notify("session/update", { sessionId: this.sessionId, update }).catch((error: Error) => link.log(`session/update not sent: ${error.message}`)),
      link.unsent,
      (unsent) => this.#overflow(unsent),
    );
  }

  /**
   * The editor stopped reading and the updates waiting for it passed the bound: a generation the
   * editor started is interrupted (it would run on unseen), and from here streamed output is dropped
   * with a marker until it reads again.
   */
  #overflow(unsent: number): void {
    const mine = this.runsOwnGeneration && !this.#turn!.cancelled;
    this.link.log(
      `the editor has not read ${unsent} bytes of session updates (bound ${this.link.unsent.limit}): ` +
        (mine ? `interrupting session ${this.sessionId}'s generation; ` : "") +
        `streamed output of session ${this.sessionId} is dropped until it reads again`,
    );
    if (mine) void this.cancel();
  }

  static #configKey(conversation: Conversation): string {
    return `${conversation.model ?? ""}|${conversation.settings.reasoning ?? ""}`;
  }

  get sessionId(): string {
    return this.conversationId;
  }

  get prompting(): boolean {
    return this.#turn !== undefined;
  }

  /** A prompt runs whose generation this editor started (not one it was steered into: that is another client's). */
  get runsOwnGeneration(): boolean {
    return this.#turn !== undefined && !this.#turn.steered;
  }

  /** Sends an update after every earlier one; never rejects (a closed editor connection ends everything anyway). */
  send(update: acp.SessionUpdate): Promise<void> {
    return this.#outbox.push(update);
  }

  /** The editor knows this call (a tool_call was sent for it, or replayed). */
  markShown(toolCallId: string): void {
    this.#shown.add(toolCallId);
    if (this.#shown.size > 1000) this.#shown.delete(this.#shown.values().next().value!);
  }

  /** The updates sent so far have left. */
  flushed(): Promise<void> {
    return this.#outbox.flushed();
  }

  async prompt(prompt: acp.ContentBlock[]): Promise<acp.PromptResponse> {
    if (this.#turn) throw RequestError.invalidRequest({ sessionId: this.sessionId }, "a prompt is already running in this session; send session/cancel first");
    const { client } = this.link;
    const ending = new Promise<Ending>((resolve) => (this.#turn = { resolve, maxIterations: false, cancelled: false }));
    try {
      const message = await promptMessage(prompt, { client, conversationId: this.conversationId, workspace: this.workspace });
      const command = /^\/([A-Za-z0-9][A-Za-z0-9_-]{0,63})(?:\s+([\s\S]*))?$/.exec(message.content.trim());
      const known = command ? (await client.commands.list({ conversationId: this.conversationId })).commands.some((c) => c.name === command[1]) : false;
      const params = {
        conversationId: this.conversationId,
        role: "user" as const,
        ...(known ? { command: command![1]!, arguments: (command![2] ?? "").trim() } : { content: message.content }),
        ...(message.attachments.length > 0 ? { attachments: message.attachments } : {}),
      };
      checkFrameSize(client, "message.append", params, "the prompt");
      const record = await this.#append(params);
      // Cancelled before the generation started: the message stays, no step runs.
      if (this.#turn!.cancelled) return { stopReason: "cancelled" };
      const firstLine = message.content.trim().split("\n")[0]!.slice(0, 80);
      if (!this.#titled && firstLine) {
        this.#titled = true;
        client.conversation.update({ conversationId: this.conversationId, title: firstLine }).catch((error: Error) => this.link.log(`title not set: ${error.message}`));
      }
      const generationId = await this.#generationFor(record, params);
      if (generationId !== undefined) this.#turn!.generationId = generationId;
      const early = generationId === undefined ? undefined : this.#ended.get(generationId);
      if (early) this.#settle(generationId!, early);
      // A cancel that came while step was on its way found nothing to interrupt yet.
      else if (this.#turn!.cancelled) await this.cancel();
      const end = await ending;
      await this.flushed();
      // After session/cancel the answer is cancelled, whatever else ended the generation (the spec's rule).
      if (this.#turn!.cancelled) return { stopReason: "cancelled" };
      if ("error" in end) throw end.error;
      return { stopReason: end.stopReason };
    } catch (error) {
      throw acpError(error, this.sessionId);
    } finally {
      this.#turn = undefined;
    }
  }

  /** Append the prompt's message and note it as this turn's (stored at once, or held while a generation runs). */
  async #append(params: MessageAppendParams): Promise<MessageAppendResult> {
    const record = await this.link.client.message.append(params);
    this.#ownMessages.add(record.id);
    this.#turn!.recordId = record.id;
    this.#turn!.taken = record.delivery === undefined;
    return record;
  }

  /**
   * The generation that answers the message just appended: a new step, or, when a generation was
   * already running (another client's, or one a restart's pending call resumed), that one, which the
   * message was steered into and which makes one more model call for it. A held message whose
   * generation ended before it was taken waits as a queued one: it is taken back and sent to a step
   * of our own, unless the server's queue already took it — then the generation started for it is the
   * prompt's, learnt from the events (undefined here).
   */
  async #generationFor(record: MessageAppendResult, params: MessageAppendParams, tries = 3): Promise<string | undefined> {
    const { client } = this.link;
    const running = async () => (await client.conversation.get({ conversationId: this.conversationId })).state.generationId;
    if (record.delivery !== undefined) {
      const id = await running();
      this.#turn!.steered = true;
      if (id) return id;
      const { removed } = await client.queue.remove({ conversationId: this.conversationId, recordId: record.id });
      if (!removed || tries === 0) return this.#turn!.generationId;
      this.#turn!.steered = false;
      return this.#generationFor(await this.#append(params), params, tries - 1);
    }
    try {
      return (await client.step({ conversationId: this.conversationId })).generationId;
    } catch (error) {
      // One started between the append and the step: it sees the message too.
      const id = error instanceof AgentwireRpcError && error.code === ErrorCodes.GENERATION_IN_PROGRESS ? await running() : null;
      if (!id) throw error;
      this.#turn!.steered = true;
      return id;
    }
  }

  /** session/cancel: end the generation; open permission requests are withdrawn (interrupt skips their calls). */
  async cancel(): Promise<void> {
    if (this.#turn) this.#turn.cancelled = true;
    for (const asking of this.#asking.values()) asking.abort();
    this.#asking.clear();
    await this.link.client.interrupt({ conversationId: this.conversationId }).catch((error: Error) => this.link.log(`interrupt failed: ${error.message}`));
  }

  close(): void {
    this.#closed = true;
    for (const output of this.#output.values()) clearTimeout(output.timer);
    this.#output.clear();
    for (const asking of this.#asking.values()) asking.abort();
    this.#asking.clear();
    this.#turn?.resolve({ stopReason: "cancelled" });
    this.#outbox.clear();
  }

  /** An agentwire notification of this conversation. */
  onEvent(method: string, params: any): void {
    if (this.#closed) return;
    switch (method) {
      case "generation_progress":
        void this.send(chunk(params.kind, params.delta));
        return;
      case "generation_started":
        this.#running = params.generationId;
        if (this.#turn?.followNext) {
          this.#turn.followNext = false;
          this.#turn.generationId = params.generationId;
        }
        return;
      case "message_added":
        if (this.#turn && params.record.id === this.#turn.recordId) {
          this.#turn.taken = true;
          // Steered too late for the generation it was steered into, the message waited as a queued one and the
          // generation started for it took it: the prompt follows that one.
          if (params.delivery === "queued") {
            if (this.#running) this.#turn.generationId = this.#running;
            else this.#turn.followNext = true;
          }
        }
        // Someone else's message (another client, a queued one): the editor shows it as the user's.
        if (params.record.role === "user" && !this.#ownMessages.delete(params.record.id) && params.record.content) {
          void this.send({ sessionUpdate: "user_message_chunk", content: { type: "text", text: params.record.content }, messageId: params.record.id });
        }
        if (params.record.notice === "max_iterations" && this.#turn) this.#turn.maxIterations = true;
        return;
      case "tool_pending":
        // A call the editor already knows (replayed by session/load, offered again after a restart) is updated, not added twice.
        if (this.#shown.has(params.toolCallId)) void this.send({ sessionUpdate: "tool_call_update", ...toolCallOf(params, this.workspace) });
        else {
          this.markShown(params.toolCallId);
          void this.send({ sessionUpdate: "tool_call", ...toolCallOf(params, this.workspace) });
        }
        if (!params.autoConfirmed && !this.#answered.has(params.toolCallId)) void this.#ask(params as ToolPendingNotification);
        return;
      case "tool_executing":
        this.#withdraw(params.toolCallId);
        void this.send({ sessionUpdate: "tool_call_update", ...executingUpdate(params, this.workspace) });
        return;
      case "tool_output": {
        // Each update replaces the shown output: at most one per OUTPUT_INTERVAL_MS, however chatty the tool.
        const output = this.#output.get(params.toolCallId) ?? { text: "" };
        output.text = (output.text + params.chunk).slice(-MAX_TOOL_TEXT_CHARS);
        this.#output.set(params.toolCallId, output);
        output.timer ??= setTimeout(() => {
          output.timer = undefined;
          void this.send({ sessionUpdate: "tool_call_update", toolCallId: params.toolCallId, content: [textContent(output.text)] });
        }, OUTPUT_INTERVAL_MS);
        return;
      }
      case "tool_completed":
      case "tool_failed":
      case "tool_skipped":
        this.#withdraw(params.record.toolCallId);
        // The settled update shows the result: output not sent yet is not sent after it.
        clearTimeout(this.#output.get(params.record.toolCallId)?.timer);
        this.#output.delete(params.record.toolCallId);
        if (params.reason === "max_iterations" && this.#turn) this.#turn.maxIterations = true;
        void this.send({ sessionUpdate: "tool_call_update", ...settledUpdate(params.record, this.workspace, params.reason) });
        return;
      case "input_requested":
        if (this.link.canElicit()) void this.#elicit(params as InputRequestedNotification);
        // An editor that cannot show a form at least shows the question; another client can answer it.
        else void this.send(chunk("text", `\n\n> ${params.question}${params.choices ? ` (${params.choices.join(" / ")})` : ""}\n\n`));
        return;
      case "input_resolved":
        this.#withdraw(`input:${params.requestId}`);
        return;
      case "plan_updated":
        void this.send(planUpdate(params.entries));
        return;
      case "usage_updated": {
        const update = usageUpdate(params);
        if (update) void this.send(update);
        return;
      }
      case "conversation_updated": {
        if (params.deleted) return;
        void this.send({ sessionUpdate: "session_info_update", title: params.conversation.title || null, updatedAt: params.conversation.updatedAt });
        const mode = params.conversation.settings.mode ?? this.#defaultMode;
        if (mode !== undefined && mode !== this.#mode) {
          this.#mode = mode;
          void this.send({ sessionUpdate: "current_mode_update", currentModeId: mode });
        }
        // The model or the reasoning effort changed (another client, or this editor's own set_config_option: then it repeats the answer).
        const config = AcpSession.#configKey(params.conversation);
        if (config !== this.#config) {
          this.#config = config;
          this.link
            .configOptions(params.conversation)
            .then((configOptions) => this.send({ sessionUpdate: "config_option_update", configOptions }))
            .catch((error: Error) => this.link.log(`config options: ${error.message}`));
        }
        return;
      }
      case "notice":
        void this.send(noticeUpdate(params, this.link.shows("notices")));
        return;
      case "compaction_started": {
        const compactionId = `compaction-${params.seq}`;
        this.#compacting.set(params.generationId, compactionId);
        void this.send(compactionUpdate({ compactionId, status: "in_progress" }, this.link.shows("compaction")));
        return;
      }
      case "compaction_completed": {
        const compactionId = this.#compacting.get(params.generationId) ?? params.recordId;
        this.#compacting.delete(params.generationId);
        void this.send(compactionUpdate({ compactionId, status: "completed", summary: params.record.summary }, this.link.shows("compaction")));
        return;
      }
      case "generation_complete":
        if (params.final) this.#end(params.generationId, { stopReason: this.#stopReasonOf(params.finishReason) });
        return;
      case "interrupted":
        this.#compactionEnded(params.generationId, "cancelled");
        this.#end(params.generationId, { stopReason: "cancelled" });
        return;
      case "error": {
        const generationId = params.generationId ?? this.#turn?.generationId;
        if (generationId) this.#compactionEnded(generationId, "failed", params.message);
        if (generationId) this.#end(generationId, { error: RequestError.internalError({ code: params.code, status: params.status }, params.message) });
        return;
      }
    }
  }

  /** A compaction its generation's end cut short. */
  #compactionEnded(generationId: string, status: "cancelled" | "failed", error?: string): void {
    const compactionId = this.#compacting.get(generationId);
    if (compactionId === undefined) return;
    this.#compacting.delete(generationId);
    void this.send(compactionUpdate({ compactionId, status, ...(error !== undefined ? { error } : {}) }, this.link.shows("compaction")));
  }

  #stopReasonOf(finishReason: string | null): StopReason {
    if (this.#turn?.maxIterations) return "max_turn_requests";
    if (finishReason === "length") return "max_tokens";
    if (finishReason === "content_filter") return "refusal";
    return "end_turn";
  }

  #end(generationId: string, ending: Ending): void {
    this.#ended.set(generationId, ending);
    if (this.#ended.size > 100) this.#ended.delete(this.#ended.keys().next().value!);
    if (this.#running === generationId) this.#running = undefined;
    if (this.#turn?.generationId === generationId) this.#settle(generationId, ending);
  }

  /**
   * The prompt's generation ended. A message steered into a generation that then completed without
   * taking it is not answered yet: it waits as a queued message and the next generation takes it
   * (message_added, delivery "queued"), so the prompt waits for that one. After an interrupt or an
   * error the queue waits too, and the prompt ends with that ending.
   */
  #settle(generationId: string, ending: Ending): void {
    const turn = this.#turn;
    if (!turn || turn.generationId !== generationId) return;
    if (turn.steered && !turn.taken && "stopReason" in ending && ending.stopReason !== "cancelled") return;
    turn.resolve(ending);
  }

  #withdraw(toolCallId: string): void {
    this.#asking.get(toolCallId)?.abort();
    this.#asking.delete(toolCallId);
  }

  /** session/request_permission for a call waiting for tool.confirm; the answer becomes the decision. */
  async #ask(call: ToolPendingNotification): Promise<void> {
    const asking = new AbortController();
    this.#asking.set(call.toolCallId, asking);
    let outcome: acp.RequestPermissionOutcome;
    try {
      // After the tool_call update, so the editor knows the call it is asked about.
      await this.flushed();
      if (asking.signal.aborted) return; // decided meanwhile: never asked
      const response = await this.link.editor.request(
        "session/request_permission",
        { sessionId: this.sessionId, toolCall: { ...toolCallOf(call, this.workspace) }, options: PERMISSION_OPTIONS },
        { cancellationSignal: asking.signal, stopWaitingOnCancel: true },
      );
      outcome = response.outcome;
    } catch {
      return; // withdrawn (decided elsewhere, or cancelled), or the editor is gone
    } finally {
      if (this.#asking.get(call.toolCallId) === asking) this.#asking.delete(call.toolCallId);
    }
    if (outcome.outcome !== "selected") return; // cancelled: session/cancel's interrupt skips it
    this.#answered.add(call.toolCallId);
    if (this.#answered.size > 1000) this.#answered.delete(this.#answered.values().next().value!);
    await this.#decide(call, outcome.optionId).catch((error: Error) => this.link.log(`tool.confirm ${call.toolCallId}: ${error.message}`));
  }

  /** elicitation/create for a question; the editor's answer becomes input.respond (first answer wins). */
  async #elicit(request: InputRequestedNotification): Promise<void> {
    const key = `input:${request.requestId}`;
    if (this.#asking.has(key)) return;
    const asking = new AbortController();
    this.#asking.set(key, asking);
    let response: acp.CreateElicitationResponse;
    try {
      await this.flushed();
      if (asking.signal.aborted) return;
      response = await this.link.editor.request("elicitation/create", elicitationOf(this.sessionId, request), {
        cancellationSignal: asking.signal,
        stopWaitingOnCancel: true,
      });
    } catch {
      return; // answered elsewhere, cancelled, or the editor is gone
    } finally {
      if (this.#asking.get(key) === asking) this.#asking.delete(key);
    }
    await this.link.client.input
      .respond({ conversationId: this.conversationId, requestId: request.requestId, ...respondOf(request, response) })
      .catch((error: Error) => this.link.log(`input.respond ${request.requestId}: ${error.message}`));
  }

  async #decide(call: ToolPendingNotification, optionId: string): Promise<void> {
    const { client } = this.link;
    const base = { conversationId: this.conversationId, toolCallId: call.toolCallId };
    switch (optionId) {
      case "allow_once":
        await client.tool.confirm({ ...base, action: "confirm" });
        return;
      case "allow_always":
        try {
          await client.tool.confirm({ ...base, action: "confirm", remember: "conversation" });
        } catch (error) {
          // A call that cannot be remembered (a compound shell command): it still runs, asked again next time.
          if (!(error instanceof AgentwireRpcError && error.code === ErrorCodes.INVALID_PARAMS)) throw error;
          await client.tool.confirm({ ...base, action: "confirm" });
        }
        return;
      case "reject_always": {
        // "Never" for this tool in this conversation: it is no longer offered to the model.
        const { conversation } = await client.conversation.get({ conversationId: this.conversationId });
        await client.tool.confirm({ ...base, action: "skip" });
        await client.conversation.update({
          conversationId: this.conversationId,
          settings: { toolPolicy: { ...(conversation.settings.toolPolicy ?? {}), [call.toolName]: "never" } },
        });
        return;
      }
      default:
        await client.tool.confirm({ ...base, action: "skip" });
    }
  }
}

/** An agentwire error as the ACP error the spec names for it. */
export function acpError(error: unknown, sessionId?: string): RequestError {
  if (error instanceof RequestError) return error;
  if (error instanceof FrameTooLargeError) return new RequestError(-32602, error.message, { path: "prompt" });
  if (error instanceof AgentwireRpcError) {
    if (error.code === ErrorCodes.CONVERSATION_NOT_FOUND && sessionId !== undefined) return RequestError.sessionNotFound(sessionId);
    if (error.code === ErrorCodes.INVALID_PARAMS) return new RequestError(-32602, error.message, error.data);
    return new RequestError(-32603, error.message, { agentwireCode: error.code, ...(error.data !== undefined ? { data: error.data } : {}) });
  }
  return RequestError.internalError(undefined, (error as Error)?.message ?? String(error));
}
