/**
 * The one model call every wire shares: the wire's SDK (openai, or
 * @anthropic-ai/sdk) sends the request (URL, headers, auth, HTTP errors; the
 * OpenAI wires over node:http send the SDK's request without its per-request
 * machinery, wires/openai-direct.ts), we read the event stream ourselves
 * (sse-reader.ts, node-http-fetch.ts: the SDK's decoder costs several times
 * more CPU per token), and the same retries, idle timeout, request timeout
 * and error mapping apply whichever wire (wires/*.ts) builds the request and
 * parses its events.
 *
 * Retries are ours, not the SDK's: an attempt is repeated only while nothing
 * has been yielded, so a caller never sees a token twice; each one is told
 * (a model_retry notice event, and rate_limited when a 429 carries rate-limit
 * headers), and the endpoint's Retry-After decides the pause when it sends one.
 */
import { IncomingMessage } from "node:http";
import { OPENAI_DEFAULT_BASE_URL } from "../../protocol/provider-defaults.js";
import { CONFIG_DEFAULTS } from "../../protocol/config-defaults.js";
import type { Readable } from "node:stream";
import { createNodeHttpFetch, type NodeHttpFetch } from "./node-http-fetch.js";
import { isRetryable } from "./openai-errors.js";
import { LlmError, type ChatRequest, type LlmProvider, type ModelInfo, type StreamEvent } from "./provider.js";
import { rateLimitNotice, retryAfterMs, retryNotice } from "./retry-notices.js";
import { isNodeReadable, readSseData, readSseInline, SETTLED, type SseBatchSink } from "./sse-reader.js";
import { DeltaBatch, type Wire, type WireClient, type WireStream } from "./wires/wire.js";

export interface ModelCallOptions {
  /** Sent as a bearer token; local endpoints often need none ("none" is sent then). */
  apiKey?: string;
  /** Default https://api.openai.com/v1. The environment is not read here. */
  baseURL?: string;
  /** Extra request headers, sent with every request (e.g. an organisation or a gateway's routing header). */
  headers?: Record<string, string>;
  /** Extra attempts after the first for 429/5xx/connection failures before the first event (default 2). */
  maxRetries?: number;
  /**
   * Backoff before retry n is base·2^(n-1), capped at the max, ±20 % jitter (defaults 250 ms and 1 s),
   * unless the failed response says how long to wait (retry-after-ms / retry-after, at most 60 s).
   */
  retryBaseDelayMs?: number;
  retryMaxDelayMs?: number;
  /** Abort when no chunk (or no response headers) arrives for this long (default: the configuration's llm.idleTimeoutMs). */
  idleTimeoutMs?: number;
  /** Abort one attempt that has not finished after this long, however lively (default 10 min). */
  requestTimeoutMs?: number;
  /**
   * HTTP transport under the SDK: "node" (default; node:http, streams read
   * without web streams — see node-http-fetch.ts) or "fetch" (the built-in fetch).
   */
  transport?: "node" | "fetch";
}

/** Resolves after `ms`, or early (false) when the signal aborts. */
function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** An LlmProvider speaking one wire, with the shared retry, timeout and error behaviour. */
export class ModelCallProvider implements LlmProvider {
  private readonly client: WireClient;
  private readonly baseURL: string;
  private readonly maxRetries: number;
  private readonly retryBaseDelayMs: number;
  private readonly retryMaxDelayMs: number;
  private readonly idleTimeoutMs: number;
  private readonly requestTimeoutMs: number;
  private readonly http: NodeHttpFetch | undefined;

  constructor(
    private readonly wire: Wire,
    options: ModelCallOptions = {},
  ) {
    this.baseURL = (options.baseURL ?? OPENAI_DEFAULT_BASE_URL).replace(/\/+$/, "");
    this.maxRetries = options.maxRetries ?? 2;
    this.retryBaseDelayMs = options.retryBaseDelayMs ?? 250;
    this.retryMaxDelayMs = options.retryMaxDelayMs ?? 1000;
    this.idleTimeoutMs = options.idleTimeoutMs ?? CONFIG_DEFAULTS.llm.idleTimeoutMs;
    this.requestTimeoutMs = options.requestTimeoutMs ?? 600_000;
    this.http = options.transport === "fetch" ? undefined : createNodeHttpFetch();
    this.client = wire.connect({
      ...(this.http ? { fetch: this.http.fetch, http: this.http } : {}),
      apiKey: options.apiKey || "none",
      baseURL: this.baseURL,
      ...(options.headers ? { headers: options.headers } : {}),
      timeoutMs: this.requestTimeoutMs,
    });
  }

