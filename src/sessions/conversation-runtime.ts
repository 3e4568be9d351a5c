import type {
  Conversation,
  ConversationState,
  LastError,
  NotificationMethod,
  NotificationParams,
  Plan,
  PlanEntry,
  QueuedMessage,
  ToolCallRecord,
} from "../../protocol/index.js";
import { CLIENT_MESSAGE_ID_WINDOW } from "../../protocol/index.js";
import type { Logger } from "../logging/logger.js";
import { RpcError } from "../rpc/rpc-error.js";
import type { ClientMessageIdEntry, ConversationHandle, GenerationSummary, RunState } from "../store/conversation-store.js";
import type { ActiveGeneration } from "./active-generation.js";
import type { Connection } from "./connection.js";
import { EventLog, type LoggedEvent, type ReplayBudget } from "./event-log.js";
import { ProgressEvent } from "./progress-event.js";
import { eventTimestamp, notificationFrame, ProgressFrames } from "./notification-frame.js";
import { pendingToolOf } from "./pending-tool.js";
import { InputRequests } from "./input-requests.js";
import type { InputQuestion, InputReply } from "../tools/tool.js";
import type { InputRequest } from "../../protocol/index.js";
import type { ConversationMcpServer } from "../../protocol/config-mcp.js";
import { newId } from "../ids.js";
import type { RuntimeObserver } from "./runtime-observer.js";

/** Seqs are reserved on disk this many at a time, so no event costs a write. */
const SEQ_BLOCK = 1024;
/** Renew the reservation this far before it runs out, so the write lands before it is needed. */
const SEQ_MARGIN = 256;
/** After a failed reservation write, try again this much later. */
const RESERVE_RETRY_MS = 1000;
/** Endings of recent generations kept per conversation, for generation.wait after the fact. */
export const RECENT_GENERATIONS = 16;

/** Takes every event the runtime sends, in seq order (cluster mode: the bus publisher). */
export interface EventOutlet {
  send(event: LoggedEvent): void;
}

type EventPayload<N extends NotificationMethod> = Omit<NotificationParams<N>, "conversationId" | "seq" | "timestamp">;

export interface RuntimeLimits {
  eventLogSize: number;
  eventLogBytes: number;
}

/**
 * The live side of one loaded conversation: its event numbering, recent
 * event log, subscribers and running generation.
 *
 * Nothing is announced before it is durable. A change to the conversation is
 * written first and announced after (`commit`), in the order the changes
 * were made. Every event's seq is inside the reservation already on disk
 * before the event leaves (`publish` holds events in an outbox while a
 * reservation is being written), so a seq is never handed out twice, even
 * after kill -9. Every event is serialized once and the same string goes to
 * every subscriber.
 */
