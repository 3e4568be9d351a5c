/**
 * The Chat Completions wire (`POST /chat/completions`, `stream: true`): the
 * request body from our ChatMessages, and the chunk stream read into deltas
 * and one done event.
 */
import type { ChatCompletionChunk, ChatCompletionCreateParamsStreaming, ChatCompletionFunctionTool } from "openai/resources/chat/completions";
import type { ChatMessage } from "../chat-message.js";
import { LlmError, type ChatRequest, type DoneEvent, type LlmToolSpec, type ProposedToolCall, type Usage } from "../provider.js";
import { parseStreamEvent } from "./stream-event.js";
import { connectOpenAI } from "./openai-client.js";
import type { DeltaBatch, Wire, WireStream } from "./wire.js";

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
  const prompt = usage.prompt_tokens ?? 0;
  const completion = usage.completion_tokens ?? 0;
  return {
    promptTokens: prompt,
    cachedPromptTokens: count(usage.prompt_tokens_details?.cached_tokens),
    completionTokens: completion,
    reasoningTokens: count(usage.completion_tokens_details?.reasoning_tokens),
    totalTokens: usage.total_tokens ?? prompt + completion,
  };
}

/** A token count the endpoint may leave out (or send as null): null then. */
function count(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : null;
}

/** One event's JSON; an `{"error": …}` event is the endpoint failing mid-stream. */
function parseChunk(data: string): ChatCompletionChunk {
  const chunk = parseStreamEvent<ChatCompletionChunk & { error?: { message?: unknown } }>(data, "chunk");
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

/**
 * Our messages as Chat Completions takes them: `providerItems` (another
 * wire's) is dropped, since a strict server refuses unknown message fields;
 * `reasoning`, left only for models that declare reasoningContent, goes as
 * DeepSeek's `reasoning_content`.
 */
function chatMessages(messages: ChatMessage[]): ChatMessage[] {
  if (!messages.some((m) => m.role === "assistant" && (m.providerItems !== undefined || m.reasoning !== undefined))) return messages;
  return messages.map((m) => {
    if (m.role !== "assistant" || (m.providerItems === undefined && m.reasoning === undefined)) return m;
    const { providerItems: _dropped, reasoning, ...rest } = m;
    return (reasoning === undefined ? rest : { ...rest, reasoning_content: reasoning }) as ChatMessage;
  });
}

export function chatRequestBody(request: ChatRequest): ChatCompletionCreateParamsStreaming {
  const body: ChatCompletionCreateParamsStreaming = {
    model: request.model,
    messages: chatMessages(request.messages),
    stream: true,
    stream_options: { include_usage: true },
  };
  if (request.tools.length > 0) body.tools = request.tools.map(toolEntry);
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
  return body;
}

/**
 * Each tool's entry of the request body as JSON, by spec object. The tools are most of a request's bytes
 * (and of the time JSON.stringify takes before it can leave); a server's specs are built once per tool
 * registry revision and never changed afterwards, so the same object always serializes the same.
 */
const toolJson = new WeakMap<LlmToolSpec, string>();

/**
 * chatRequestBody(request) as JSON, byte for byte what JSON.stringify makes of it (same keys, same
 * order), with each tool's entry reused from the calls before.
 */
export function chatRequestJson(request: ChatRequest): string {
  const body = chatRequestBody(request);
  if (body.tools === undefined) return JSON.stringify(body);
  const parts: string[] = [];
  for (const [key, value] of Object.entries(body)) {
    if (value === undefined) continue; // as JSON.stringify leaves it out
    parts.push(`${JSON.stringify(key)}:${key === "tools" ? toolsJson(request.tools) : JSON.stringify(value)}`);
  }
  return `{${parts.join(",")}}`;
}

function toolsJson(tools: readonly LlmToolSpec[]): string {
  const entries = tools.map((tool) => {
    let json = toolJson.get(tool);
    if (json === undefined) {
      json = JSON.stringify(toolEntry(tool));
      toolJson.set(tool, json);
    }
    return json;
  });
  return `[${entries.join(",")}]`;
}

function toolEntry(tool: LlmToolSpec): ChatCompletionFunctionTool {
  return { type: "function", function: { name: tool.name, description: tool.description, parameters: tool.parameters } };
}

class ChatStream implements WireStream {
  private readonly toolCalls = new ToolCallAccumulator();
  private finishReason: string | null | undefined;
  private usage: Usage | null = null;

  get complete(): boolean {
    return this.finishReason !== undefined;
  }

  feed(data: string, out: DeltaBatch): boolean {
    if (data === "[DONE]") return true;
    const chunk = parseChunk(data);
    this.usage = toUsage(chunk.usage) ?? this.usage;
    const choice = chunk.choices?.[0];
    if (!choice) return false;
    const delta = choice.delta ?? {};
    const reasoning = reasoningOf(delta as ReasoningDelta);
    if (reasoning) out.add("reasoning", reasoning);
    if (typeof delta.content === "string") out.add("text", delta.content);
    for (const fragment of delta.tool_calls ?? []) this.toolCalls.add(fragment);
    if (choice.finish_reason) this.finishReason = choice.finish_reason;
    return false;
  }

  done(): DoneEvent {
    if (this.finishReason === undefined) {
      throw new LlmError("the model endpoint's stream ended before completion (no finish_reason)", "connection");
    }
    return { type: "done", finishReason: this.finishReason, usage: this.usage, toolCalls: this.toolCalls.result() };
  }
}

export const chatWire: Wire = {
  name: "chat",
  connect: (connection) =>
    connectOpenAI(connection, {
      path: "/chat/completions",
      body: chatRequestBody,
      json: chatRequestJson,
      sdk: (client, body, signal) => client.chat.completions.create(body, { signal }).asResponse(),
    }),
  begin: () => new ChatStream(),
};