  async *stream(request: ChatRequest): AsyncGenerator<StreamEvent> {
    const progress = { yielded: false };
    for (let attempt = 0; ; attempt++) {
      if (request.signal.aborted) return;
      try {
        yield* this.attempt(request, progress);
        return;
      } catch (err) {
        if (request.signal.aborted) return;
        const error = this.client.toLlmError(err);
        const limited = rateLimitNotice(error);
        if (limited) yield limited;
        if (progress.yielded || attempt >= this.maxRetries || !isRetryable(error)) throw error;
        // The endpoint's Retry-After wins over our backoff (as the SDK's own retries did).
        const backoff = Math.min(this.retryMaxDelayMs, this.retryBaseDelayMs * 2 ** attempt);
        const delay = retryAfterMs(error.headers) ?? Math.round(backoff * (0.8 + Math.random() * 0.4));
        yield retryNotice(attempt + 1, this.maxRetries, delay, error);
        if (!(await pause(delay, request.signal))) return;
      }
    }
  }

  /** One HTTP request. Throws on failure; returns quietly when the caller aborted. */
  private async *attempt(request: ChatRequest, progress: { yielded: boolean }): AsyncGenerator<StreamEvent> {
    const { signal } = request;
    // Loading the SDK is not the endpoint being slow: it happens before the clocks start.
    await this.client.ready?.();
    if (signal.aborted) return;
    // Our own controller, so the idle and request timeouts can abort without touching the caller's signal.
    const controller = new AbortController();
    const onCallerAbort = () => controller.abort();
    signal.addEventListener("abort", onCallerAbort, { once: true });
    let timedOut: LlmError | null = null;
    const expire = (error: LlmError) => {
      timedOut ??= error;
      controller.abort();
    };
    // One timer for the whole answer. A network read only notes the time (timer.refresh() per read
    // re-queued the timer: ~0.6 µs per token in the fan-out profile); when the timer fires it
    // waits out what is left of the quiet period since the last read, or expires.
    // While our consumer handles events the clock is held: it measures the endpoint.
    const clock: ReadClock = { consumerBusy: false, lastRead: Date.now() };
    const onIdle = () => {
      const quiet = Date.now() - clock.lastRead;
      if (clock.consumerBusy) idleTimer = setTimeout(onIdle, this.idleTimeoutMs);
      else if (quiet < this.idleTimeoutMs) idleTimer = setTimeout(onIdle, this.idleTimeoutMs - quiet);
      else expire(new LlmError(`timed out: no data from the model endpoint for ${this.idleTimeoutMs} ms (--llm-idle-timeout)`, "timeout"));
    };
    let idleTimer: NodeJS.Timeout = setTimeout(onIdle, this.idleTimeoutMs);
    const requestTimer = setTimeout(
      () => expire(new LlmError(`the model did not finish its answer within ${this.requestTimeoutMs} ms`, "timeout")),
      this.requestTimeoutMs,
    );

    const parser = this.wire.begin();
    let drained = false;
    try {
      try {
        const response = await this.client.send(request, controller.signal);
        // Tested as a Node response, not `instanceof Response`: that global's first use loads undici (~10 ms), which the direct sends never need.
        const body: AsyncIterable<Uint8Array> | ReadableStream<Uint8Array> | null =
          response instanceof IncomingMessage ? response : (this.http?.takeNodeBody(response) ?? response.body);
        if (!body) throw new LlmError("the model endpoint answered without a body", "connection");
        clock.lastRead = Date.now();
        const onDelta = request.onDelta;
        if (onDelta && isNodeReadable(body)) {
          drained = await readInline(body, parser, onDelta, progress, clock);
        } else {
          let finished = false;
          let cut = false;
          // One batch for the whole body: taking its events empties it.
          const deltas = new DeltaBatch();
          for await (const batch of readSseData(body)) {
            // After the last event, only the end of a response already received whole is read (see below).
            if (finished) continue;
            let last = false;
            let failure: unknown;
            // Indexed loops here and below: this runs per event, often before the code is optimized, where for…of costs an iterator each time.
            for (let i = 0; i < batch.length; i++) {
              try {
                last = parser.feed(batch[i]!, deltas);
              } catch (error) {
                failure = error; // reported after the deltas that came before it
                break;
              }
              if (last) break;
              if (!progress.yielded) {
                // The answer's first words leave on their own: a burst's first network read holds hundreds
                // of events, and parsing them all first held the first token back by that much.
                const first = deltas.take();
                if (first.length === 0) continue;
                clock.consumerBusy = true;
                for (let j = 0; j < first.length; j++) {
                  progress.yielded = true;
                  if (onDelta) onDelta(first[j]!.type, first[j]!.delta);
                  else yield first[j]!;
                }
                clock.consumerBusy = false;
                // Sockets are written at the end of a tick (the transport corks them): let that tick end, so
                // the first frame is on its way while the rest of this read is parsed.
                await new Promise<void>((resolve) => setImmediate(resolve));
              }
            }
            clock.consumerBusy = true;
            const events = deltas.take();
            for (let j = 0; j < events.length; j++) {
              progress.yielded = true;
              if (onDelta) onDelta(events[j]!.type, events[j]!.delta);
              else yield events[j]!;
            }
            clock.consumerBusy = false;
            if (failure) throw failure;
            // The idle clock measures the endpoint, not how long our consumer took.
            clock.lastRead = Date.now();
            if (last) {
              // Leaving a Node response before its 'end' destroys its socket, so every model call would
              // open a new connection. When the whole body has arrived (the usual case: [DONE] and the
              // end of the chunked body come together), read on to the end and the connection goes back
              // to the keep-alive pool; otherwise stop here rather than wait on a slow endpoint.
              if (!isCompleteNodeBody(body)) {
                cut = true;
                break;
              }
              finished = true;
            }
          }
          // Read to its end: the connection is back in the keep-alive pool, nothing is left to release.
          drained = !cut;
        }
      } catch (err) {
        if (timedOut) throw timedOut;
        if (signal.aborted) return;
        // The answer was complete; only its trailing events (usage, [DONE]) got lost.
        if (!parser.complete || err instanceof LlmError) throw err;
      }
      if (timedOut) throw timedOut;
      if (signal.aborted) return;
      yield parser.done();
    } finally {
      clearTimeout(idleTimer);
      clearTimeout(requestTimer);
      signal.removeEventListener("abort", onCallerAbort);
      // Releases the socket on every early exit (error, timeout, consumer `break`). A body read to its end
      // has nothing to release: aborting it anyway cost a DOMException and its listeners at every turn's end.
      if (!drained) controller.abort();
    }
  }

