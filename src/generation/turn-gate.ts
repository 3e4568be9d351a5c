/**
 * Lets at most `perTurn` callers through per turn of the event loop; the
 * rest wait, in order, for later turns. Between turns Node polls its I/O, so
 * work that waits here cannot hold up, all at once, the I/O of work already
 * running.
 *
 * Why: a model call's start (the context, the system prompt, the HTTP
 * request) takes the main thread ~0.3 ms. When hundreds of steps arrive
 * together, their starts ran back to back while the tokens of streams
 * already flowing waited behind them: with 300 conversations stepped at
 * once (the fan-out bench, quick runs, alternating), the p99 of each
 * stream's first 20 tokens was 148–272 ms, against 30–60 ms with 8 starts
 * let through per turn (a bare relay: 27–46 ms), and the p99 of every
 * token 100–202 ms against 36–51. One start per turn cost 500 streams
 * started together a fifth of their throughput; with 8, 0–8 points of the
 * paced ideal, within the runs' spread.
 *
 * The server lets 2 through (agent.ts), not 8: eight starts still held the
 * first tokens of the streams started before them for a few milliseconds
 * each turn. Fan-out quick runs of three turns, alternated with the same
 * build at 8: at 100 × 3 the p99 of every token was lower in 15 of 19 pairs
 * (medians 8.1 against 9.9 ms; the bare relay ~5). At 300 × 1 five pairs
 * run alone gave p50 1.0 against 2.5 ms, but five run after 100 × 3 (as
 * the full bench does) differed by less than their spread. 500 × 1, where
 * the machine is saturated, lost ~4 points of the paced ideal (56 against
 * 60 %, 3 pairs).
 *
 * A caller alone passes at once (no hop): a lone step's first token is not
 * delayed.
 */
export class TurnGate {
  readonly #perTurn: number;
  /** Passed in the current turn. */
  #passed = 0;
  readonly #waiting: (() => void)[] = [];
  #nextTurnScheduled = false;

  constructor(perTurn: number) {
    if (!(Number.isInteger(perTurn) && perTurn >= 1)) throw new RangeError(`perTurn must be a positive integer, got ${perTurn}`);
    this.#perTurn = perTurn;
  }

  /** Undefined when the caller may go on now; else a promise that resolves in a later turn. */
  pass(): Promise<void> | undefined {
    this.#scheduleNextTurn();
    if (this.#waiting.length === 0 && this.#passed < this.#perTurn) {
      this.#passed++;
      return undefined;
    }
    return new Promise<void>((resolve) => this.#waiting.push(resolve));
  }

  /** Callers waiting for a later turn. */
  get waiting(): number {
    return this.#waiting.length;
  }

  #scheduleNextTurn(): void {
    if (this.#nextTurnScheduled) return;
    this.#nextTurnScheduled = true;
    // setImmediate runs after this turn's I/O callbacks; one scheduled from it runs a turn later, after the next poll.
    setImmediate(() => this.#turn());
  }

  #turn(): void {
    this.#nextTurnScheduled = false;
    this.#passed = 0;
    while (this.#passed < this.#perTurn && this.#waiting.length > 0) {
      this.#passed++;
      this.#waiting.shift()!();
    }
    // The released callers run their start in this turn (their promises settle after this callback): count it.
    if (this.#passed > 0) this.#scheduleNextTurn();
  }
}
