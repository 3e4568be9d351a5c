/**
 * A small Server-Sent Events reader for model streams.
 *
 * The openai SDK's own stream decoder costs several times more CPU per token
 * than the rest of the server together (measured: about a third of a
 * 2000-token turn), so the SDK makes the request — URL, headers, auth,
 * HTTP errors — and we read the event stream ourselves. Events are handed
 * over a network read at a time: one read often carries dozens of tokens,
 * and handling them as a batch is what keeps per-token cost low.
 */
import type { Readable } from "node:stream";
import { finished } from "node:stream";
import { StringDecoder } from "node:string_decoder";

/**
 * Yields, per network read, the `data` payloads of the events completed by
 * that read. The body is a web stream, a Node stream (the response of
 * node-http-fetch.ts) or any async iterable of bytes; leaving early cancels it.
 */
export function readSseData(body: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>): AsyncIterableIterator<string[]> {
  if ("getReader" in body) return readChunks(webChunks(body));
  return isNodeReadable(body) ? new NodeSseReader(body) : readChunks(body);
}

export function isNodeReadable(body: unknown): body is Readable {
  const candidate = body as Partial<Readable>;
  return typeof candidate.on === "function" && typeof candidate.pause === "function" && typeof candidate.destroy === "function";
}

/**
 * SSE lines into `data` payloads. A UTF-8 character split across reads is
 * held by the decoder (node:string_decoder: a third of TextDecoder's cost
 * per read, measured on one-token reads).
 */
class SseParser {
  private readonly decoder = new StringDecoder("utf8");
  private buffer = "";
  /** The event's data lines so far; nearly every event has one, held without an array. */
  private data: string | null = null;
  private moreData: string[] | null = null;

  /** Adds the payloads of the events this chunk completes to `batch`. */
  push(chunk: Uint8Array, batch: string[]): void {
    const text = this.decoder.write(chunk as Buffer);
    const buffer = this.buffer === "" ? text : this.buffer + text;
    let start = 0;
    for (;;) {
      const end = buffer.indexOf("\n", start);
      if (end < 0) break;
      // The line is buffer[start, lineEnd), read in place: a string sliced out per line was garbage per token.
      const lineEnd = end > start && buffer.charCodeAt(end - 1) === 13 ? end - 1 : end;
      if (lineEnd === start) {
        // A blank line ends an event.
        this.endEvent(batch);
      } else if (buffer.startsWith("data:", start)) {
        // One space after the colon is not part of the value (a "data:" line's sixth character is then its end).
        this.addData(buffer.slice(start + 5 < lineEnd && buffer.charCodeAt(start + 5) === 32 ? start + 6 : start + 5, lineEnd));
      }
      // Other fields (event:, id:, retry:) and comments (":") carry nothing we use.
      start = end + 1;
    }
    this.buffer = start === buffer.length ? "" : buffer.slice(start);
  }

  /** The body ended: a last event without its blank line still counts. */
  end(batch: string[]): void {
    const buffer = this.buffer + this.decoder.end();
    this.buffer = "";
    if (buffer.startsWith("data:")) this.addData(buffer.charCodeAt(5) === 32 ? buffer.slice(6) : buffer.slice(5));
    this.endEvent(batch);
  }

  private addData(value: string): void {
    if (this.data === null) this.data = value;
    else (this.moreData ??= [this.data]).push(value);
  }

  /** The event's payload (its data lines joined by newlines) into `batch`, if it had any. */
  private endEvent(batch: string[]): void {
    if (this.data === null) return;
    batch.push(this.moreData ? this.moreData.join("\n") : this.data);
    this.data = null;
    this.moreData = null;
  }
}

/** Already settled: `.then(fn)` runs fn as a microtask, without the AsyncResource queueMicrotask makes per call. */
export const SETTLED = Promise.resolve();

/** Payloads waiting for the consumer beyond this many characters pause the body (backpressure). */
const PAUSE_CHARS = 1 << 16;

/**
 * A Node response read through its 'data' events rather than its async
 * iterator: the iterator costs a 'readable' tick, a read() and an async
 * generator step per chunk (about a kilobyte of garbage per token on a
 * paced stream, measured with the sampling heap profiler), while a 'data'
 * event is a plain call. Every chunk the HTTP parser delivers in one
 * synchronous run (a socket read of a burst holds dozens of chunked-encoding
 * pieces) goes into one batch, handed over in a microtask.
 */
class NodeSseReader implements AsyncIterableIterator<string[]> {
  private readonly parser = new SseParser();
  private pending: string[] = [];
  private pendingChars = 0;
  private waiter: { resolve(result: IteratorResult<string[]>): void; reject(error: unknown): void } | null = null;
  private handOverQueued = false;
  private paused = false;
  /** The body ended (cleanly, or with `failure`); no more data comes. */
  private ended = false;
  private failure: unknown = null;
  /** The consumer has seen the end (or left): nothing more is handed over. */
  private closed = false;

