import type { TokenUsage } from "../../protocol/usage.js";
import type { ChatMessage } from "./chat-message.js";

export interface LlmToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
}

/** How hard a reasoning model should think; "off" asks for no reasoning (see each provider for what it sends). */
export type ReasoningLevel = "off" | "low" | "medium" | "high";

/** Generation controls for one model call; an absent one is left to the endpoint's default. */
export interface ModelControls {
  /** 0–2. */
  temperature?: number;
  /** Most tokens the model may write in this call. */
  maxTokens?: number;
  reasoning?: ReasoningLevel;
}

export interface ChatRequest extends ModelControls {
  model: string;
  messages: ChatMessage[];
  tools: LlmToolSpec[];
  /** Aborting ends the stream (and the HTTP request) at once. */
  signal: AbortSignal;
  /**
   * Takes the answer's text and reasoning deltas as they are read, instead
   * of the stream yielding them: a provider that can hands each one over
   * inside the network read that brought it, so a token is on its way to
   * the client before Node's stream and promise machinery runs (issue 27: on
   * a paced stream that machinery held a token ~0.14 ms between the socket
   * read and its frame). Events other than deltas are still yielded; a
   * provider that cannot call it yields the deltas as before, so a consumer
   * handles both. Must not throw.
   */
  onDelta?: (kind: "text" | "reasoning", delta: string) => void;
}

/** A model call's tokens as the endpoint reports them (the two details null when it does not say). */
export type Usage = TokenUsage;

export interface ProposedToolCall {
  id: string;
  name: string;
  /** Raw JSON text as the model produced it (may be invalid JSON). */
  arguments: string;
}

/** The last event of a model call. */
export interface DoneEvent {
  type: "done";
  finishReason: string | null;
  usage: Usage | null;
  toolCalls: ProposedToolCall[];
  /**
   * Opaque items the endpoint wants back with this turn on later requests, in
   * the order it produced them (the Responses API's encrypted reasoning
   * items; the Messages API's signed thinking blocks). Stored on the assistant record as `providerItems`; absent when there are none.
   */
  providerItems?: unknown[];
}

/**
 * Something the model call wants the user told that ends nothing: a retry
 * about to be made, a rate limit the endpoint reported. The loop publishes
 * it as a `notice` notification (protocol/notices.ts has the codes).
 */
export interface NoticeEvent {
  type: "notice";
  level: "info" | "warning";
  code: "model_retry" | "rate_limited";
  message: string;
  data: Record<string, unknown>;
}

export type StreamEvent = { type: "text"; delta: string } | { type: "reasoning"; delta: string } | NoticeEvent | DoneEvent;

export interface ModelInfo {
  id: string;
  ownedBy?: string;
}

/**
 * The seam between the loop and a model endpoint. `stream` yields deltas and
 * ends with exactly one `done` event, or throws LlmError. When the signal is
 * aborted the iteration ends early without a `done`; callers check
 * `signal.aborted`.
 */
export interface LlmProvider {
  stream(request: ChatRequest): AsyncIterable<StreamEvent>;
  listModels(signal?: AbortSignal): Promise<ModelInfo[]>;
}

export type LlmErrorKind = "http" | "connection" | "timeout" | "malformed";

/**
 * A model endpoint failure, with the provider's HTTP status when there was
 * one, and the response headers that say when to try again (retry-after,
 * retry-after-ms, x-ratelimit-*; lower-case names), when it sent any.
 */
export class LlmError extends Error {
  constructor(
    message: string,
    readonly kind: LlmErrorKind,
    readonly status?: number,
    readonly headers?: Readonly<Record<string, string>>,
    /** The endpoint's error code when it sent one (e.g. "context_length_exceeded"). */
    readonly code?: string,
  ) {
    super(message);
    this.name = "LlmError";
  }
}
