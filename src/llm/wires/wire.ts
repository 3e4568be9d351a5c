/**
 * What differs between two model APIs: how a request is sent and how its
 * event stream reads. Everything else — retries, timeouts, error mapping,
 * SSE framing, the transport — is model-call.ts's, shared by every wire.
 */
import type { IncomingMessage } from "node:http";
import type { NodeHttpFetch } from "../node-http-fetch.js";
import type { ChatRequest, DoneEvent, LlmError, ModelInfo } from "../provider.js";

import type { WireName } from "../../../protocol/config-providers.js";

export type { WireName };

/**
 * Consecutive deltas of one kind within a network read, merged: one read
 * often carries dozens of tokens, and one event per read keeps the per-token
 * cost of everything downstream low.
 *
 * A batch is emptied by taking its events and then filled again: a model
 * call reads with the same batches from its first read to its last. A paced
 * stream brings one token per read, and a fresh batch per read (the object,
 * its event list and an object per event) was ~250 bytes allocated per token
 * (a sampling heap profile of 100 streams, issue 27), garbage that the
 * young-generation collections then had to go through.
 */
export class DeltaBatch {
  /** The merged events so far: kinds[i] and deltas[i] for i < count; the arrays are reused. */
  private readonly kinds: Array<"text" | "reasoning"> = [];
  private readonly deltas: string[] = [];
  private count = 0;
  private kind: "text" | "reasoning" | null = null;
  private pending = "";

  add(kind: "text" | "reasoning", piece: string): void {
    if (piece === "") return;
    if (kind !== this.kind) {
      this.flush();
      this.kind = kind;
    }
    this.pending += piece;
  }

  /** Whether the batch holds no delta. */
  get empty(): boolean {
    return this.count === 0 && (this.kind === null || this.pending === "");
  }

  /** The merged events so far, in order, as objects; the batch is empty afterwards. */
  take(): Array<{ type: "text" | "reasoning"; delta: string }> {
    this.flush();
    const events: Array<{ type: "text" | "reasoning"; delta: string }> = [];
    for (let i = 0; i < this.count; i++) events.push({ type: this.kinds[i]!, delta: this.deltas[i]! });
    this.clear();
    return events;
  }

  /**
   * Calls `to` with each merged event so far, in order, without making an
   * object of it; the batch is empty afterwards. `to` must not add to this
   * batch (the events are read from the arrays it would write).
   */
  drain(to: (kind: "text" | "reasoning", delta: string) => void): void {
    this.flush();
    const n = this.count;
    this.count = 0;
    this.kind = null;
    for (let i = 0; i < n; i++) {
      const delta = this.deltas[i]!;
      this.deltas[i] = ""; // not kept alive until the slot is written again
      to(this.kinds[i]!, delta);
    }
  }

  private clear(): void {
    for (let i = 0; i < this.count; i++) this.deltas[i] = "";
    this.count = 0;
    this.kind = null;
  }

  private flush(): void {
    if (this.kind && this.pending) {
      this.kinds[this.count] = this.kind;
      this.deltas[this.count] = this.pending;
      this.count++;
    }
    this.pending = "";
  }
}

/** The reading state of one HTTP attempt. */
export interface WireStream {
  /**
   * One SSE `data` payload: adds its deltas to `out`, and returns true when
   * it was the stream's last event. Throws LlmError on an error event or a
   * payload that is not JSON.
   */
  feed(data: string, out: DeltaBatch): boolean;
  /**
   * True once the answer is complete (chat: a finish_reason came; responses:
   * response.completed or response.incomplete): a connection lost after this
   * loses nothing the caller needs.
   */
  readonly complete: boolean;
  /** The closing event; throws LlmError (kind connection) when the stream ended before `complete`. */
  done(): DoneEvent;
}

/** What every wire's SDK client is made from: one provider's endpoint and transport (model-call.ts fills it). */
export interface WireConnection {
  /** "none" when the endpoint takes no key. */
  apiKey: string;
  baseURL: string;
  headers?: Record<string, string>;
  /** The transport under the SDK (node-http-fetch.ts); absent: the built-in fetch. */
  fetch?: (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
  /** The same node:http transport, for a wire that sends its streaming request without the SDK (openai-direct.ts); absent with the built-in fetch. */
  http?: NodeHttpFetch;
  timeoutMs: number;
}

/** One provider's SDK client, as a wire uses it. */
export interface WireClient {
  /**
   * Sends the streaming request through the SDK (which builds the URL,
   * headers and auth, and turns an HTTP error into its APIError), or as the
   * SDK would (openai-direct.ts), and returns the raw response, whose body
   * model-call.ts reads: a fetch Response, or the Node response itself.
   */
  send(request: ChatRequest, signal: AbortSignal): Promise<Response | IncomingMessage>;
  /** The endpoint's models; throws LlmError (404 when it lists none). */
  listModels(signal: AbortSignal | undefined, timeoutMs: number): Promise<ModelInfo[]>;
  /** Whatever the SDK (or the fetch under it) threw, as an LlmError. */
  toLlmError(err: unknown): LlmError;
  /** Loads what the client needs (a lazily imported SDK) before a request's timeouts start counting. */
  ready?(): Promise<void>;
}

export interface Wire {
  readonly name: WireName;
  /** This wire's SDK client for one provider (made once, when the provider is). */
  connect(connection: WireConnection): WireClient;
  /** A fresh reader for one attempt. */
  begin(): WireStream;
}
