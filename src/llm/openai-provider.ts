/**
 * LlmProvider over any OpenAI-compatible chat completions endpoint, through
 * the openai SDK's raw `create({ stream: true })` (the `.stream()` helper
 * mangles interleaved tool calls and reasoning; see LIBRARY-NOTES).
 *
 * Retries are ours, not the SDK's: an attempt is repeated only while nothing
 * has been yielded, so a caller never sees a token twice.
 */
import OpenAI from "openai";
import type { ChatCompletionChunk, ChatCompletionCreateParamsStreaming } from "openai/resources/chat/completions";
import { isRetryable, toLlmError } from "./openai-errors.js";
import {
  LlmError,
  type ChatRequest,
  type LlmProvider,
  type ModelInfo,
  type ProposedToolCall,
  type StreamEvent,
  type Usage,
} from "./provider.js";
import { createNodeHttpFetch, type NodeHttpFetch } from "./node-http-fetch.js";
import { readSseData } from "./sse-reader.js";

export interface OpenAIProviderOptions {
  /** Sent as a bearer token; local endpoints often need none ("none" is sent then). */
  apiKey?: string;
  /** Default https://api.openai.com/v1. The environment is not read here. */
  baseURL?: string;
  /** Headers sent with every request besides the SDK's own (config `providers.*.headers`). */
  defaultHeaders?: Record<string, string>;
  /** Extra attempts after the first for 429/5xx/connection failures before the first event (default 2). */
  maxRetries?: number;
  /** Backoff before retry n is base·2^(n-1), capped at the max, ±20 % jitter (defaults 250 ms and 1 s). */
  retryBaseDelayMs?: number;
  retryMaxDelayMs?: number;
  /** Abort when no chunk (or no response headers) arrives for this long (default 60 s). */
  idleTimeoutMs?: number;
  /** Abort one attempt that has not finished after this long, however lively (default 10 min). */
  requestTimeoutMs?: number;
  /**
   * HTTP transport under the SDK: "node" (default; node:http, streams read
   * without web streams — see node-http-fetch.ts) or "fetch" (the built-in fetch).
   */
  transport?: "node" | "fetch";
}

const DEFAULT_BASE_URL = "https://api.openai.com/v1";

/** Fields some servers add to the delta (DeepSeek, vLLM, OpenRouter); not in the SDK's types. */
interface ReasoningDelta {
  reasoning_content?: unknown;
  reasoning?: unknown;
}

/** Collects tool-call fragments, which arrive keyed by `index` and may interleave. */
class ToolCallAccumulator {
  private readonly calls = new Map<number, ProposedToolCall>();
  private lastIndex = -1;

  add(fragment: ChatCompletionChunk.Choice.Delta.ToolCall): void {
    // Some servers omit `index`; a new id then means a new call.
    let index = fragment.index;
    if (typeof index !== "number") {
      const existing = [...this.calls.entries()].find(([, call]) => fragment.id && call.id === fragment.id);
      if (existing) index = existing[0];
      else index = fragment.id || this.lastIndex < 0 ? this.lastIndex + 1 : this.lastIndex;
    }
    this.lastIndex = Math.max(this.lastIndex, index);
    let call = this.calls.get(index);
    if (!call) {
      call = { id: "", name: "", arguments: "" };
      this.calls.set(index, call);
    }
    if (fragment.id && !call.id) call.id = fragment.id;
    // The name comes once; some servers repeat it in later fragments, so never append.
    if (fragment.function?.name && !call.name) call.name = fragment.function.name;
    if (typeof fragment.function?.arguments === "string") call.arguments += fragment.function.arguments;
  }

  /** In index order; a call the server sent without an id gets one, so the history stays answerable. */
  result(): ProposedToolCall[] {
    return [...this.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, call]) => ({ ...call, id: call.id || `call_${index}_${Math.random().toString(36).slice(2, 10)}` }));
  }
}

function toUsage(usage: ChatCompletionChunk["usage"]): Usage | null {
  if (!usage) return null;
  return {
    promptTokens: usage.prompt_tokens ?? 0,
    completionTokens: usage.completion_tokens ?? 0,
    totalTokens: usage.total_tokens ?? (usage.prompt_tokens ?? 0) + (usage.completion_tokens ?? 0),
  };
}

