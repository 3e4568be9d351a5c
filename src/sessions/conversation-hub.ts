import type { LimitsConfig } from "../../protocol/config.js";
import type { Conversation, NotificationMethod } from "../../protocol/index.js";
import type { Logger } from "../logging/logger.js";
import { RpcError } from "../rpc/rpc-error.js";
import { ConversationExistsError } from "../store/conversation-exists-error.js";
import type { ConversationHandle, ConversationStore } from "../store/conversation-store.js";
import type { GenerationEnding } from "./active-generation.js";
import type { Connection } from "./connection.js";
import type { FollowOutcome, HubCluster } from "./hub-cluster.js";
import { ConversationRuntime, type RuntimeLimits } from "./conversation-runtime.js";
import { ReplayBudget } from "./event-log.js";
import { Presence } from "./presence.js";
import type { RuntimeObserver } from "./runtime-observer.js";

export interface SubscribeOutcome {
  replayed: number;
  resync: boolean;
}

/** The bounds the hub keeps, from the configuration's `limits` (described there). */
export type HubLimits = RuntimeLimits & Pick<LimitsConfig, "replayBudgetBytes" | "maxLoadedConversations" | "maxSubscriptionsPerConnection">;

/** Under memory pressure, a conversation untouched this long may be unloaded even while subscribed. */
const EVICTION_GRACE_MS = 1000;

/**
 * Loaded conversations and who listens to them. Loading is shared: two
 * requests for the same conversation get the same runtime (and the store
 * keeps one handle per file).
 *
 * Memory follows use, not history: subscriptions are kept here, by
 * conversation id, so a runtime can be unloaded (idle for a while, or the
 * least recently used when more than `maxLoadedConversations` are loaded)
 * without its subscribers noticing anything but a resync if they reconnect;
 * the next request or event loads it again. A conversation that is running,
 * writing or announcing is never unloaded.
 */
export class ConversationHub {
  private readonly runtimes = new Map<string, ConversationRuntime>();
  private readonly loading = new Map<string, Promise<ConversationRuntime | undefined>>();
  private readonly subscribers = new Map<string, Set<Connection>>();
  readonly replay: ReplayBudget;
  /** Who watches what on this instance, for subscribers_changed. */
  private readonly presence = new Presence();
  private trimming = false;
  /** Cluster mode (--redis): ownership, bus outlets and bus-served subscriptions; null for a single instance. */
  cluster: HubCluster | null = null;
  /**
   * What runs beside a loaded conversation and must stop with it (its own
   * MCP servers): told when a runtime is loaded or created here, and when it
   * leaves memory (unloaded, deleted, lost to another instance).
   */
  lifecycle: { loaded(runtime: ConversationRuntime): void; dropped(runtime: ConversationRuntime): Promise<void> } | null = null;

  constructor(
    readonly store: ConversationStore,
    private readonly limits: HubLimits,
    private readonly log: Logger,
    /** Runs once on a conversation loaded from disk, before anyone sees it (crash recovery). */
    private readonly onLoad: (handle: ConversationHandle) => Promise<void> = async () => {},
    /** Sees every runtime's events and generation endings (the server's metrics). */
    private readonly observer?: RuntimeObserver,
  ) {
    this.replay = new ReplayBudget(limits.replayBudgetBytes);
    this.replay.onOverflow = () => this.trimReplay();
  }

  /** The runtime, loading it if needed; throws CONVERSATION_NOT_FOUND (or the store's damage error). */
  async get(id: string): Promise<ConversationRuntime> {
    const ready = this.runtimes.get(id);
    if (ready) {
      if (ready.deleted) throw RpcError.conversationNotFound(id);
      ready.lastUsed = Date.now();
      return ready;
    }
    let pending = this.loading.get(id);
    if (!pending) {
      pending = this.store.get(id).then(async (handle) => {
        if (!handle) return undefined;
        await this.onLoad(handle);
        return this.runtimes.get(id) ?? this.adopt(handle);
      });
      this.loading.set(id, pending);
      pending.finally(() => this.loading.delete(id)).catch(() => {});
    }
    const runtime = await pending;
    if (!runtime || runtime.deleted) throw RpcError.conversationNotFound(id);
    return runtime;
  }

