/**
 * The Anthropic Messages API wire (`POST /v1/messages`, `stream: true`): the
 * request from anthropic-request.ts, sent by anthropic-client.ts, and the
 * event stream read into deltas and one done event.
 *
 * Events used: `message_start` (the first usage: input and cache tokens),
 * `content_block_start` / `content_block_delta` / `content_block_stop` —
 * text_delta → text, thinking_delta → reasoning, signature_delta completes a
 * thinking block, input_json_delta assembles a tool_use's input —
 * `message_delta` (stop_reason, the final output tokens), `message_stop`
 * (the end) and `error` (a failure mid-stream, e.g. overloaded_error).
 * `ping` and anything unknown are skipped.
 *
 * Thinking and redacted_thinking blocks come back whole (text and signature)
 * as the done event's `providerItems`: the loop stores them on the assistant
 * record and the request re-sends them unchanged at the head of that turn.
 */
import { LlmError, type DoneEvent, type ProposedToolCall, type Usage } from "../provider.js";
import { parseStreamEvent } from "./stream-event.js";
import { connectAnthropic } from "./anthropic-client.js";
import type { DeltaBatch, Wire, WireStream } from "./wire.js";

type Json = Record<string, any>;

/** stop_reason → the finish reasons the other wires give. */
const STOP_REASONS: Record<string, string> = {
  end_turn: "stop",
  stop_sequence: "stop",
  pause_turn: "stop",
  tool_use: "tool_calls",
  max_tokens: "length",
  model_context_window_exceeded: "length",
  refusal: "content_filter",
};

interface Block {
  type: string;
  /** text, thinking: the text; tool_use: the input JSON text. */
  text: string;
  signature?: string;
  /** redacted_thinking: its opaque data. */
  data?: string;
  id?: string;
  name?: string;
}

function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : 0;
}

export class AnthropicStream implements WireStream {
  private readonly blocks = new Map<number, Block>();
  private raw: Json = {};
  private stopReason: string | null | undefined;
  private stopped = false;

  get complete(): boolean {
    return this.stopReason !== undefined;
  }

  feed(data: string, out: DeltaBatch): boolean {
    const event = parseStreamEvent<Json>(data, "event");
    if (!event || typeof event !== "object") return false;
    switch (event.type) {
      case "message_start":
        this.raw = { ...(event.message?.usage ?? {}) };
        return false;
      case "content_block_start": {
        const block = event.content_block ?? {};
        const entry: Block = { type: String(block.type), text: typeof block.text === "string" ? block.text : typeof block.thinking === "string" ? block.thinking : "" };
        if (block.type === "tool_use") {
          entry.id = block.id;
          entry.name = block.name;
          // The start carries `input: {}`; the input JSON arrives as deltas.
          entry.text = "";
        }
        if (block.type === "redacted_thinking") entry.data = block.data;
        if (typeof block.signature === "string") entry.signature = block.signature;
        this.blocks.set(event.index, entry);
        if (entry.type === "text") out.add("text", entry.text);
        if (entry.type === "thinking") out.add("reasoning", entry.text);
        return false;
      }
      case "content_block_delta": {
        const block = this.blocks.get(event.index);
        const delta = event.delta ?? {};
        if (!block) return false;
        if (delta.type === "text_delta" && typeof delta.text === "string") {
          block.text += delta.text;
          out.add("text", delta.text);
        } else if (delta.type === "thinking_delta" && typeof delta.thinking === "string") {
          block.text += delta.thinking;
          out.add("reasoning", delta.thinking);
        } else if (delta.type === "signature_delta" && typeof delta.signature === "string") {
          block.signature = (block.signature ?? "") + delta.signature;
        } else if (delta.type === "input_json_delta" && typeof delta.partial_json === "string") {
          block.text += delta.partial_json;
        }
        return false;
      }
      case "message_delta":
        // Its usage counts are cumulative: they replace message_start's.
        this.raw = { ...this.raw, ...Object.fromEntries(Object.entries(event.usage ?? {}).filter(([, v]) => v !== null && v !== undefined)) };
        if (event.delta && "stop_reason" in event.delta) {
          const reason = event.delta.stop_reason;
          this.stopReason = typeof reason === "string" ? (STOP_REASONS[reason] ?? reason) : null;
        }
        return false;
      case "message_stop":
        this.stopped = true;
        this.stopReason ??= null;
        return true;
      case "error": {
        const error = event.error ?? {};
        const code = typeof error.type === "string" ? error.type : undefined;
        throw new LlmError(
          `the model endpoint reported an error mid-stream: ${error.message ?? JSON.stringify(event)}${code ? ` (${code})` : ""}`,
          "http",
          undefined,
          undefined,
          code,
        );
      }
      default:
        return false;
    }
  }

  /**
   * promptTokens counts every input token: the API's input_tokens leaves out
   * the cache's reads and writes, which are counted apart.
   */
  private usage(): Usage | null {
    if (this.raw.input_tokens === undefined && this.raw.output_tokens === undefined) return null;
    const read = count(this.raw.cache_read_input_tokens);
    const written = count(this.raw.cache_creation_input_tokens);
    const prompt = count(this.raw.input_tokens) + read + written;
    const completion = count(this.raw.output_tokens);
    const thinking = this.raw.output_tokens_details?.thinking_tokens;
    return {
      promptTokens: prompt,
      cachedPromptTokens: typeof this.raw.cache_read_input_tokens === "number" ? read : null,
      cacheWritePromptTokens: typeof this.raw.cache_creation_input_tokens === "number" ? written : null,
      completionTokens: completion,
      reasoningTokens: typeof thinking === "number" ? thinking : null,
      totalTokens: prompt + completion,
    };
  }

  done(): DoneEvent {
    if (!this.stopped && this.stopReason === undefined) {
      throw new LlmError("the model endpoint's stream ended before completion (no message_stop)", "connection");
    }
    const ordered = [...this.blocks.entries()].sort(([a], [b]) => a - b).map(([, block]) => block);
    const toolCalls: ProposedToolCall[] = ordered
      .filter((block) => block.type === "tool_use")
      .map((block, i) => ({
        id: block.id || `toolu_${i}_${Math.random().toString(36).slice(2, 10)}`,
        name: block.name ?? "",
        // A tool without parameters streams no input at all.
        arguments: block.text === "" ? "{}" : block.text,
      }));
    const providerItems = ordered.flatMap((block): Array<Record<string, string>> => {
      if (block.type === "thinking" && block.signature) return [{ type: "thinking", thinking: block.text, signature: block.signature }];
      if (block.type === "redacted_thinking" && typeof block.data === "string") return [{ type: "redacted_thinking", data: block.data }];
      return [];
    });
    return {
      type: "done",
      finishReason: this.stopReason ?? (toolCalls.length > 0 ? "tool_calls" : "stop"),
      usage: this.usage(),
      toolCalls,
      ...(providerItems.length > 0 ? { providerItems } : {}),
    };
  }
}

export const anthropicWire: Wire = {
  name: "anthropic",
  connect: connectAnthropic,
  begin: () => new AnthropicStream(),
};
