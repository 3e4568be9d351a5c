import type { NotificationMethod } from "../../protocol/index.js";
import type { Logger } from "../logging/logger.js";
import type { Connection } from "../sessions/connection.js";
import type { BusSubscription, EventBus } from "./event-bus.js";

/**
 * Subscriptions served from the event bus: a client watching a conversation
 * that another instance owns (or whose missed events this instance's own log
 * no longer holds). One bus subscription per connection and conversation, so
 * each starts exactly where its client is; the bus delivers each event once,
 * in seq order, or says resync.
 */
/** WebSocket close code (1012, "service restart": try again) for a connection whose events were lost between instances. */
export const LOST_EVENTS_CLOSE_CODE = 1012;

export class BusWatches {
  private readonly watches = new Map<Connection, Map<string, BusSubscription>>();
  private count = 0;

  constructor(
    private readonly bus: EventBus,
    private readonly log: Logger,
  ) {}

  /**
   * Start serving; resolves once the replay after `afterSeq` has been sent
   * and live events flow. `endedHere`: generations whose ending the
   * connection already got from this instance (see HubCluster.watch).
   */
  watch(
    connection: Connection,
    conversationId: string,
    afterSeq: number,
    endedHere?: ReadonlySet<string>,
  ): Promise<{ replayed: number; resync: boolean }> {
    this.unwatch(connection, conversationId);
    /** Set once the subscription's start is answered: a resync before that is the subscribe result's `resync: true`. */
    let started = false;
    const subscription = this.bus.subscribe(conversationId, afterSeq, {
      onEvent: (event) => {
        if (endedHere?.size && endsOneOf(event.method, event.frame, endedHere)) return;
        if (connection.wants(event.method as NotificationMethod)) connection.send(event.frame);
      },
      onResync: (latestSeq) => {
        if (!started) return;
        // Events were lost between instances mid-subscription (Redis dropped them and the stream no longer holds
        // them). The protocol tells of a resync only in conversation.subscribe's result, so the connection is closed,
        // as for a consumer too slow to keep up: the client reconnects, subscribes with afterSeq and is told to resync.
        this.log.warn(`events of conversation ${conversationId} before seq ${latestSeq} were lost for connection ${connection.id}; closing it`);
        connection.close?.(LOST_EVENTS_CLOSE_CODE, `events of conversation ${conversationId} were lost; reconnect and subscribe with afterSeq`);
      },
    });
    void subscription.ready.then(() => (started = true));
    let byConversation = this.watches.get(connection);
    if (!byConversation) {
      byConversation = new Map();
      this.watches.set(connection, byConversation);
    }
    byConversation.set(conversationId, subscription);
    this.count++;
    connection.subscriptions.add(conversationId);
    return subscription.ready;
  }

  unwatch(connection: Connection, conversationId: string): void {
    const byConversation = this.watches.get(connection);
    const subscription = byConversation?.get(conversationId);
    if (!subscription) return;
    subscription.dispose();
    byConversation!.delete(conversationId);
    if (byConversation!.size === 0) this.watches.delete(connection);
    this.count--;
  }

  get size(): number {
    return this.count;
  }

  close(): void {
    for (const byConversation of this.watches.values()) for (const subscription of byConversation.values()) subscription.dispose();
    this.watches.clear();
    this.count = 0;
  }
}

/** Whether a frame is the ending (generation_complete final, interrupted, error) of one of `generations`. */
function endsOneOf(method: string, frame: string, generations: ReadonlySet<string>): boolean {
  if (method !== "error" && method !== "interrupted" && method !== "generation_complete") return false;
  let params: { generationId?: unknown; final?: unknown } | undefined;
  try {
    params = (JSON.parse(frame) as { params?: typeof params }).params;
  } catch {
    return false;
  }
  if (typeof params?.generationId !== "string" || !generations.has(params.generationId)) return false;
  return method !== "generation_complete" || params.final === true;
}
