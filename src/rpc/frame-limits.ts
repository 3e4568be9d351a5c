/**
 * What one frame may make the server do. A frame is at most maxPayload bytes
 * (the transport enforces that); within it, these bound the work and the
 * memory a single frame can cost, so one client cannot stall the others.
 */
import { CONFIG_DEFAULTS } from "../../protocol/config-defaults.js";
import { monotonicMs } from "../monotonic-ms.js";

export interface FrameLimits {
  /** Most members in one batch; a larger batch is refused as a whole (-32600). */
  maxBatch: number;
  /** Deepest nesting of arrays and objects in a frame; deeper is refused before parsing (-32600). */
  maxDepth: number;
  /** Largest reply to one frame, in bytes of JSON; a member whose answer would pass it gets LIMIT_EXCEEDED instead. */
  maxReplyBytes: number;
  /** Synchronous work a frame may do before it yields to other connections, in ms. */
  sliceMs: number;
}

const { maxBatch, maxDepth, maxReplyBytes } = CONFIG_DEFAULTS.limits;

/** The configuration's defaults (`limits` in protocol/config.ts), for a dispatcher given none. */
export const DEFAULT_FRAME_LIMITS: FrameLimits = { maxBatch, maxDepth, maxReplyBytes, sliceMs: 4 };

/** What a frame breaks before it is even parsed: too deep, or a batch too long. */
export type FrameShapeProblem = { limit: "maxDepth" } | { limit: "maxBatch"; members: string };

/**
 * Checks the raw JSON text, before JSON.parse, for nesting deeper than
 * `maxDepth` and for a top-level array of more than `maxBatch` members. A
 * frame of millions of nested brackets, or a batch of 200,000 requests,
 * costs a scan that stops where the limit is passed — not a parse of the
 * whole frame (and a stack overflow later when the value is serialized
 * again). Brackets and commas inside strings do not count.
 *
 * The frame may be the received bytes themselves (UTF-8): the characters
 * that matter are ASCII, which never occur inside a multi-byte sequence, so
 * a refused frame is never even decoded to a string.
 */
export function frameShapeProblem(frame: string | Uint8Array, maxDepth: number, maxBatch: number): FrameShapeProblem | undefined {
  if (typeof frame === "string") {
    return scanShape(frame.length, (i) => frame.charCodeAt(i), (from) => frame.indexOf('"', from), maxDepth, maxBatch);
  }
  const bytes = Buffer.isBuffer(frame) ? frame : Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength);
  return scanShape(bytes.length, (i) => bytes[i]!, (from) => bytes.indexOf(QUOTE, from), maxDepth, maxBatch);
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

function scanShape(
  length: number,
  at: (i: number) => number,
  /** Next `"` from `from` (a native search: string contents, most of a large frame, are skipped at memchr speed). */
  nextQuote: (from: number) => number,
  maxDepth: number,
  maxBatch: number,
): FrameShapeProblem | undefined {
  let depth = 0;
  let batch = false;
  let members = 0;
  for (let i = 0; i < length; i++) {
    const c = at(i);
    if (c === QUOTE) {
      i = closingQuote(i, at, nextQuote);
      if (i < 0) return undefined; // unterminated: JSON.parse reports it
    } else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (depth === 0 && c === 0x5b) batch = true;
      if (++depth > maxDepth) return { limit: "maxDepth" };
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) {
      depth--;
    } else if (c === 0x2c /* , */ && depth === 1 && batch && ++members >= maxBatch) {
      return { limit: "maxBatch", members: `more than ${maxBatch}` };
    }
  }
  return undefined;
}

/** Index of the `"` that closes the string opened at `open`, skipping escaped ones; -1 when there is none. */
function closingQuote(open: number, at: (i: number) => number, nextQuote: (from: number) => number): number {
  for (let from = open + 1; ; ) {
    const quote = nextQuote(from);
    if (quote < 0) return -1;
    let backslashes = 0;
    while (at(quote - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote;
    from = quote + 1;
  }
}

/**
 * Lets a long piece of synchronous work give other connections a turn:
 * `await slicer.pause()` yields to the event loop (setImmediate, so I/O
 * callbacks run) once `sliceMs` have passed since the last yield.
 */
export class TimeSlicer {
  private sliceStart = monotonicMs();

  constructor(private readonly sliceMs: number) {}

  async pause(): Promise<void> {
    if (monotonicMs() - this.sliceStart < this.sliceMs) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.sliceStart = monotonicMs();
  }
}
