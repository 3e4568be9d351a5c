import type { NotificationMethod, NotificationParams } from "../../protocol/index.js";

/**
 * The one way a notification becomes a frame: every event, `connected`
 * included, is serialized here, once, and the same string goes to every
 * connection that should see it.
 */
export function notificationFrame<N extends NotificationMethod>(method: N, params: NotificationParams<N>): string {
  return JSON.stringify({ jsonrpc: "2.0", method, params });
}

const PROGRESS_HEAD = '{"jsonrpc":"2.0","method":"generation_progress","params":{"conversationId":';

/**
 * The frames of one conversation's generation_progress events: the same bytes
 * as notificationFrame("generation_progress", { conversationId, seq,
 * timestamp, generationId, kind, delta }) — same keys in the same order, each
 * string escaped by JSON.stringify — written out directly. It is the one
 * event sent per token batch: building the params object and walking it
 * generically cost more than the rest of publishing it
 * (test/sessions/progress-frame.test.ts compares the two byte for byte).
 *
 * What stays the same from one token to the next (the head with the
 * conversation's id, the generation's id with the kind) is joined once and
 * kept: each frame is then seven pieces, not thirteen. Every piece joined is a
 * string V8 allocates and the frame's flattening throws away (a sampling heap
 * profile of 100 streams put building this frame at ~620 bytes a token,
 * issue 27).
 */
export class ProgressFrames {
  readonly #head: string;
  #generationId: string | undefined;
  #kind: "text" | "reasoning" | undefined;
  /** From after the timestamp to the delta: `","generationId":…,"kind":"…","delta":`. */
  #middle = "";

  constructor(conversationId: string) {
    // join: one flat string, not a tree of the pieces, since it starts every frame.
    this.#head = [PROGRESS_HEAD, JSON.stringify(conversationId), ',"seq":'].join("");
  }

  frame(seq: number, timestamp: string, generationId: string, kind: "text" | "reasoning", delta: string): string {
    if (generationId !== this.#generationId || kind !== this.#kind) {
      this.#generationId = generationId;
      this.#kind = kind;
      this.#middle = middleOf(generationId, kind);
    }
    return this.#join(seq, timestamp, this.#middle, delta);
  }

  /**
   * frame() again for an event sent earlier (a replay), leaving what is kept
   * for the live stream as it is: a replay in the middle of a generation
   * does not make its next token's frame join its middle afresh.
   */
  again(seq: number, timestamp: string, generationId: string, kind: "text" | "reasoning", delta: string): string {
    const middle = generationId === this.#generationId && kind === this.#kind ? this.#middle : middleOf(generationId, kind);
    return this.#join(seq, timestamp, middle, delta);
  }

  #join(seq: number, timestamp: string, middle: string, delta: string): string {
    return `${this.#head}${seq},"timestamp":"${timestamp}${middle}${JSON.stringify(delta)}}}`;
  }
}

function middleOf(generationId: string, kind: "text" | "reasoning"): string {
  return ['","generationId":', JSON.stringify(generationId), ',"kind":"', kind, '","delta":'].join("");
}

let lastMs = Number.NaN;
let lastIso = "";

/**
 * `new Date(ms).toISOString()`, kept for the last millisecond asked: events
 * come in runs (a token batch for every stream of a tick), and most of them
 * share their millisecond with the one before.
 */
export function eventTimestamp(ms: number): string {
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}
