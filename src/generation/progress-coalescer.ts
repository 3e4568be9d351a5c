/**
 * Token deltas into `generation_progress` frames. The first delta of a tick
 * leaves at once (no added latency for a paced stream); deltas that follow
 * in the same tick are merged and leave as one frame right after it
 * (setImmediate), so a burst costs a few frames, not one per token.
 */
export class ProgressCoalescer {
  private kind: "text" | "reasoning" = "text";
  private buffered = "";
  private holding = false;

  constructor(private readonly emit: (kind: "text" | "reasoning", delta: string) => void) {}

  add(kind: "text" | "reasoning", delta: string): void {
    if (!this.holding) {
      this.holding = true;
      setImmediate(() => {
        this.holding = false;
        this.flush();
      });
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
