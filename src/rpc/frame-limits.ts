/**
 * What one frame may make the server do. A frame is at most maxPayload bytes
 * (the transport enforces that); within it, these bound the work and the
 * memory a single frame can cost, so one client cannot stall the others.
 */
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

export const DEFAULT_FRAME_LIMITS: FrameLimits = {
  maxBatch: 100,
  maxDepth: 64,
  maxReplyBytes: 16 * 1024 * 1024,
  sliceMs: 4,
};

/**
 * True when the JSON text nests arrays/objects deeper than `maxDepth`.
 * Checked on the raw text, before JSON.parse, so a frame of millions of
 * nested brackets costs a scan that stops at the first level too deep —
 * not a parse of the whole frame and a stack overflow later when the value
 * is serialized again. Brackets inside strings do not count.
 */
export function nestsDeeperThan(text: string, maxDepth: number): boolean {
  // A text shorter than the limit cannot hold that many opening brackets.
  if (text.length <= maxDepth) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth > maxDepth) return true;
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) {
      depth--;
    }
  }
  return false;
}

/**
 * Lets a long piece of synchronous work give other connections a turn:
 * `await slicer.pause()` yields to the event loop (setImmediate, so I/O
 * callbacks run) once `sliceMs` have passed since the last yield.
 */
export class TimeSlicer {
  private sliceStart = performance.now();

  constructor(private readonly sliceMs: number) {}

  async pause(): Promise<void> {
    if (performance.now() - this.sliceStart < this.sliceMs) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.sliceStart = performance.now();
  }
}