export class ConversationRuntime {
  /** Seq of the last event numbered (sent or waiting in the outbox). */
  private numbered: number;
  /** Seq of the last event sent; what a client resumes from. */
  private sent: number;
  /** Reservation on disk: events up to this seq may leave. */
  private durable: number;
  /** Reservation being written (or to write), if above `durable`. */
  private reserving: Promise<void> | null = null;
  private wanted: number;
  private retryTimer: NodeJS.Timeout | null = null;
  /** Events numbered but held until their seq is durable, in order. */
  private readonly outbox: LoggedEvent[] = [];
  private outboxWaiters: (() => void)[] = [];
  /** Resolves once every earlier commit has announced (or failed), so announcements keep call order. */
  private announced: Promise<void> = Promise.resolve();
  private commitsInFlight = 0;
  /** Settles when the last metadata change (updateConversation) has been written or has failed. */
  private metadataTail: Promise<void> = Promise.resolve();
  readonly events: EventLog;
  /*
   * The run state. It changes only through this class's methods (begin and
   * end a generation, grant and spend auto-confirm, mark deleted, silence;
   * lastError as publish announces generations' endings), so its rules live
   * in one place: one generation at a time, nothing starts on a deleted
   * conversation, lastError says what the latest ending said.
   */
  #generation: ActiveGeneration | null = null;
  /** Tool uses still to run without asking; belongs to the conversation, not to a client. */
  #autoConfirmRemaining = 0;
  #lastError: LastError | null = null;
  /** The agent's plan (update_plan), kept with the run state so it outlives the runtime. */
  #plan: Plan | null = null;
  /** A plan being written: what other run-state writes must carry meanwhile (not shown until durable). */
  #planWriting: Plan | null = null;
  /** Messages held for later (message.append delivery steer or queue), oldest first; stored with the run state. */
  #queue: QueuedMessage[] = [];
  /** The most recent clientMessageIds, oldest first (at most CLIENT_MESSAGE_ID_WINDOW); stored with the run state. */
  #clientMessageIds: ClientMessageIdEntry[] = [];
  /** Appends with a clientMessageId still under way, so a retry arriving meanwhile waits for the first instead of appending twice. */
  readonly appendsInFlight = new Map<string, { digest: string; answer: Promise<unknown> }>();
  /** Questions waiting for the user (ask_user, MCP elicitation); the ask_user ones are stored with the run state. */
  #inputs: InputRequests;
  /** The conversation's own MCP servers (definitions); stored with the run state. */
  #mcpServers: ConversationMcpServer[] = [];
  #deleted = false;
  #silenced = false;
  /** A conversation.rewind / unrewind under way (see whileRewinding). */
  #rewinding: Promise<void> | null = null;
  /** Last time a request or an event touched it (ms since epoch), for unloading. */
  lastUsed = Date.now();
  /**
   * How recent generations ended, oldest first (at most RECENT_GENERATIONS).
   * Memory only, except the latest, which is stored with the metadata: after
   * an unload or a restart it is the only one known.
   */
  readonly recentGenerations: GenerationSummary[] = [];
  private readonly endListeners = new Set<(summary: GenerationSummary) => void>();
  /**
   * Cluster mode: where each sent event also goes (the owner's publish to
   * the event bus, src/cluster/bus-outlet.ts). Unset for a single instance,
   * so the token path pays one property test.
   */
  outlet: EventOutlet | null = null;

  constructor(
    readonly handle: ConversationHandle,
    /** Shared with the hub: subscriptions outlive an unload of the runtime. */
    readonly subscribers: Set<Connection>,
    limits: RuntimeLimits,
    budget: ReplayBudget,
    private readonly log: Logger,
    private readonly observer?: RuntimeObserver,
  ) {
    // After a restart or an unload, numbering resumes above everything that may have been handed out.
    this.numbered = this.sent = this.durable = this.wanted = handle.seqReserved;
    this.events = new EventLog(limits.eventLogSize, limits.eventLogBytes, budget);
    const stored = handle.runState;
    this.#inputs = new InputRequests(stored?.pendingInputs ?? []);
    if (stored) {
      this.#lastError = stored.lastError;
      this.#autoConfirmRemaining = stored.autoConfirmRemaining;
      this.#plan = stored.plan ?? null;
      // No generation survives its process: a steered message it had not taken waits as a queued one.
      this.#queue = (stored.queue ?? []).map((held) => ({ ...held, delivery: "queue" }));
      this.#clientMessageIds = stored.clientMessageIds ?? [];
      this.#mcpServers = stored.mcpServers ?? [];
      if (stored.lastGeneration) this.recentGenerations.push(stored.lastGeneration);
    }
  }

  get lastGeneration(): GenerationSummary | null {
    return this.recentGenerations.at(-1) ?? null;
  }

  /** The running generation, if any. */
  get generation(): ActiveGeneration | null {
    return this.#generation;
  }

  /**
   * The error that ended the latest generation that did not complete;
   * cleared when one completes. Follows the endings as they are announced
   * (see publish), so a client that saw the `error` finds it in the state.
   */
  get lastError(): LastError | null {
    return this.#lastError;
  }

  get autoConfirmRemaining(): number {
    return this.#autoConfirmRemaining;
  }

