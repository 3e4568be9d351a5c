/**
 * Token deltas into `generation_progress` frames. The first delta of a tick
 * leaves at once (no added latency for a paced stream); deltas that follow
 * in the same tick are merged and leave as one frame right after it
 * (setImmediate), so a burst costs a few frames, not one per token.
 */
export class ProgressCoalescer {
  /**
   * Coalescers that sent a delta this tick. One immediate, shared by every
   * stream, ends their tick: with hundreds of streams a tick often carries
   * several streams' tokens, and an immediate (with its closure) per token
   * was garbage on every one of them.
   */
  private static held: ProgressCoalescer[] = [];
  private static readonly releaseHeld = (): void => {
    const held = ProgressCoalescer.held;
    ProgressCoalescer.held = [];
    // One stream's failure must not hold back the others' deltas; it is thrown once all are out.
    let failed = false;
    let failure: unknown;
    for (let i = 0; i < held.length; i++) {
      const coalescer = held[i]!;
      coalescer.holding = false;
      try {
        coalescer.flush();
      } catch (error) {
        if (!failed) failure = error;
        failed = true;
      }
    }
    if (failed) throw failure;
  };

  private kind: "text" | "reasoning" = "text";
  private buffered = "";
  private holding = false;

  constructor(private readonly emit: (kind: "text" | "reasoning", delta: string) => void) {}

  add(kind: "text" | "reasoning", delta: string): void {
    if (!this.holding) {
      this.holding = true;
      if (ProgressCoalescer.held.push(this) === 1) setImmediate(ProgressCoalescer.releaseHeld);
      this.emit(kind, delta);
      return;
    }
    if (kind !== this.kind) this.flush();
    this.kind = kind;
    this.buffered += delta;
  }

  flush(): void {
    if (!this.buffered) return;
    const delta = this.buffered;
    this.buffered = "";
    this.emit(this.kind, delta);
  }
}
