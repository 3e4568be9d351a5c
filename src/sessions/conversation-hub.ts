import type { Conversation, NotificationMethod } from "../../protocol/index.js";
import type { Logger } from "../logging/logger.js";
import type { ConversationHandle, ConversationStore } from "../store/conversation-store.js";
import { RpcError } from "../rpc/rpc-error.js";
import type { Connection } from "./connection.js";
import { ConversationRuntime } from "./conversation-runtime.js";

export interface SubscribeOutcome {
  replayed: number;
  resync: boolean;
}

/**
 * Loaded conversations and who listens to them. Loading is shared: two
 * requests for the same conversation get the same runtime (and the store
 * keeps one handle per file).
 */
export class ConversationHub {
  private readonly runtimes = new Map<string, ConversationRuntime>();
  private readonly loading = new Map<string, Promise<ConversationRuntime | undefined>>();

  constructor(
    readonly store: ConversationStore,
    private readonly eventLogSize: number,
    private readonly log: Logger,
    /** Runs once on a conversation loaded from disk, before anyone sees it (crash recovery). */
    private readonly onLoad: (handle: ConversationHandle) => Promise<void> = async () => {},
  ) {}

  /** The runtime, loading it if needed; throws CONVERSATION_NOT_FOUND. */
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
        const existing = this.runtimes.get(id);
        if (existing) return existing;
        const runtime = new ConversationRuntime(handle, this.eventLogSize, this.log);
        this.runtimes.set(id, runtime);
        return runtime;
      });
      this.loading.set(id, pending);
      pending.finally(() => this.loading.delete(id)).catch(() => {});
    }
    const runtime = await pending;
    if (!runtime || runtime.deleted) throw RpcError.conversationNotFound(id);
    return runtime;
  }

  async create(conversation: Conversation): Promise<ConversationRuntime> {
    const handle = await this.store.create(conversation);
    const runtime = new ConversationRuntime(handle, this.eventLogSize, this.log);
    this.runtimes.set(conversation.id, runtime);
    return runtime;
  }

  /**
   * Subscribe and replay, synchronously: no event can be published between
   * the replay and the subscription taking effect, so nothing is missed or
   * sent twice.
   */
  subscribe(connection: Connection, runtime: ConversationRuntime, afterSeq?: number): SubscribeOutcome {
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

  unsubscribe(connection: Connection, conversationId: string): void {
    this.runtimes.get(conversationId)?.subscribers.delete(connection);
    connection.subscriptions.delete(conversationId);
  }

  /** Drop every subscription of a closed connection. */
  disconnect(connection: Connection): void {
    for (const id of connection.subscriptions) this.runtimes.get(id)?.subscribers.delete(connection);
    connection.subscriptions.clear();
  }

  async delete(runtime: ConversationRuntime): Promise<void> {
    // Marked first, so a request that arrives while the delete is under way already gets "not found".
    runtime.deleted = true;
    if (runtime.generation) await runtime.generation.interrupt();
    runtime.publish("conversation_updated", { conversation: runtime.handle.conversation, deleted: true });
    for (const connection of runtime.subscribers) connection.subscriptions.delete(runtime.id);
    runtime.subscribers.clear();
    this.runtimes.delete(runtime.id);
    await this.store.delete(runtime.id);
  }

  /**
   * Unload conversations nobody watches or runs and nobody touched for
   * `idleMs`, so a long-running server's memory follows its active
   * conversations, not every one it ever opened. Their events' replay log
   * goes with them (a later subscribe with an old afterSeq gets resync).
   */
  async unloadIdle(idleMs: number, now = Date.now()): Promise<number> {
    const idle = [...this.runtimes.values()].filter(
      (r) => r.subscribers.size === 0 && !r.generation && now - r.lastUsed >= idleMs,
    );
    for (const runtime of idle) this.runtimes.delete(runtime.id);
    await Promise.all(
      idle.map((r) => this.store.unload(r.id).catch((error) => this.log.error(`unloading conversation ${r.id} failed`, error))),
    );
    return idle.length;
  }

  loadedCount(): number {
    return this.runtimes.size;
  }

  subscriptionCount(): number {
    let n = 0;
    for (const runtime of this.runtimes.values()) n += runtime.subscribers.size;
    return n;
  }

  generationCount(): number {
    let n = 0;
    for (const runtime of this.runtimes.values()) if (runtime.generation) n++;
    return n;
  }

  /** Stop every running generation for a server shutdown (pending calls stay pending on disk). */
  async shutdownAll(): Promise<void> {
    await Promise.all([...this.runtimes.values()].map((r) => r.generation?.shutdown()));
  }
}