  listModels(signal?: AbortSignal): Promise<ModelInfo[]> {
    return this.client.listModels(signal, this.idleTimeoutMs);
  }
}

/** The idle clock of one attempt: the last network read, and whether our consumer is handling events (the clock is held then). */
interface ReadClock {
  consumerBusy: boolean;
  lastRead: number;
}

/**
 * One attempt's Node response read inside its 'data' events (readSseInline).
 * The first chunk of a socket read hands its deltas to `onDelta` before the
 * read's call stack unwinds (a paced stream's token is one such chunk), the
 * answer's first delta alone, before the rest is parsed. The chunks that
 * follow in the same read (a burst brings hundreds, one per token) are
 * parsed as they come and handed over merged, once, when the read is done
 * (a microtask): handed one by one they cost each token its own delta,
 * event and string joins (measured: a 2000-token burst's early turns took
 * 30 ms of CPU instead of 10–20). The same rules as the iterating path: a
 * parse failure is reported after the deltas before it; after the last event
 * the rest of a body already received whole is read (the connection goes
 * back to the pool), else reading stops. "Received whole" is asked once the
 * read is done, not inside its 'data' event: the HTTP parser marks the body
 * complete only after it has delivered the read's last chunk, so asked there
 * it said no even when the end came in the same read: every paced call was
 * cut and its request aborted (measured: 100 % of the fan-out bench's calls;
 * a DOMException and its listeners each, ~40 µs, at every turn's end, and a
 * socket whose end lost the race to the abort was destroyed). Resolves true
 * when the body was read to its end, false when it was cut; rejects with the
 * body's error or the parse failure.
 */
