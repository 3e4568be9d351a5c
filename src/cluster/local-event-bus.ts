import type { Logger } from "../logging/logger.js";
import type { LoggedEvent } from "../sessions/event-log.js";
import { BusFollower } from "./bus-follower.js";
import type { BusEvent, BusListener, BusSubscription, EventBus, PublishOutcome, ReplayOutcome } from "./event-bus.js";

/**
 * The EventBus inside one process: the same answers as ClusterBus (order,
 * duplicates, replay and resync over the prevSeq links, count and byte
 * bounds) without Redis, so code written against EventBus can be tested,
 * or run as a single instance, without a service. There is only one
 * instance, so nothing can fence it out: `fence` is ignored.
 */
export interface LocalEventBusOptions {
  maxCount?: number;
  maxBytes?: number;
  /** Conversations whose events are kept; beyond, the least recently published without subscribers are dropped. */
  maxConversations?: number;
  /** Where a listener that throws is reported. */
  log?: Logger;
}

interface Held {
  events: BusEvent[];
  bytes: number;
  last: number;
  followers: Set<BusFollower>;
}

export class LocalEventBus implements EventBus {
  private readonly conversations = new Map<string, Held>();
  private readonly maxCount: number;
  private readonly maxBytes: number;
  private readonly maxConversations: number;
  private closed = false;

  constructor(private readonly options: LocalEventBusOptions = {}) {
    this.maxCount = options.maxCount ?? 4096;
    this.maxBytes = options.maxBytes ?? 4 * 1024 * 1024;
    this.maxConversations = options.maxConversations ?? 10_000;
  }

  async publish(conversationId: string, event: BusEvent): Promise<PublishOutcome> {
    const held = this.held(conversationId);
    if (event.seq <= held.last) return "duplicate";
    // Most recently published last, for the eviction below.
    this.conversations.delete(conversationId);
    this.conversations.set(conversationId, held);
    held.last = event.seq;
    held.events.push(event);
    held.bytes += Buffer.byteLength(event.frame);
    while (held.events.length > 0 && (held.events.length > this.maxCount || held.bytes > this.maxBytes)) {
      held.bytes -= Buffer.byteLength(held.events.shift()!.frame);
    }
    for (const follower of held.followers) follower.live(event);
    this.evict();
    return "published";
  }

  async replay(conversationId: string, afterSeq: number): Promise<ReplayOutcome> {
    const held = this.conversations.get(conversationId);
    const latestSeq = held?.last ?? 0;
    if (!held || afterSeq >= latestSeq) return { resync: false, events: [], latestSeq };
    const start = held.events.findIndex((e) => e.seq > afterSeq);
    const first = start < 0 ? undefined : held.events[start]!;
    if (!first || first.prevSeq > afterSeq) return { resync: true, latestSeq };
    const events: LoggedEvent[] = held.events.slice(start).map(({ seq, method, frame }) => ({ seq, method, frame }));
    return { resync: false, events, latestSeq };
  }

  subscribe(conversationId: string, afterSeq: number | undefined, listener: BusListener): BusSubscription {
    if (this.closed) throw new Error("the event bus is closed");
    const held = this.held(conversationId);
    const follower = new BusFollower(
      afterSeq,
      listener,
      (from) => this.replay(conversationId, from),
      // A replay here cannot fail; only a throwing listener gets here.
      (error) => this.options.log?.error(`a listener of conversation ${conversationId}'s events failed`, error),
    );
    held.followers.add(follower);
    follower.resume();
    return {
      ready: follower.ready,
      dispose: () => {
        follower.close();
        held.followers.delete(follower);
      },
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const held of this.conversations.values()) for (const follower of held.followers) follower.close();
    this.conversations.clear();
  }

  private held(conversationId: string): Held {
    let held = this.conversations.get(conversationId);
    if (!held) {
      held = { events: [], bytes: 0, last: 0, followers: new Set() };
      this.conversations.set(conversationId, held);
    }
    return held;
  }

  private evict(): void {
    if (this.conversations.size <= this.maxConversations) return;
    for (const [id, held] of this.conversations) {
      if (this.conversations.size <= this.maxConversations) break;
      if (held.followers.size === 0) this.conversations.delete(id);
    }
  }
}