  /** Set once a delete has begun: requests find the conversation gone from then on. */
  get deleted(): boolean {
    return this.#deleted;
  }

  /**
   * Set when this instance lost the conversation to another (cluster mode):
   * nothing it still numbers leaves, neither to local subscribers nor to the
   * bus, while its generation winds down.
   */
  get silenced(): boolean {
    return this.#silenced;
  }

  /**
   * Make `generation` the running one (Agent.start, the one place a
   * generation starts). One at a time, and none on a deleted conversation.
   */
  beginGeneration(generation: ActiveGeneration): void {
    this.assertCanBegin();
    this.#generation = generation;
  }

  /** Throws what beginGeneration would: the conversation is deleted, or a generation runs. */
  assertCanBegin(): void {
    this.assertLive();
    if (this.#generation) throw RpcError.generationInProgress(this.#generation.id);
  }

  /**
   * Runs a rewind or unrewind; a step asked meanwhile waits for it to end
   * (see `rewinding`), so its first model call never reads records the
   * rewind is taking away.
   */
  async whileRewinding<T>(work: () => Promise<T>): Promise<T> {
    const run = work();
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    this.#rewinding = settled;
    try {
      return await run;
    } finally {
      if (this.#rewinding === settled) this.#rewinding = null;
    }
  }

  /** Settles when the rewind under way has ended; null when none is. */
  get rewinding(): Promise<void> | null {
    return this.#rewinding;
  }

  /** tool.confirm "auto": the next `count` tool uses run without asking. */
  grantAutoConfirm(count: number): void {
    this.#autoConfirmRemaining = count;
  }

  /** Use one unit of the conversation's auto-confirm budget; false when none is left. */
  spendAutoConfirm(): boolean {
    if (this.#autoConfirmRemaining <= 0) return false;
    this.#autoConfirmRemaining--;
    return true;
  }

  /** A delete has begun (ConversationHub.delete): nothing may be written or started after it. */
  markDeleted(): void {
    this.#deleted = true;
  }

  /** This instance lost the conversation (cluster mode): nothing more leaves the runtime. */
  silence(): void {
    this.#silenced = true;
  }

  /** The agent's plan as its latest update_plan call left it; null before the first. */
  get plan(): Plan | null {
    return this.#plan;
  }

  /**
   * Store the plan a generation's update_plan call set, then announce it
   * (plan_updated). Unlike the rest of the run state, a failed write fails
   * the call: the model must not believe a plan was kept that was not.
   */
  async updatePlan(generationId: string, entries: PlanEntry[]): Promise<void> {
    const plan: Plan = { entries, generationId, updatedAt: new Date().toISOString() };
    await this.storePlan(plan, () => this.publish("plan_updated", { generationId, entries }));
  }

  /**
   * The plan a new conversation starts with (conversation.fork: the plan at
   * the fork point). Stored like any plan; not announced, as nobody can be
   * subscribed to a conversation whose id was not handed out yet.
   */
  startWithPlan(plan: Plan): Promise<void> {
    return this.storePlan(plan, () => {});
  }

  private async storePlan(plan: Plan, announce: () => void): Promise<void> {
    this.assertLive();
    this.#planWriting = plan;
    try {
      await this.commit(this.handle.updateRunState(this.runState()), () => {
        this.#plan = plan;
        announce();
      });
    } finally {
      if (this.#planWriting === plan) this.#planWriting = null;
    }
  }

  /**
   * The summary a completing generation wrote ahead with its last record
   * (Loop.completeWith), until the generation ends: a run state written
   * meanwhile names it, not the one before.
   */
  #endingSummary: GenerationSummary | null = null;

  endingWith(summary: GenerationSummary): void {
    this.#endingSummary = summary;
  }

  /** What must outlive this runtime (see RunState). */
  runState(): RunState {
    return {
      lastError: this.#lastError,
      lastGeneration: this.#endingSummary ?? this.lastGeneration,
      autoConfirmRemaining: this.#autoConfirmRemaining,
      ...((this.#planWriting ?? this.#plan) ? { plan: (this.#planWriting ?? this.#plan)! } : {}),
      ...(this.#queue.length > 0 ? { queue: this.#queue.map((held) => ({ ...held })) } : {}),
      ...(this.#clientMessageIds.length > 0 ? { clientMessageIds: [...this.#clientMessageIds] } : {}),
      ...(this.#inputs.durable().length > 0 ? { pendingInputs: this.#inputs.durable() } : {}),
      ...(this.#mcpServers.length > 0 ? { mcpServers: this.#mcpServers } : {}),
    };
  }

  /** The conversation's own MCP servers, as stored (env and headers included: never sent to clients as such). */
  get mcpServers(): readonly ConversationMcpServer[] {
    return this.#mcpServers;
  }

  /** Store the conversation's own MCP servers (conversation.create / update mcpServers); on a failed write they stay as they were. */
  async storeMcpServers(servers: ConversationMcpServer[]): Promise<void> {
    this.assertLive();
    const before = this.#mcpServers;
    this.#mcpServers = servers;
    await this.commit(this.handle.updateRunState(this.runState()), () => {}).catch((error: unknown) => {
      this.#mcpServers = before;
      throw error;
    });
  }

  /** The questions waiting for the user. */
  get inputs(): InputRequests {
    return this.#inputs;
  }

  /**
   * Put a question to the user and wait for the reply: stored first when
   * `durable` (ask_user: offered again after a restart), then announced
   * (input_requested). `signal` (the generation's interrupt) cancels it.
   */
  async askInput(
    question: InputQuestion & Pick<InputRequest, "toolCallId" | "generationId">,
    durable: boolean,
    signal: AbortSignal,
    keep?: () => boolean,
  ): Promise<InputReply | null> {
    this.assertLive();
    if (signal.aborted) return { outcome: "cancelled" };
    const request: InputRequest = { requestId: newId("q"), ...question };
    const entry = this.#inputs.add(request, durable);
    const announce = () => this.publish("input_requested", { ...request });
    try {
      if (durable) await this.commit(this.handle.updateRunState(this.runState()), announce);
      else announce();
    } catch (error) {
      this.#inputs.take(request.requestId, "cancelled");
      throw error;
    }
    return this.awaitInput(entry.request.requestId, entry.reply, signal, durable ? keep : undefined);
  }

  /**
   * Wait for a question's reply; `signal` cancels it (when it is still
   * open) — unless `keep()` says the generation stops without ending its
   * calls (a server shutdown, a lost conversation): the question then stays
   * open and stored for the next generation, and this wait answers null.
   */
  awaitInput(requestId: string, reply: Promise<InputReply>, signal: AbortSignal, keep: () => boolean = () => false): Promise<InputReply | null> {
    let onAbort = () => {};
    const stopped = new Promise<null>((resolve) => {
      onAbort = () => {
        const entry = this.#inputs.get(requestId);
        if (!entry) return;
        if (keep()) {
          entry.attached = false;
          resolve(null);
        } else void this.resolveInput(requestId, { outcome: "cancelled" }).catch((e) => this.log.error(`could not cancel question ${requestId}`, e));
      };
    });
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
    return Promise.race([reply, stopped]).finally(() => signal.removeEventListener("abort", onAbort));
  }

  /**
   * End a question (input.respond, or a cancel): taken off at once, so the
   * first answer wins (a second throws INPUT_NOT_PENDING); then the shorter
   * list is stored, input_resolved announced, and the reply handed to
   * whoever waits. A failed write still hands the reply on (the question
   * is over for everyone; only a restart could offer it again).
   */
  async resolveInput(requestId: string, reply: InputReply): Promise<void> {
    const entry = this.#inputs.take(requestId, reply.outcome);
    const { toolCallId } = entry.request;
    const announce = () => this.publish("input_resolved", { requestId, ...(toolCallId ? { toolCallId } : {}), outcome: reply.outcome });
    try {
      if (entry.durable && !this.#deleted) await this.commit(this.handle.updateRunState(this.runState()), announce);
      else announce();
    } finally {
      entry.deliver(reply);
    }
  }

  /** Messages held for later, oldest first (state.queue, queue.list). */
  get queue(): readonly QueuedMessage[] {
    return this.#queue;
  }

  /**
   * Hold a message (message.append delivery steer or queue while a
   * generation runs): stored with the run state, then queue_changed. Beyond
   * `max.messages` held messages, or `max.bytes` of them together, it is
   * refused and nothing changes. The clientMessageId entry, if any, is
   * written in the same run-state write.
   */
  async hold(held: QueuedMessage, max: { messages: number; bytes: number }, clientId?: ClientMessageIdEntry): Promise<void> {
    this.assertLive();
    if (this.#queue.length >= max.messages) {
      throw RpcError.limitExceeded(`the conversation already holds ${this.#queue.length} messages for later, the most it holds`, "maxQueuedMessages", max.messages);
    }
    const heldBytes = this.#queue.reduce((sum, m) => sum + heldSize(m), 0);
    if (heldBytes + heldSize(held) > max.bytes) {
      throw RpcError.limitExceeded(
        `the messages held for later would take ${heldBytes + heldSize(held)} bytes, more than the ${max.bytes} the conversation holds`,
        "maxQueuedBytes",
        max.bytes,
        heldBytes + heldSize(held),
      );
    }
    this.#queue.push(held);
    if (clientId) this.rememberClientId(clientId);
    await this.writeQueue("added").catch((error: unknown) => {
      this.#queue = this.#queue.filter((m) => m !== held);
      if (clientId) this.#clientMessageIds = this.#clientMessageIds.filter((e) => e !== clientId);
      throw error;
    });
  }

  /**
   * Take the held messages `which` picks out of the queue and store each as
   * a record (in order, each announced with message_added and `delivery`),
   * then store the shorter queue and announce queue_changed. A record is
   * written before the queue that no longer holds it, so a crash between the
   * two can repeat a message but never lose one.
   */
  async takeHeld(which: (held: QueuedMessage, index: number) => boolean, delivery: "steered" | "queued"): Promise<QueuedMessage[]> {
    const taken = this.#queue.filter(which);
    if (taken.length === 0) return [];
    this.assertLive();
    this.#queue = this.#queue.filter((held) => !taken.includes(held));
    const stored: QueuedMessage[] = [];
    try {
      for (const held of taken) {
        await this.commit(this.handle.append(held.record), () => this.publish("message_added", { record: held.record, delivery }));
        stored.push(held);
      }
    } finally {
      // Whatever was stored leaves the queue; whatever was not (a failed write) stays held, first.
      const unstored = taken.filter((held) => !stored.includes(held));
      if (unstored.length > 0) this.#queue = [...unstored, ...this.#queue];
      if (stored.length > 0) await this.writeQueue("taken");
    }
    return taken;
  }

  /** queue.remove: drop one held message by its record id. */
  async removeHeld(recordId: string): Promise<boolean> {
    this.assertLive();
    const before = this.#queue;
    const index = before.findIndex((held) => held.record.id === recordId);
    if (index < 0) return false;
    this.#queue = before.filter((_, i) => i !== index);
    await this.writeQueue("removed").catch((error: unknown) => {
      this.#queue = before;
      throw error;
    });
    return true;
  }

  /** queue.clear: drop every held message; answers how many were dropped. */
  async clearHeld(): Promise<number> {
    this.assertLive();
    const before = this.#queue;
    if (before.length === 0) return 0;
    this.#queue = [];
    await this.writeQueue("cleared").catch((error: unknown) => {
      this.#queue = before;
      throw error;
    });
    return before.length;
  }

  /** What a clientMessageId was used for, if it is within the remembered window. */
  clientMessageId(clientMessageId: string): ClientMessageIdEntry | undefined {
    return this.#clientMessageIds.find((entry) => entry.clientMessageId === clientMessageId);
  }

  /** Remember the clientMessageId of a message that was appended as a record, and store it. */
  async storeClientId(entry: ClientMessageIdEntry): Promise<void> {
    this.rememberClientId(entry);
    await this.commit(this.handle.updateRunState(this.runState()), () => {});
  }

  private rememberClientId(entry: ClientMessageIdEntry): void {
    this.#clientMessageIds.push(entry);
    if (this.#clientMessageIds.length > CLIENT_MESSAGE_ID_WINDOW) this.#clientMessageIds.splice(0, this.#clientMessageIds.length - CLIENT_MESSAGE_ID_WINDOW);
  }

  private writeQueue(reason: "added" | "taken" | "removed" | "cleared"): Promise<void> {
    return this.commit(this.handle.updateRunState(this.runState()), () =>
      this.publish("queue_changed", { messages: this.#queue.map((held) => ({ ...held })), reason }),
    );
  }

  /**
   * Store the run state when it differs from the stored one, through the
   * commit path (so the runtime counts as busy until it is written). A
   * failed write is logged: the records are safe, only state.lastError or
   * lastGeneration would be stale after a restart.
   */
  async saveRunState(): Promise<void> {
    if (this.#deleted) return;
    const state = this.runState();
    if (JSON.stringify(state) === JSON.stringify(this.handle.runState ?? emptyRunState())) return;
    await this.commit(this.handle.updateRunState(state), () => {}).catch((error) =>
      this.log.error(`could not store the run state of conversation ${this.id}`, error),
    );
  }

  /**
   * A generation has ended (Generation.end, or a cluster takeover ending one
   * its lost owner ran): it is no longer the running one, how it ended is
   * kept, those waiting for it are told, and it is stored. Synchronous up to
   * the store write, so a waiter woken by the generation's `done` already
   * finds it here.
   */
  endGeneration(summary: GenerationSummary): void {
    if (this.#generation?.id === summary.generationId) this.#generation = null;
    if (this.#endingSummary?.generationId === summary.generationId) this.#endingSummary = null;
    // A steered message the generation did not take waits for the next one, as a queued message (stored below).
    if (!this.#generation) this.#queue = this.#queue.map((held) => (held.delivery === "steer" ? { ...held, delivery: "queue" } : held));
    this.recentGenerations.push(summary);
    if (this.recentGenerations.length > RECENT_GENERATIONS) this.recentGenerations.shift();
    for (const listener of [...this.endListeners]) listener(summary);
    try {
      this.observer?.generationEnded(summary);
    } catch (error) {
      // Metrics must never cost the conversation its stored state.
      this.log.error("the runtime observer failed", error);
    }
    void this.saveRunState();
  }

  /** Call `listener` when a generation ends; returns the disposer, which a waiter must call however its wait ends. */
  onGenerationEnd(listener: (summary: GenerationSummary) => void): () => void {
    this.endListeners.add(listener);
    return () => this.endListeners.delete(listener);
  }

  /** Listeners registered with onGenerationEnd and not yet disposed. */
  get endListenerCount(): number {
    return this.endListeners.size;
  }

  /**
   * Call right before changing the conversation: a delete may have started
   * while the caller awaited, and nothing may be written after it.
   */
  assertLive(): void {
    if (this.#deleted) throw RpcError.conversationNotFound(this.id);
  }

  get id(): string {
    return this.handle.conversation.id;
  }

  /** Seq of the last event sent to subscribers. */
  get seq(): number {
    return this.sent;
  }

  /** True while something is being written or waits to be announced: not safe to unload. */
  get busy(): boolean {
    return this.#generation !== null || this.commitsInFlight > 0 || this.outbox.length > 0;
  }

  /**
   * Write a change, then announce it. `announce` runs only after `write` is
   * durable and after every earlier commit has announced; resolves once the
   * announcement's events have left. When the write fails, nothing is
   * announced and the write's error is thrown.
   */
  async commit(write: Promise<void>, announce: () => void): Promise<void> {
    this.commitsInFlight++;
    const previous = this.announced;
    const done = (async () => {
      try {
        await write;
      } finally {
        await previous;
      }
      announce();
    })();
    this.announced = done.then(
      () => undefined,
      () => undefined,
    );
    try {
      await done;
      await this.delivered();
    } finally {
      this.commitsInFlight--;
    }
  }

  /**
   * Change the conversation's metadata. `change` is handed the metadata as
   * the previous change left it, not only what was durable when the caller
   * asked, so two changes in flight — a conversation.update and a model
   * call's usage totals — never undo each other. Written, then announced,
   * as `commit` does.
   */
  updateConversation(
    change: (current: Conversation) => Conversation,
    announce: () => void,
    /** Handed the store write once it is issued (and its commit is in line), for a caller that writes more beside it. */
    written?: (write: Promise<void>) => void,
  ): Promise<void> {
    const run = this.metadataTail.then(() => {
      this.assertLive();
      const write = this.handle.update(change(this.handle.conversation));
      const committed = this.commit(write, announce);
      written?.(write);
      return committed;
    });
    this.metadataTail = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /** Number an event and send it (or hold it until its seq is durable). Returns its seq. */
  publish<N extends NotificationMethod>(method: N, payload: EventPayload<N>): number {
    const seq = ++this.numbered;
    const now = Date.now();
    this.lastUsed = now;
    this.observer?.event(method, payload);
    const params = { conversationId: this.id, seq, timestamp: eventTimestamp(now), ...payload } as NotificationParams<N>;
    const event: LoggedEvent = { seq, method, frame: notificationFrame(method, params) };
    const ends = endedGeneration(method, payload);
    if (ends !== undefined) {
      event.endsGeneration = ends;
      this.noteEnding(ends, method, params);
    }
    this.dispatch(event);
    return seq;
  }

  /**
   * publish("generation_progress", { generationId, kind, delta }), with its
   * frame written directly (ProgressFrames: the same bytes): this is the event
   * of every token batch of every stream.
   */
  publishProgress(generationId: string, kind: "text" | "reasoning", delta: string): number {
    const seq = ++this.numbered;
    const now = Date.now();
    this.lastUsed = now;
    this.observer?.event("generation_progress", { generationId, kind, delta });
    this.#progressFrames ??= new ProgressFrames(this.id);
    this.dispatch(new ProgressEvent(this.#progressFrames, seq, eventTimestamp(now), generationId, kind, delta));
    return seq;
  }

  /** Made at the first token: a conversation that never streams does not hold one. */
  #progressFrames: ProgressFrames | undefined;

  /** Send a numbered event now, or hold it until its seq is durable (and reserve more seqs ahead of need). */
  private dispatch(event: LoggedEvent): void {
    const seq = event.seq;
    if (seq > this.wanted - SEQ_MARGIN) this.reserve(seq + SEQ_BLOCK);
    if (seq <= this.durable && this.outbox.length === 0) this.send(event);
    else this.outbox.push(event);
  }

  /**
   * Resolves once every event published so far has been sent — or once a
   * reservation write has failed: the events then leave when a retry
   * succeeds, and a caller waiting to answer its client must not hang.
   */
  delivered(): Promise<void> {
    if (this.outbox.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.outboxWaiters.push(resolve));
  }

  state(): ConversationState {
    return {
      generating: this.#generation !== null,
      generationId: this.#generation?.id ?? null,
      pendingTools:
        this.#generation?.pendingTools() ??
        this.storedPendingCalls().map((r) => pendingToolOf(r)),
      autoConfirmRemaining: this.#autoConfirmRemaining,
      lastError: this.#lastError,
      lastGeneration: publicLastGeneration(this.lastGeneration),
      seq: this.sent,
      plan: this.#plan,
      queue: this.#queue.map((held) => ({ ...held })),
      pendingInputs: this.#inputs.list(),
    };
  }

  /**
   * lastError follows each generation's announced ending: an `error` sets
   * it, a final generation_complete clears it, `interrupted` leaves it. An
   * ending announced again for a generation already ended (a takeover
   * repeating the ending its lost owner stored) changes nothing.
   */
  private noteEnding(generationId: string, method: NotificationMethod, params: object): void {
    if (this.recentGenerations.some((g) => g.generationId === generationId)) return;
    if (method === "generation_complete") this.#lastError = null;
    if (method === "error") {
      const { code, message, status, timestamp } = params as NotificationParams<"error">;
      this.#lastError = { code, message, ...(status !== undefined ? { status } : {}), timestamp };
    }
  }

  /** Calls of the open round still pending on disk (left by a stop): the next step offers them again. */
  storedPendingCalls(): ToolCallRecord[] {
    return this.handle.openToolCalls.filter((r) => r.status === "pending");
  }

  /** Drop what only memory held (the replay log); the runtime is not used after this. */
  dispose(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.events.clear();
    this.releaseWaiters();
  }

  private send(event: LoggedEvent): void {
    if (this.#silenced) return;
    this.outlet?.send(event);
    this.sent = event.seq;
    this.events.push(event);
    const frame = event.frame;
    for (const connection of this.subscribers) {
      if (connection.wants(event.method as NotificationMethod)) connection.send(frame);
    }
    // The log keeps a token's event as its parts from now on (see ProgressEvent).
    if (event instanceof ProgressEvent) event.sent();
  }

  private reserve(upTo: number): void {
    if (upTo <= this.wanted) return;
    this.wanted = upTo;
    if (this.reserving || this.retryTimer) return;
    this.writeReservation();
  }

  private writeReservation(): void {
    const target = this.wanted;
    this.reserving = this.handle.reserveSeq(target).then(
      () => {
        this.reserving = null;
        this.durable = Math.max(this.durable, target);
        this.flushOutbox();
        if (this.wanted > this.durable) this.writeReservation();
      },
      (error: unknown) => {
        this.reserving = null;
        this.releaseWaiters();
        // Held events wait: sending them without a durable seq could reuse it after a crash.
        this.log.error(`could not persist the seq reservation of conversation ${this.id}; retrying`, error);
        this.retryTimer = setTimeout(() => {
          this.retryTimer = null;
          if (!this.#deleted) this.writeReservation();
        }, RESERVE_RETRY_MS);
        this.retryTimer.unref();
      },
    );
  }

  private flushOutbox(): void {
    let i = 0;
    while (i < this.outbox.length && this.outbox[i]!.seq <= this.durable) this.send(this.outbox[i++]!);
    if (i > 0) this.outbox.splice(0, i);
    if (this.outbox.length === 0) this.releaseWaiters();
  }

  private releaseWaiters(): void {
    if (this.outboxWaiters.length === 0) return;
    const waiters = this.outboxWaiters;
    this.outboxWaiters = [];
    for (const resolve of waiters) resolve();
  }
}

/** The generation an event ends (Every generation ends with exactly one of: generation_complete final, interrupted, error). */
function endedGeneration(method: NotificationMethod, payload: object): string | undefined {
  const p = payload as { generationId?: string | null; final?: boolean };
  if (typeof p.generationId !== "string") return undefined;
  if (method === "interrupted" || method === "error" || (method === "generation_complete" && p.final === true)) return p.generationId;
  return undefined;
}

function emptyRunState(): RunState {
  return { lastError: null, lastGeneration: null, autoConfirmRemaining: 0 };
}

/** The protocol's view of a stored ending (usage and the record id are for generation.wait). */
function publicLastGeneration(summary: GenerationSummary | null): ConversationState["lastGeneration"] {
  if (!summary) return null;
  const { generationId, outcome, endedAt, error } = summary;
  return { generationId, outcome, endedAt, ...(error ? { error } : {}) };
}

/** A held message's size as stored (its record as JSON, UTF-8). */
function heldSize(held: QueuedMessage): number {
  return Buffer.byteLength(JSON.stringify(held.record));
}