  async create(conversation: Conversation): Promise<ConversationRuntime> {
    const handle = await this.store.create(conversation).catch((error: unknown) => {
      throw error instanceof ConversationExistsError ? RpcError.conversationExists(error.conversationId) : error;
    });
    // Owned before it is adopted: its first event already goes out under the lease.
    if (this.cluster) await this.cluster.claimCreated(conversation.id);
    // Taking it may have loaded it already (the cluster loads what it takes).
    return this.runtimes.get(conversation.id) ?? this.adopt(handle);
  }

  /** The runtime if it is loaded here, without loading it. */
  loaded(id: string): ConversationRuntime | undefined {
    return this.runtimes.get(id);
  }

  /** Refuse a new subscription beyond maxSubscriptionsPerConnection (local or served from the bus alike). */
  checkSubscriptionLimit(connection: Connection, conversationId: string): void {
    const max = this.limits.maxSubscriptionsPerConnection;
    if (!connection.subscriptions.has(conversationId) && connection.subscriptions.size >= max) {
      throw RpcError.limitExceeded(
        `this connection is subscribed to ${connection.subscriptions.size} conversations, the most one connection may watch; unsubscribe from some first`,
        "maxSubscriptionsPerConnection",
        max,
      );
    }
  }

  /**
   * Cluster mode: this instance no longer owns the conversation (its lease
   * was lost: Redis did not confirm it in time, or another instance took
   * it). No request finds the runtime any more. Its generation ends at once
   * with one `error` (`ending`), sent to the local subscribers directly —
   * they never wait for Redis — and written nowhere else but the run state:
   * calls not run stay pending for the next owner, a reply being streamed is
   * not stored. Then nothing more leaves the runtime, and its subscribers are
   * served from the bus from the last event they got, so they see the next
   * owner's events without a gap (and not a second ending of a generation
   * they saw end here).
   */
  async relinquish(id: string, ending: GenerationEnding): Promise<void> {
    const runtime = this.runtimes.get(id);
    if (!runtime) return;
    this.runtimes.delete(id);
    // Its subscriber set goes with it: a runtime loaded again meanwhile (this instance took the conversation back)
    // starts with a set of its own.
    if (this.subscribers.get(id) === runtime.subscribers) this.subscribers.delete(id);
    await runtime.generation?.abandon(ending).catch((error: unknown) => this.log.error(`stopping the generation of conversation ${id} failed`, error));
    await runtime.delivered();
    runtime.silence();
    const watchers = [...runtime.subscribers];
    runtime.subscribers.clear();
    const endedHere = new Set(runtime.recentGenerations.map((g) => g.generationId));
    for (const connection of watchers) {
      // Unsubscribed (or gone) while the generation wound down.
      if (connection.subscriptions.has(id)) this.cluster?.watch(connection, id, runtime.seq, endedHere);
    }
    runtime.dispose();
    await this.dropped(runtime);
    await this.store.unload(id).catch((error: unknown) => this.log.error(`unloading conversation ${id} failed`, error));
  }

  /**
   * Subscribe and replay, synchronously: no event can be sent between the
   * replay and the subscription taking effect, so nothing is missed or sent
   * twice.
   */
  subscribe(connection: Connection, runtime: ConversationRuntime, afterSeq?: number): SubscribeOutcome {
    this.checkSubscriptionLimit(connection, runtime.id);
    let replayed = 0;
    let resync = false;
    if (afterSeq !== undefined) {
      const missed = runtime.events.since(afterSeq, runtime.seq);
      if (missed === undefined) {
        resync = true;
      } else {
        for (const event of missed) {
          if (!connection.wants(event.method as NotificationMethod)) continue;
          connection.send(event.frame);
          replayed++;
        }
      }
    }
    runtime.subscribers.add(connection);
    connection.subscriptions.add(runtime.id);
    return { replayed, resync };
  }

