/**
 * A bounded ring of recent events of one conversation, kept as the exact
 * frames that were sent, so a replay is byte-identical to the live stream.
 */
export interface LoggedEvent {
  seq: number;
  /** Notification method, so a replay can honour a client's opt-outs. */
  method: string;
  frame: string;
}

export class EventLog {
  private readonly ring: (LoggedEvent | undefined)[];
  private start = 0;
  private size = 0;

  constructor(readonly capacity: number) {
    this.ring = new Array(Math.max(1, capacity));
  }

  push(event: LoggedEvent): void {
    const cap = this.ring.length;
    if (this.size < cap) {
      this.ring[(this.start + this.size) % cap] = event;
      this.size++;
    } else {
      this.ring[this.start] = event;
      this.start = (this.start + 1) % cap;
    }
  }

  get length(): number {
    return this.size;
  }

  /**
   * Events with seq > afterSeq, oldest first; `undefined` when some of them
   * are no longer held (the caller must resync). `latestSeq` is the
   * conversation's current seq, which may be ahead of the log after a restart.
   */
  since(afterSeq: number, latestSeq: number): LoggedEvent[] | undefined {
    if (afterSeq >= latestSeq) return [];
    const oldest = this.size ? this.ring[this.start]!.seq : latestSeq + 1;
    if (oldest > afterSeq + 1) return undefined;
    const out: LoggedEvent[] = [];
    const cap = this.ring.length;
    for (let i = 0; i < this.size; i++) {
      const e = this.ring[(this.start + i) % cap]!;
      if (e.seq > afterSeq) out.push(e);
    }
    return out;
  }
}