/** One event's JSON; an `{"error": …}` event is the endpoint failing mid-stream. */
function parseChunk(data: string): ChatCompletionChunk {
  let chunk: ChatCompletionChunk & { error?: { message?: unknown } };
  try {
    chunk = JSON.parse(data);
  } catch (error) {
    throw new LlmError(`the model endpoint sent a chunk that is not valid JSON (${(error as Error).message})`, "malformed");
  }
  if (chunk && typeof chunk === "object" && chunk.error) {
    const message = typeof chunk.error.message === "string" ? chunk.error.message : JSON.stringify(chunk.error);
    throw new LlmError(`the model endpoint reported an error mid-stream: ${message}`, "http");
  }
  return chunk;
}

function reasoningOf(delta: ReasoningDelta): string {
  // Servers that send both fields send the same text twice: take one.
  if (typeof delta.reasoning_content === "string" && delta.reasoning_content !== "") return delta.reasoning_content;
  if (typeof delta.reasoning === "string") return delta.reasoning;
  return "";
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

export class OpenAIProvider implements LlmProvider {
  private readonly client: OpenAI;
  private readonly baseURL: string;
  private readonly maxRetries: number;
  private readonly retryBaseDelayMs: number;
  private readonly retryMaxDelayMs: number;
  private readonly idleTimeoutMs: number;
  private readonly requestTimeoutMs: number;
  private readonly http: NodeHttpFetch | undefined;

  constructor(options: OpenAIProviderOptions = {}) {
    this.baseURL = (options.baseURL ?? DEFAULT_BASE_URL).replace(/\/+$/, "");
    this.maxRetries = options.maxRetries ?? 2;
    this.retryBaseDelayMs = options.retryBaseDelayMs ?? 250;
    this.retryMaxDelayMs = options.retryMaxDelayMs ?? 1000;
    this.idleTimeoutMs = options.idleTimeoutMs ?? 60_000;
    this.requestTimeoutMs = options.requestTimeoutMs ?? 600_000;
    this.http = options.transport === "fetch" ? undefined : createNodeHttpFetch();
    this.client = new OpenAI({
      ...(this.http ? { fetch: this.http.fetch } : {}),
      apiKey: options.apiKey || "none",
      baseURL: this.baseURL,
      defaultHeaders: options.defaultHeaders,
      maxRetries: 0,
      timeout: this.requestTimeoutMs,
      // The SDK logs unparsable chunks to the console; we report them as LlmError instead.
      logLevel: "off",
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
        const error = toLlmError(err, this.baseURL);
        if (progress.yielded || attempt >= this.maxRetries || !isRetryable(error)) throw error;
        const backoff = Math.min(this.retryMaxDelayMs, this.retryBaseDelayMs * 2 ** attempt);
        if (!(await pause(backoff * (0.8 + Math.random() * 0.4), request.signal))) return;
      }
    }
  }

  /** One HTTP request. Throws on failure; returns quietly when the caller aborted. */
  private async *attempt(request: ChatRequest, progress: { yielded: boolean }): AsyncGenerator<StreamEvent> {
    const { signal } = request;
    // Our own controller, so the idle and request timeouts can abort without touching the caller's signal.
    const controller = new AbortController();
    const onCallerAbort = () => controller.abort();
    signal.addEventListener("abort", onCallerAbort, { once: true });
    let timedOut: LlmError | null = null;
    const expire = (error: LlmError) => {
      timedOut ??= error;
      controller.abort();
    };
    // One timer, refreshed per network read (cheaper than a new timer per chunk).
    // While our consumer handles events the clock is held: it measures the endpoint.
    let consumerBusy = false;
    const idleTimer: NodeJS.Timeout = setTimeout(() => {
      if (consumerBusy) idleTimer.refresh();
      else expire(new LlmError(`timed out: no data from the model endpoint for ${this.idleTimeoutMs} ms (--llm-idle-timeout)`, "timeout"));
    }, this.idleTimeoutMs);
    const requestTimer = setTimeout(
      () => expire(new LlmError(`the model did not finish its answer within ${this.requestTimeoutMs} ms`, "timeout")),
      this.requestTimeoutMs,
    );

    const body: ChatCompletionCreateParamsStreaming = {
      model: request.model,
      messages: request.messages,
      stream: true,
      stream_options: { include_usage: true },
    };
    if (request.tools.length > 0) {
      body.tools = request.tools.map((tool) => ({
        type: "function",
        function: { name: tool.name, description: tool.description, parameters: tool.parameters },
      }));
    }
    if (request.temperature !== undefined) body.temperature = request.temperature;
    // `max_tokens`, not `max_completion_tokens`: the SDK marks max_tokens deprecated (OpenAI's
    // o-series refuse it), but Ollama, LM Studio and older llama.cpp servers read only max_tokens
    // and silently ignore the newer name, while vLLM and OpenAI's other models accept both. A limit
    // that is refused with a clear 400 beats one that is quietly not applied.
    if (request.maxTokens !== undefined) body.max_tokens = request.maxTokens;
    // "off" sends nothing: there is no value every Chat Completions server accepts for "do not
    // reason" ("none" and "minimal" are each understood by some OpenAI models only, and a server
    // without reasoning models may refuse the field); a model that does not reason has nothing to turn off.
    if (request.reasoning !== undefined && request.reasoning !== "off") body.reasoning_effort = request.reasoning;

    const toolCalls = new ToolCallAccumulator();
    let finishReason: string | null | undefined;
    let usage: Usage | null = null;
    try {
      try {
        // The SDK builds and sends the request and turns HTTP errors into APIError;
        // the event stream itself is read by readSseData (see sse-reader.ts for why).
        const response = await this.client.chat.completions.create(body, { signal: controller.signal }).asResponse();
        const events: AsyncIterable<Uint8Array> | ReadableStream<Uint8Array> | null =
          this.http?.takeNodeBody(response) ?? response.body;
        if (!events) throw new LlmError("the model endpoint answered without a body", "connection");
        idleTimer.refresh();
        reading: for await (const batch of readSseData(events)) {
          const events: StreamEvent[] = [];
          // Consecutive deltas of one kind within a read become one event.
          let kind: "text" | "reasoning" | null = null;
          let pending = "";
          const add = (k: "text" | "reasoning", piece: string) => {
            if (kind !== k && pending) events.push({ type: kind!, delta: pending });
            if (kind !== k) pending = "";
            kind = k;
            pending += piece;
          };
          let sawDone = false;
          let failure: LlmError | undefined;
          for (const data of batch) {
            if (data === "[DONE]") {
              sawDone = true;
              break;
            }
            let chunk: ChatCompletionChunk;
            try {
              chunk = parseChunk(data);
            } catch (error) {
              failure = error as LlmError; // reported after the deltas that came before it
              break;
            }
            usage = toUsage(chunk.usage) ?? usage;
            const choice = chunk.choices?.[0];
            if (!choice) continue;
            const delta = choice.delta ?? {};
            const reasoning = reasoningOf(delta as ReasoningDelta);
            if (reasoning) add("reasoning", reasoning);
            if (typeof delta.content === "string" && delta.content !== "") add("text", delta.content);
            for (const fragment of delta.tool_calls ?? []) toolCalls.add(fragment);
            if (choice.finish_reason) finishReason = choice.finish_reason;
          }
          if (kind && pending) events.push({ type: kind, delta: pending });
          consumerBusy = true;
          for (const event of events) {
            progress.yielded = true;
            yield event;
          }
          consumerBusy = false;
          if (failure) throw failure;
          // The idle clock measures the endpoint, not how long our consumer took.
          idleTimer.refresh();
          if (sawDone) break reading;
        }
      } catch (err) {
        if (timedOut) throw timedOut;
        if (signal.aborted) return;
        // The answer was complete; only the trailing usage chunk or [DONE] got lost.
        if (finishReason === undefined || err instanceof LlmError) throw err;
      }
      if (timedOut) throw timedOut;
      if (signal.aborted) return;
      if (finishReason === undefined) {
        throw new LlmError("the model endpoint's stream ended before completion (no finish_reason)", "connection");
      }
      yield { type: "done", finishReason, usage, toolCalls: toolCalls.result() };
    } finally {
      clearTimeout(idleTimer);
      clearTimeout(requestTimer);
      signal.removeEventListener("abort", onCallerAbort);
      // Releases the socket on every early exit (error, timeout, consumer `break`).
      controller.abort();
    }
  }

  async listModels(signal?: AbortSignal): Promise<ModelInfo[]> {
    const noModels = (detail: string) =>
      new LlmError(`the endpoint at ${this.baseURL} lists no models (${detail})`, "http", 404);
    try {
      const page = await this.client.models.list({ signal, timeout: this.idleTimeoutMs });
      const models = page.data.map((model) => ({ id: model.id, ownedBy: model.owned_by || undefined }));
      if (models.length === 0) throw noModels("empty list");
      return models;
    } catch (err) {
      if (signal?.aborted) signal.throwIfAborted();
      if (err instanceof OpenAI.APIError && err.status === 404) {
        const body = err.error as { message?: unknown } | undefined;
        throw noModels(typeof body?.message === "string" ? `404: ${body.message}` : "404");
      }
      throw toLlmError(err, this.baseURL);
    }
  }
}
