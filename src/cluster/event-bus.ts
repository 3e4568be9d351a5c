import type { LoggedEvent } from "../sessions/event-log.js";

/**
 * Cross-instance event fan-out for conversations: the seam between a
 * conversation's owner (which numbers and serializes its events, see
 * ConversationRuntime.publish) and the hubs of every instance with clients
 * watching it. The Redis implementation is cluster-bus.ts; a one-process
 * implementation would hand frames straight to its subscribers and answer
 * replays from the EventLog.
 */

/** An event as the owner sent it: the exact frame, its seq, and the seq it follows. */
export interface BusEvent extends LoggedEvent {
  /**
   * The seq of the event the owner numbered before this one. Seqs may jump
   * (after a restart or an ownership move, numbering resumes above the seq
   * reservation), so "is anything missing?" is answered by this link, not by
   * seq arithmetic: an event whose prevSeq is above what a subscriber last
   * saw means something in between was lost.
   */
  prevSeq: number;
}

export interface PublishOptions {
  /**
   * The fencing token of the caller's ownership lease. When given, the
   * event is refused (FencedError) once the conversation has been acquired
   * with a higher token: a paused former owner cannot speak for it.
   */
  fence?: number;
}

/** "duplicate": an event with this seq or a later one is already on the bus (a resend); nothing was stored. */
export type PublishOutcome = "published" | "duplicate";

/** What a replay found: the events after the given seq, or that some of them are no longer held. */
export type ReplayOutcome =
  | { resync: false; events: LoggedEvent[]; latestSeq: number }
  | { resync: true; latestSeq: number };

export interface BusListener {
  /** Events after the subscription's starting point, each once, in seq order. */
  onEvent(event: LoggedEvent): void;
  /**
   * Events were missed and are no longer held (trimmed from the replay
   * bound, or lost while Redis was away): the watcher must reload the
   * conversation's state. Delivery continues with the events after
   * `latestSeq`.
   */
  onResync(latestSeq: number): void;
}

export interface BusSubscription {
  /** Resolves once the replay is delivered and live events flow; says whether the start needed a resync. */
  readonly ready: Promise<{ replayed: number; resync: boolean }>;
  /** Stop delivering; safe to call more than once, and before `ready`. */
  dispose(): void;
}

export interface EventBus {
  publish(conversationId: string, event: BusEvent, options?: PublishOptions): Promise<PublishOutcome>;
  /**
   * Events with seq > afterSeq, oldest first, or resync when some are no
   * longer held (like EventLog.since). A conversation with no events on the
   * bus (never published, or idle past the retention) answers an empty list
   * with latestSeq 0: the caller compares with the stored seq.
   */
  replay(conversationId: string, afterSeq: number): Promise<ReplayOutcome>;
  /**
   * Deliver the conversation's events after `afterSeq` (replayed, then
   * live), or only those published from now on when `afterSeq` is undefined.
   */
  subscribe(conversationId: string, afterSeq: number | undefined, listener: BusListener): BusSubscription;
  /** Stop every subscription and timer; the connections belong to the caller. */
  close(): Promise<void>;
}