  /**
   * conversation.subscribe: subscribe `connection` wherever the conversation
   * runs. Cluster mode: served by the owner's runtime when it is here, else
   * from the event bus (HubCluster.subscribe).
   */
  async follow(connection: Connection, conversationId: string, afterSeq: number | undefined): Promise<FollowOutcome> {
    const outcome = await this.followHere(connection, conversationId, afterSeq);
    // A closed connection's subscription was already dropped (its disconnect ran meanwhile).
    if (connection.subscriptions.has(conversationId)) this.presence.joined(connection, conversationId);
    return outcome;
  }

  private async followHere(connection: Connection, conversationId: string, afterSeq: number | undefined): Promise<FollowOutcome> {
    if (this.cluster) return this.cluster.subscribe(connection, conversationId, afterSeq);
    const runtime = await this.get(conversationId);
    const outcome = this.subscribe(connection, runtime, afterSeq);
    return { conversation: runtime.handle.conversation, state: runtime.state(), ...outcome };
  }

  /**
   * conversation.unsubscribe. Leaving works even for a conversation that was
   * deleted or damaged meanwhile; a conversation never subscribed to must
   * exist (asked of its owner in cluster mode), or CONVERSATION_NOT_FOUND.
   */
  async leave(connection: Connection, conversationId: string): Promise<void> {
    if (!connection.subscriptions.has(conversationId)) {
      if (this.cluster) await this.cluster.snapshotOf(conversationId);
      else await this.get(conversationId);
    }
    this.unsubscribe(connection, conversationId);
  }

  unsubscribe(connection: Connection, conversationId: string): void {
    const set = this.subscribers.get(conversationId);
    set?.delete(connection);
    if (set?.size === 0 && !this.runtimes.has(conversationId)) this.subscribers.delete(conversationId);
    this.cluster?.unwatch(connection, conversationId);
    connection.subscriptions.delete(conversationId);
    this.presence.left(connection, conversationId);
  }

  /** Drop every subscription of a closed connection, and end what it was waiting for. */
  disconnect(connection: Connection): void {
    connection.markClosed();
    for (const id of [...connection.subscriptions]) this.unsubscribe(connection, id);
  }

  async delete(runtime: ConversationRuntime): Promise<void> {
    // Marked first, so a request that arrives while the delete is under way already gets "not found".
    runtime.markDeleted();
    if (runtime.generation) await runtime.generation.interrupt();
    runtime.publish("conversation_updated", { conversation: runtime.handle.conversation, deleted: true });
    await runtime.delivered();
    for (const connection of runtime.subscribers) connection.subscriptions.delete(runtime.id);
    runtime.subscribers.clear();
    this.subscribers.delete(runtime.id);
    this.presence.forget(runtime.id);
    this.runtimes.delete(runtime.id);
    runtime.dispose();
    await this.dropped(runtime);
    await this.store.delete(runtime.id);
    this.cluster?.released(runtime.id);
  }

  /** Remove a conversation that cannot be loaded (damaged): nothing is in memory to stop. */
  async deleteUnloaded(id: string): Promise<boolean> {
    for (const connection of this.subscribers.get(id) ?? []) connection.subscriptions.delete(id);
    this.subscribers.delete(id);
    this.presence.forget(id);
    return this.store.delete(id);
  }

  /**
   * Unload conversations nobody watches or runs and nobody touched for
   * `idleMs`, so a long-running server's memory follows its active
   * conversations, not every one it ever opened. Their replay log goes with
   * them (a later subscribe with an old afterSeq gets resync).
   */
  async unloadIdle(idleMs: number, now = Date.now()): Promise<number> {
    const idle = [...this.runtimes.values()].filter(
      (r) => r.subscribers.size === 0 && !r.busy && now - r.lastUsed >= idleMs,
    );
    await Promise.all(idle.map((r) => this.unload(r)));
    return idle.length;
  }

  loadedCount(): number {
    return this.runtimes.size;
  }

  subscriptionCount(): number {
    let n = this.cluster?.watchCount() ?? 0;
    for (const set of this.subscribers.values()) n += set.size;
    return n;
  }

