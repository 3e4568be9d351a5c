import type { LoggedEvent } from "../sessions/event-log.js";
import type { BusEvent, BusListener, ReplayOutcome } from "./event-bus.js";

/** Live events held while a replay is under way; beyond this the holding stops and a later replay catches up. */
const MAX_HELD = 4096;
/** After a failed replay (Redis away), try again this much later. */
const RETRY_MS = 500;

/**
 * One subscription's delivery order. Events reach a subscriber two ways —
 * live (pub/sub) and replayed (read from the stream) — and the follower
 * merges them so the listener sees each event once, in seq order, and hears
 * about any it cannot get (onResync):
 *
 * - live events are held while a replay runs, then delivered after it,
 *   skipping what the replay already gave;
 * - a live event whose prevSeq is above the last delivered seq shows that
 *   something was lost (Redis went away, a publish failed): the follower
 *   replays from its last seq, which fills the hole or says resync.
 */
export class BusFollower {
  /** Seq of the last event delivered (or the start point). */
  private last: number;
  /** "waiting": not subscribed yet, or a replay failed and waits to retry; live events are held meanwhile. */
  private state: "waiting" | "replaying" | "live" | "closed" = "waiting";
  private started = false;
  private held: BusEvent[] = [];
  /** Events were dropped from `held`, or a reconnect happened during a replay: replay again after this one. */
  private again = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private settle!: (outcome: { replayed: number; resync: boolean }) => void;
  readonly ready: Promise<{ replayed: number; resync: boolean }>;

  constructor(
    private readonly afterSeq: number | undefined,
    private readonly listener: BusListener,
    /** Reads the stream (EventBus.replay for this conversation). */
    private readonly replay: (afterSeq: number) => Promise<ReplayOutcome>,
    /** A replay failed (it is retried) or the listener threw. */
    private readonly onError: (error: unknown, during: "replay" | "listener") => void,
  ) {
    this.last = afterSeq ?? 0;
    this.ready = new Promise((resolve) => (this.settle = resolve));
  }

  get closed(): boolean {
    return this.state === "closed";
  }

  /** A live event arrived. */
  live(event: BusEvent): void {
    if (this.state === "live") this.accept(event);
    else if (this.state !== "closed") this.hold(event);
  }

  /**
   * The live channel is (again) subscribed: start, or catch up with what was
   * published while it was not. Called after the first SUBSCRIBE is
   * confirmed and after every resubscription on reconnect.
   */
  resume(): void {
    if (this.state === "closed") return;
    if (this.state === "replaying") this.again = true;
    else void this.catchUp();
  }

  close(): void {
    if (this.state === "closed") return;
    this.state = "closed";
    this.held = [];
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.settle({ replayed: 0, resync: false });
  }

  private hold(event: BusEvent): void {
    if (this.held.length < MAX_HELD) this.held.push(event);
    else this.again = true; // the stream has it (or the replay will say resync)
  }

  private accept(event: BusEvent): void {
    if (event.seq <= this.last) return; // already delivered (by a replay, or a resent publish)
    if (event.prevSeq > this.last) {
      // Something in between was lost; the stream may still hold it.
      this.held.push(event);
      void this.catchUp();
      return;
    }
    this.deliver(event);
  }

  private deliver(event: LoggedEvent): void {
    this.last = event.seq;
    // A failing listener must not stop delivery to the others, nor reject a replay (an unhandled rejection).
    try {
      this.listener.onEvent({ seq: event.seq, method: event.method, frame: event.frame });
    } catch (error) {
      this.onError(error, "listener");
    }
  }

  private async catchUp(): Promise<void> {
    // Without a start point the first read only learns the latest seq, to go live from there.
    const fromNow = !this.started && this.afterSeq === undefined;
    this.state = "replaying";
    this.again = false;
    let outcome: ReplayOutcome;
    try {
      outcome = await this.replay(fromNow ? Number.MAX_SAFE_INTEGER : this.last);
    } catch (error) {
      if (this.closed) return;
      this.onError(error, "replay");
      this.state = "waiting";
      this.retryTimer = setTimeout(() => {
        this.retryTimer = null;
        this.resume();
      }, RETRY_MS);
      this.retryTimer.unref();
      return;
    }
    if (this.closed) return;
    let replayed = 0;
    let resync = false;
    if (fromNow) {
      this.last = outcome.latestSeq;
    } else if (outcome.resync) {
      resync = true;
      this.last = Math.max(this.last, outcome.latestSeq);
      try {
        this.listener.onResync(outcome.latestSeq);
      } catch (error) {
        this.onError(error, "listener");
      }
    } else {
      for (const event of outcome.events) {
        if (event.seq <= this.last) continue;
        this.deliver(event);
        replayed++;
      }
    }
    if (this.closed) return; // the listener closed it
    this.state = "live";
    if (!this.started) {
      this.started = true;
      this.settle({ replayed, resync });
    }
    const held = this.held;
    this.held = [];
    for (const event of held) {
      if (this.state === "live") this.accept(event);
      else if (this.state === "replaying") this.hold(event); // a gap among them started another replay
    }
    if (this.again && this.state === "live") void this.catchUp();
  }
}
