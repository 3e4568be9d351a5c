/**
 * Mutations of one file set, applied by one worker in call order. Whatever is
 * queued while a write is on disk is handed to the next step together, so a
 * burst of calls costs a few writes, not one each (group commit).
 *
 * `step` receives the live queue, takes (shifts) at least one entry and
 * settles every entry it took: all of one write together, so a failed write
 * rejects exactly the mutations it carried.
 */
export interface Queued<Op> {
  readonly op: Op;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * Settles a group by one write: when the write fails, every mutation of the
 * group is rejected with its error and nothing changes; once it is durable,
 * `adopt` makes it visible and every mutation resolves.
 */
export async function settleGroup<Op>(group: readonly Queued<Op>[], write: () => Promise<void>, adopt: () => void): Promise<void> {
  try {
    await write();
  } catch (error) {
    for (const item of group) item.reject(error);
    return;
  }
  adopt();
  for (const item of group) item.resolve();
}

export class CommitQueue<Op> {
  readonly #queue: Queued<Op>[] = [];
  readonly #step: (queue: Queued<Op>[]) => Promise<void>;
  #worker: Promise<void> | null = null;
  /** The next step waits for the current event-loop turn to end (see gather). */
  #gathering = false;

  constructor(step: (queue: Queued<Op>[]) => Promise<void>) {
    this.#step = step;
  }

  push(op: Op): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#queue.push({ op, resolve, reject });
      this.#worker ??= this.#drain();
    });
  }

  /**
   * The next step starts only once the current event-loop turn has ended,
   * so what is queued until then goes in one write (ConversationHandle.gather):
   * one setImmediate later, never longer.
   */
  gather(): void {
    this.#gathering = true;
  }

  /** Resolves once everything queued so far has been settled. */
  idle(): Promise<void> {
    return this.#worker ?? Promise.resolve();
  }

  async #drain(): Promise<void> {
    // Runs after the current call stack, so calls made in one burst land in one group.
    await Promise.resolve();
    try {
      while (this.#queue.length > 0) {
        if (this.#gathering) {
          this.#gathering = false;
          await new Promise<void>((resolve) => setImmediate(resolve));
        }
        const first = this.#queue[0];
        try {
          await this.#step(this.#queue);
        } catch (error) {
          // A step must settle what it took; a bug must not wedge the queue.
          first.reject(error);
          if (this.#queue[0] === first) this.#queue.shift();
        }
        if (this.#queue[0] === first) this.#queue.shift()?.reject(new Error("store step made no progress"));
      }
    } finally {
      this.#worker = null;
    }
  }
}
