import type { EventOutlet } from "../sessions/conversation-runtime.js";
import type { LoggedEvent } from "../sessions/event-log.js";
import type { BusEvent } from "./event-bus.js";

/**
 * The owner's side of the event bus for one conversation: every event the
 * runtime sends goes to `publish` with the link to the event before it
 * (prevSeq), in seq order, without waiting for Redis (publishes on one
 * connection keep their order).
 *
 * The first link is where the bus left off: after a takeover, the last seq
 * the former owner put on the bus (its later publishes are refused by the
 * fence the takeover raised), so watchers on other instances go on without
 * a resync; with nothing on the bus, the handle's seq reservation.
 */
export class BusOutlet implements EventOutlet {
  constructor(
    private prevSeq: number,
    private readonly publish: (event: BusEvent) => void,
  ) {}

  send(event: LoggedEvent): void {
    const prevSeq = this.prevSeq;
    this.prevSeq = event.seq;
    // Field by field, not spread: a kept event may hold its frame behind a getter (ProgressEvent).
    const { seq, method, frame, endsGeneration } = event;
    this.publish(endsGeneration === undefined ? { seq, method, frame, prevSeq } : { seq, method, frame, endsGeneration, prevSeq });
  }
}
