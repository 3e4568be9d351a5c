/**
 * The Responses API wire (`POST /responses`, `stream: true`): the request
 * from responses-request.ts, and the typed event stream read into deltas
 * and one done event.
 *
 * Events used: `response.output_text.delta` (and `response.refusal.delta`)
 * → text; `response.reasoning_summary_text.delta` (and
 * `response.reasoning_text.delta`, which open-weight servers send) →
 * reasoning; function calls assembled from `response.output_item.added`,
 * `response.function_call_arguments.delta` / `.done` and
 * `response.output_item.done`; usage and the end from `response.completed`
 * or `response.incomplete`; failures from `response.failed` and `error`.
 * Everything else (created, in_progress, content parts, *.done texts) carries
 * nothing new and is skipped.
 */
import { LlmError, type ChatRequest, type DoneEvent, type ProposedToolCall, type Usage } from "../provider.js";
import { parseStreamEvent } from "./stream-event.js";
import { responsesRequestBody, type ResponsesWireOptions } from "./responses-request.js";
import { connectOpenAI } from "./openai-client.js";
import type { DeltaBatch, Wire, WireStream } from "./wire.js";

type Json = Record<string, any>;

interface CallInProgress {
  outputIndex: number;
  callId: string;
  name: string;
  arguments: string;
}

function toUsage(usage: Json | null | undefined): Usage | null {
  if (!usage || typeof usage !== "object") return null;
  const input = typeof usage.input_tokens === "number" ? usage.input_tokens : 0;
  const output = typeof usage.output_tokens === "number" ? usage.output_tokens : 0;
  return {
    promptTokens: input,
    cachedPromptTokens: detail(usage.input_tokens_details, "cached_tokens"),
    completionTokens: output,
    reasoningTokens: detail(usage.output_tokens_details, "reasoning_tokens"),
    totalTokens: typeof usage.total_tokens === "number" ? usage.total_tokens : input + output,
  };
}

/** A count inside one of usage's `*_details` objects; null when the endpoint leaves it out. */
function detail(details: unknown, key: string): number | null {
  if (!details || typeof details !== "object") return null;
  const value = (details as Record<string, unknown>)[key];
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : null;
}

/** A reasoning item worth sending back: without its encrypted content, a `store: false` endpoint cannot resolve its id (404). */
function keepable(item: Json): boolean {
  return item.type === "reasoning" && typeof item.encrypted_content === "string" && item.encrypted_content !== "";
}

const INCOMPLETE_REASONS: Record<string, string> = { max_output_tokens: "length", content_filter: "content_filter" };

export class ResponsesStream implements WireStream {
  /** By item id (the argument deltas name the item), in arrival order. */
  private readonly calls = new Map<string, CallInProgress>();
  private readonly reasoningItems: Array<{ outputIndex: number; item: Json }> = [];
  /** The summary part the last reasoning delta belonged to: a new part starts a new paragraph. */
  private summaryPart: string | null = null;
  private finishReason: string | null | undefined;
  private usage: Usage | null = null;

  get complete(): boolean {
    return this.finishReason !== undefined;
  }