  generationCount(): number {
    let n = 0;
    for (const runtime of this.runtimes.values()) if (runtime.generation) n++;
    return n;
  }

  /** Loaded conversations someone could act on now: a generation runs, or stored tool calls wait for a decision. */
  activeCount(): number {
    let n = 0;
    for (const runtime of this.runtimes.values()) if (runtime.generation || runtime.storedPendingCalls().length > 0) n++;
    return n;
  }

  /** Tool calls waiting for tool.confirm in running generations. */
  pendingToolCount(): number {
    let n = 0;
    for (const runtime of this.runtimes.values()) n += runtime.generation?.pendingTools().length ?? 0;
    return n;
  }

  /** Stop every running generation for a server shutdown (pending calls stay pending on disk). */
  async shutdownAll(): Promise<void> {
    await Promise.all([...this.runtimes.values()].map((r) => r.generation?.shutdown()));
  }

  private adopt(handle: ConversationHandle): ConversationRuntime {
    const id = handle.conversation.id;
    let subscribers = this.subscribers.get(id);
    if (!subscribers) {
      subscribers = new Set();
      this.subscribers.set(id, subscribers);
    }
    const runtime = new ConversationRuntime(handle, subscribers, this.limits, this.replay, this.log, this.observer);
    this.cluster?.attach(runtime);
    this.runtimes.set(id, runtime);
    try {
      this.lifecycle?.loaded(runtime);
    } catch (error) {
      this.log.error(`starting what runs beside conversation ${id} failed`, error);
    }
    if (this.runtimes.size > this.limits.maxLoadedConversations) this.evictForRoom();
    return runtime;
  }

  private async dropped(runtime: ConversationRuntime): Promise<void> {
    await this.lifecycle?.dropped(runtime).catch((error: unknown) => this.log.error(`stopping what ran beside conversation ${runtime.id} failed`, error));
  }

  private async unload(runtime: ConversationRuntime): Promise<void> {
    if (this.runtimes.get(runtime.id) !== runtime) return;
    // What only memory held and must survive (the auto-confirm budget, set without a generation ending) goes to disk
    // first, while the runtime is still the one requests find; if it was used meanwhile, it stays.
    const touched = runtime.lastUsed;
    await runtime.saveRunState();
    if (this.runtimes.get(runtime.id) !== runtime || runtime.busy || runtime.lastUsed !== touched) return;
    this.runtimes.delete(runtime.id);
    if (runtime.subscribers.size === 0) this.subscribers.delete(runtime.id);
    runtime.dispose();
    await this.dropped(runtime);
    await this.store.unload(runtime.id).catch((error) => this.log.error(`unloading conversation ${runtime.id} failed`, error));
    this.cluster?.released(runtime.id);
  }

  /** Over the loaded limit: unload the least recently used conversations that are safe to unload. */
  private evictForRoom(): void {
    const excess = this.runtimes.size - this.limits.maxLoadedConversations;
    const now = Date.now();
    const candidates = [...this.runtimes.values()]
      .filter((r) => !r.busy && now - r.lastUsed >= EVICTION_GRACE_MS)
      .sort((a, b) => a.lastUsed - b.lastUsed);
    // Unload a tenth more than needed, so the sort is not paid on every load at the limit.
    const count = Math.min(candidates.length, excess + Math.ceil(this.limits.maxLoadedConversations / 10));
    for (const runtime of candidates.slice(0, count)) void this.unload(runtime);
  }

  /** Over the replay budget: drop the oldest events of the least recently used logs until 90% of it is used. */
  private trimReplay(): void {
    if (this.trimming) return;
    this.trimming = true;
    try {
      const target = this.replay.limit * 0.9;
      const byAge = [...this.runtimes.values()].sort((a, b) => a.lastUsed - b.lastUsed);
      for (const runtime of byAge) {
        while (this.replay.used > target && runtime.events.dropOldest()) {}
        if (this.replay.used <= target) break;
      }
    } finally {
      this.trimming = false;
    }
  }
}
