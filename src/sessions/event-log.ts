/**
 * A bounded log of one conversation's recent events, kept as the exact
 * frames that were sent, so a replay is byte-identical to the live stream.
 *
 * Bounded three ways: by count and by bytes per conversation, and by a
 * budget shared by every log of the server (ReplayBudget), which trims the
 * least recently used logs first. It allocates as it fills: an idle
 * conversation's log costs nothing.
 */
export interface LoggedEvent {
  seq: number;
  /** Notification method, so a replay can honour a client's opt-outs. */
  method: string;
  frame: string;
  /**
   * Set on the event that ends a generation (generation_complete final,
   * interrupted, or error): that generation's id. Cluster mode hands it to
   * the bus, which clears the generation's running mark with it.
   */
  endsGeneration?: string;
}

/** Bytes of replay frames across all logs; `onOverflow` is asked to trim when they pass `limit`. */
export class ReplayBudget {
  used = 0;
  onOverflow: () => void = () => {};

  constructor(readonly limit: number) {}

  charge(bytes: number): void {
    this.used += bytes;
    if (this.used > this.limit) this.onOverflow();
  }

  release(bytes: number): void {
    this.used -= bytes;
  }
}

export class EventLog {
  /** Live events are entries[head..]; the dead prefix is dropped in batches. */
  private entries: LoggedEvent[] = [];
  /** sizes[i] is entries[i]'s frame length, read once: a kept event may join its frame again only when asked (ProgressEvent). */
  private sizes: number[] = [];
  private head = 0;
  private byteCount = 0;

  constructor(
    readonly maxCount: number,
    readonly maxBytes: number,
    private readonly budget: ReplayBudget,
  ) {}

  get length(): number {
    return this.entries.length - this.head;
  }

  /** Bytes of the frames held (UTF-16 code units: a close, cheap measure). */
  get bytes(): number {
    return this.byteCount;
  }

  push(event: LoggedEvent): void {
    const size = event.frame.length;
    this.entries.push(event);
    this.sizes.push(size);
    this.byteCount += size;
    while (this.length > 1 && (this.length > this.maxCount || this.byteCount > this.maxBytes)) this.dropOldest();
    if (this.length === 1 && this.byteCount > this.maxBytes) this.dropOldest(); // a single frame over the limit is not kept
    this.budget.charge(size);
  }

  /** Drop the oldest event; returns false when the log is empty. */
  dropOldest(): boolean {
    if (this.length === 0) return false;
    const size = this.sizes[this.head]!;
    this.entries[this.head++] = undefined as never;
    this.byteCount -= size;
    this.budget.release(size);
    if (this.head >= 1024 && this.head * 2 >= this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.sizes = this.sizes.slice(this.head);
      this.head = 0;
    }
    return true;
  }

  /** Drop everything (the conversation is unloaded or deleted). */
  clear(): void {
    this.budget.release(this.byteCount);
    this.entries = [];
    this.sizes = [];
    this.head = 0;
    this.byteCount = 0;
  }

  /**
   * Events with seq > afterSeq, oldest first; `undefined` when some of them
   * are no longer held (the caller must resync). `latestSeq` is the seq of the
   * last event sent, which may be ahead of the log after a restart or a trim.
   */
  since(afterSeq: number, latestSeq: number): LoggedEvent[] | undefined {
    if (afterSeq >= latestSeq) return [];
    const oldest = this.length ? this.entries[this.head]!.seq : latestSeq + 1;
    if (oldest > afterSeq + 1) return undefined;
    const out: LoggedEvent[] = [];
    for (let i = this.head; i < this.entries.length; i++) {
      const e = this.entries[i]!;
      if (e.seq > afterSeq) out.push(e);
    }
    return out;
  }
}