  feed(data: string, out: DeltaBatch): boolean {
    const event = parseStreamEvent<Json>(data, "event");
    if (!event || typeof event !== "object") return false;
    switch (event.type) {
      case "response.output_text.delta":
      case "response.refusal.delta":
        if (typeof event.delta === "string") out.add("text", event.delta);
        return false;
      case "response.reasoning_summary_text.delta":
      case "response.reasoning_text.delta": {
        if (typeof event.delta !== "string") return false;
        const part = `${event.item_id}:${event.summary_index ?? event.content_index ?? 0}`;
        if (this.summaryPart !== null && this.summaryPart !== part) out.add("reasoning", "\n\n");
        this.summaryPart = part;
        out.add("reasoning", event.delta);
        return false;
      }
      case "response.output_item.added":
      case "response.output_item.done":
        this.item(event.item, event.output_index, event.type === "response.output_item.done");
        return false;
      case "response.function_call_arguments.delta": {
        const call = this.calls.get(event.item_id);
        if (call && typeof event.delta === "string") call.arguments += event.delta;
        return false;
      }
      case "response.function_call_arguments.done": {
        const call = this.calls.get(event.item_id);
        if (call && typeof event.arguments === "string") call.arguments = event.arguments;
        return false;
      }
      case "response.completed":
      case "response.incomplete":
        this.finish(event.response ?? {}, event.type === "response.incomplete");
        return true;
      case "response.failed": {
        const error = event.response?.error;
        const detail = error ? `${error.message ?? "no message"}${error.code ? ` (${error.code})` : ""}` : "no error given";
        const code = typeof error?.code === "string" ? error.code : undefined;
        throw new LlmError(`the model endpoint reported an error mid-stream: the response failed: ${detail}`, "http", undefined, undefined, code);
      }
      case "error":
        throw new LlmError(
          `the model endpoint reported an error mid-stream: ${event.message ?? JSON.stringify(event)}${event.code ? ` (${event.code})` : ""}`,
          "http",
          undefined,
          undefined,
          typeof event.code === "string" ? event.code : undefined,
        );
      default:
        return false;
    }
  }

  /** An output item as announced (added) or finished (done). */
  private item(item: Json | undefined, outputIndex: unknown, finished: boolean): void {
    if (!item || typeof item !== "object") return;
    const index = typeof outputIndex === "number" ? outputIndex : this.calls.size + this.reasoningItems.length;
    if (item.type === "function_call") {
      const key = typeof item.id === "string" ? item.id : `#${index}`;
      const call = this.calls.get(key) ?? { outputIndex: index, callId: "", name: "", arguments: "" };
      if (typeof item.call_id === "string" && item.call_id) call.callId = item.call_id;
      if (typeof item.name === "string" && item.name) call.name = item.name;
      // The finished item's arguments are the whole text; the added one's are usually empty.
      if (typeof item.arguments === "string" && (finished || item.arguments !== "")) call.arguments = item.arguments;
      this.calls.set(key, call);
    } else if (finished && keepable(item)) {
      this.reasoningItems.push({ outputIndex: index, item });
    }
  }

  private finish(response: Json, incomplete: boolean): void {
    this.usage = toUsage(response.usage);
    // The final response lists every output item: trust it over what the deltas assembled.
    if (Array.isArray(response.output) && response.output.length > 0) {
      this.calls.clear();
      this.reasoningItems.length = 0;
      response.output.forEach((item: Json, index: number) => this.item(item, index, true));
    }
    const reason = response.incomplete_details?.reason;
    if (incomplete) this.finishReason = INCOMPLETE_REASONS[reason] ?? (typeof reason === "string" ? reason : "length");
    else this.finishReason = this.calls.size > 0 ? "tool_calls" : "stop";
  }

  done(): DoneEvent {
    if (this.finishReason === undefined) {
      throw new LlmError("the model endpoint's stream ended before completion (no response.completed)", "connection");
    }
    const toolCalls: ProposedToolCall[] = [...this.calls.values()]
      .sort((a, b) => a.outputIndex - b.outputIndex)
      .map((call) => ({
        // A call without an id would make the history unanswerable.
        id: call.callId || `call_${call.outputIndex}_${Math.random().toString(36).slice(2, 10)}`,
        name: call.name,
        arguments: call.arguments,
      }));
    const providerItems = this.reasoningItems.sort((a, b) => a.outputIndex - b.outputIndex).map((r) => r.item);
    return {
      type: "done",
      finishReason: this.finishReason,
      usage: this.usage,
      toolCalls,
      ...(providerItems.length > 0 ? { providerItems } : {}),
    };
  }
}

export function createResponsesWire(options: ResponsesWireOptions = {}): Wire {
  return {
    name: "responses",
    connect: (connection) =>
      connectOpenAI(connection, {
        path: "/responses",
        body: (request: ChatRequest) => responsesRequestBody(request, options),
        sdk: (client, body, signal) => client.responses.create(body, { signal }).asResponse(),
      }),
    begin: () => new ResponsesStream(),
  };
}