function readInline(
  body: Readable,
  parser: WireStream,
  onDelta: (kind: "text" | "reasoning", delta: string) => void,
  progress: { yielded: boolean },
  clock: ReadClock,
): Promise<boolean> {
  return new Promise<boolean>((resolve, reject) => {
    new InlineAttempt(body, parser, onDelta, progress, clock, resolve, reject);
  });
}

/** readInline's state, with methods rather than closures (see readSseInline: one set of functions for every call). */
class InlineAttempt implements SseBatchSink {
  private last = false;
  /** What ends the attempt once the read's deltas are handed over: a parse failure, or the cut after the last event. */
  private outcome: { failure: unknown } | { cut: true } | null = null;
  /** The deltas of a read's first chunk, handed over at once; empty between chunks. */
  private readonly now = new DeltaBatch();
  /** The deltas of the current read after its first chunk, handed over when the read is done (endRead). */
  private readonly rest = new DeltaBatch();
  /** A read is under way: its later chunks go to `rest`. */
  private reading = false;
  private readonly reader: { stop(): void };
  private readonly endRead = (): void => this.handRest();
  private readonly endOrCut = (): void => this.cutUnlessWhole();

  constructor(
    private readonly body: Readable,
    private readonly parser: WireStream,
    private readonly onDelta: (kind: "text" | "reasoning", delta: string) => void,
    private readonly progress: { yielded: boolean },
    private readonly clock: ReadClock,
    private readonly resolve: (drained: boolean) => void,
    private readonly reject: (error: unknown) => void,
  ) {
    this.reader = readSseInline(body, this);
  }

  batch(batch: string[]): boolean {
    if (this.last) return false;
    const first = !this.reading;
    const deltas = first ? this.now : this.rest;
    this.clock.consumerBusy = true;
    for (let i = 0; i < batch.length; i++) {
      try {
        this.last = this.parser.feed(batch[i]!, deltas);
      } catch (error) {
        this.outcome = { failure: error };
        break;
      }
      if (this.last) break;
      // The answer's first words leave on their own, before the rest of this read is parsed.
      if (!this.progress.yielded) this.hand(deltas);
    }
    if (first) {
      this.hand(deltas);
      this.reading = true;
      void SETTLED.then(this.endRead);
    }
    // Queued after endRead: this read's deltas are out before a cut settles the attempt.
    if (this.last && this.outcome === null) void SETTLED.then(this.endOrCut);
    this.clock.consumerBusy = false;
    this.clock.lastRead = Date.now();
    // Stopped now; settled once this read's deltas are out.
    return this.outcome !== null;
  }

  end(error?: unknown): void {
    this.handRest();
    if (error) this.reject(error);
    else this.resolve(true);
  }

  private hand(deltas: DeltaBatch): void {
    if (deltas.empty) return;
    this.progress.yielded = true;
    deltas.drain(this.onDelta);
  }

  private settle(): void {
    const outcome = this.outcome;
    if (outcome === null) return;
    if ("failure" in outcome) this.reject(outcome.failure);
    else this.resolve(false);
  }

  private handRest(): void {
    if (!this.reading) return;
    this.reading = false;
    this.clock.consumerBusy = true;
    this.hand(this.rest);
    this.clock.consumerBusy = false;
    this.settle();
  }

  /** After the read that brought the last event: read on to the end if the body is all here, else cut. */
  private cutUnlessWhole(): void {
    if (this.outcome !== null || isCompleteNodeBody(this.body)) return;
    this.outcome = { cut: true };
    this.reader.stop();
    this.settle();
  }
}

/** A Node response (IncomingMessage) whose whole body the HTTP parser has received. */
function isCompleteNodeBody(body: unknown): boolean {
  return typeof body === "object" && body !== null && (body as { complete?: unknown }).complete === true;
}