  constructor(private readonly body: Readable) {
    body.on("data", this.onData);
    // finished() reports what the async iterator would throw: an error, or a premature close (socket lost).
    // Its listeners stay, as the iterator's did: an error the body emits after the reader is done is not unhandled.
    finished(body, (error) => {
      if (this.ended) return;
      this.ended = true;
      if (error) this.failure = error;
      else this.parser.end(this.pending);
      this.handOver();
    });
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<string[]> {
    return this;
  }

  next(): Promise<IteratorResult<string[]>> {
    if (this.closed) return Promise.resolve({ value: undefined, done: true });
    if (this.pending.length > 0) return Promise.resolve({ value: this.take(), done: false });
    if (this.ended) return this.finish();
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  /** The consumer left early: the body is destroyed (its socket is not reused mid-response). */
  return(): Promise<IteratorResult<string[]>> {
    this.close();
    if (!this.ended) this.body.destroy();
    return Promise.resolve({ value: undefined, done: true });
  }

  private readonly onData = (chunk: Buffer | string): void => {
    const before = this.pending.length;
    this.parser.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk, this.pending);
    if (this.pending.length === before) return;
    if (this.waiter) {
      this.handOver();
      return;
    }
    for (let i = before; i < this.pending.length; i++) this.pendingChars += this.pending[i]!.length;
    if (this.pendingChars > PAUSE_CHARS && !this.paused) {
      this.paused = true;
      this.body.pause();
    }
  };

  /** Wakes a waiting consumer once the current synchronous run of chunks has been parsed. */
  private handOver(): void {
    if (this.handOverQueued || !this.waiter) return;
    this.handOverQueued = true;
    void SETTLED.then(this.deliver);
  }

  private readonly deliver = (): void => {
    this.handOverQueued = false;
    const waiter = this.waiter;
    if (!waiter) return;
    this.waiter = null;
    if (this.pending.length > 0) waiter.resolve({ value: this.take(), done: false });
    else if (this.ended) this.finish().then(waiter.resolve, waiter.reject);
    else this.waiter = waiter;
  };

  private take(): string[] {
    const batch = this.pending;
    this.pending = [];
    this.pendingChars = 0;
    if (this.paused && !this.ended) {
      this.paused = false;
      this.body.resume();
    }
    return batch;
  }

  private finish(): Promise<IteratorResult<string[]>> {
    this.close();
    return this.failure ? Promise.reject(this.failure) : Promise.resolve({ value: undefined, done: true });
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    this.body.off("data", this.onData);
  }
}

/** What readSseInline hands a response's events to. */
export interface SseBatchSink {
  /** The payloads one chunk completed, in the same call stack as the socket read; true stops reading (the caller then releases the body). */
  batch(batch: string[]): boolean;
  /** Once, when the body ends (after a last batch with an event left without its blank line), fails, or closes early; never after a stop. */
  end(error?: unknown): void;
}

/**
 * Reads a Node response's events synchronously, from the body's 'data'
 * listener. The sink is an object whose methods are called, not callbacks:
 * the 'data' listener, the sink's methods and what they call are the
 * hottest code of a stream, optimized in its first turn, and a closure made
 * per model call there is a new call target in the next turn, which throws
 * the optimized code away (measured: the listener compiled three times over
 * a fresh server's first 2000-token turns, 22–35 ms of the compiler's CPU
 * each time).
 */
export function readSseInline(body: Readable, sink: SseBatchSink): { stop(): void } {
  return new InlineSseRead(body, sink);
}

class InlineSseRead {
  private readonly parser = new SseParser();
  private stopped = false;
  private readonly listener: (chunk: Buffer | string) => void;

  constructor(
    private readonly body: Readable,
    private readonly sink: SseBatchSink,
  ) {
    // The listener only forwards: the work is in the prototype's onData, one function for every stream.
    this.listener = (chunk) => this.onData(chunk);
    body.on("data", this.listener);
    // As NodeSseReader: finished() reports an error or a premature close; its listeners stay.
    finished(body, (error) => this.onFinished(error));
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.body.off("data", this.listener);
  }

  private onData(chunk: Buffer | string): void {
    const batch: string[] = [];
    this.parser.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk, batch);
    if (batch.length > 0 && this.sink.batch(batch)) this.stop();
  }

  private onFinished(error: unknown): void {
    if (this.stopped) return;
    if (!error) {
      const last: string[] = [];
      this.parser.end(last);
      if (last.length > 0 && this.sink.batch(last)) return this.stop();
    }
    this.stop();
    this.sink.end(error ?? undefined);
  }
}

/** Any other body: one batch per chunk. */
async function* readChunks(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<string[]> {
  const parser = new SseParser();
  for await (const chunk of chunks) {
    const batch: string[] = [];
    parser.push(chunk, batch);
    if (batch.length) yield batch;
  }
  const last: string[] = [];
  parser.end(last);
  if (last.length) yield last;
}

/** A web stream's chunks; cancels the stream (freeing the socket) when the consumer leaves early. */
async function* webChunks(body: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = body.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    reader.cancel().catch(() => {});
    try {
      reader.releaseLock();
    } catch {
      // a read still pending after cancel: the lock goes with the stream
    }
  }
}
