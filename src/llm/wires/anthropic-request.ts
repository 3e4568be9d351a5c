/**
 * Our ChatMessages as an Anthropic Messages API request (`POST /v1/messages`,
 * `stream: true`).
 *
 * Mapping: system messages → the top-level `system` blocks (the API has no
 * system role in `messages`); user text → text blocks, user images → image
 * blocks (a data: URL as a base64 source, any other URL as a url source);
 * assistant text → a text block, its tool calls → tool_use blocks (the
 * arguments parsed: `input` must be an object); tool results → tool_result
 * blocks in the user turn that follows. The API wants user and assistant
 * turns to alternate, so consecutive turns of one role are merged (tool
 * results and the user's next message become one user turn, results first).
 * An assistant turn's `providerItems` of this wire (thinking and
 * redacted_thinking blocks, signature included) go back first in its
 * content, unchanged, as the API requires for a turn that called tools.
 *
 * Prompt caching: `cache_control: {type: "ephemeral"}` on the first system
 * block (the system prompt) and on the last tool, the two parts of the
 * prefix that stay the same from one request to the next.
 *
 * A `temperature` setting is not sent: the Messages API no longer takes one.
 */
import type Anthropic from "@anthropic-ai/sdk";
import type { ChatMessage, ChatUserPart } from "../chat-message.js";
import type { ChatRequest, ReasoningLevel } from "../provider.js";

type Block = Anthropic.ContentBlockParam;
type Turn = { role: "user" | "assistant"; content: Block[] };

/**
 * `max_tokens` when the call sets none: the API requires one. 8192 is what
 * every current Claude model can write (Claude 3 Haiku, at 4096, needs a
 * maxTokens setting).
 */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 8192;

/**
 * Reasoning level → extended thinking's `budget_tokens` (1024 is the API's
 * least). "off" sends no `thinking` (the API's default: no thinking).
 */
export const THINKING_BUDGETS: Record<Exclude<ReasoningLevel, "off">, number> = { low: 1024, medium: 4096, high: 16384 };

const MIN_THINKING_BUDGET = 1024;

const CACHE = { type: "ephemeral" } as const;

/** Tool-use ids must match ^[a-zA-Z0-9_-]+$; another wire's ids may not. */
function toolUseId(id: string): string {
  const clean = id.replace(/[^a-zA-Z0-9_-]/g, "_");
  return clean === "" ? "call" : clean;
}

/** The thinking blocks this wire stored on a turn (another wire's items are not for this API). */
function thinkingBlocks(items: readonly unknown[] | undefined): Block[] {
  return (items ?? []).filter(
    (item): item is Block =>
      typeof item === "object" && item !== null && ((item as { type?: unknown }).type === "thinking" || (item as { type?: unknown }).type === "redacted_thinking"),
  );
}

function toolInput(args: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(args);
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // Invalid JSON the model wrote: its tool result already told it; the API takes only an object.
  }
  return {};
}

const DATA_URL = /^data:(image\/(?:jpeg|png|gif|webp));base64,(.*)$/s;

function userBlocks(content: string | ChatUserPart[]): Block[] {
  if (typeof content === "string") return content === "" ? [] : [{ type: "text", text: content }];
  const blocks: Block[] = [];
  for (const part of content) {
    if (part.type === "text") {
      if (part.text !== "") blocks.push({ type: "text", text: part.text });
      continue;
    }
    const data = DATA_URL.exec(part.image_url.url);
    blocks.push(
      data
        ? { type: "image", source: { type: "base64", media_type: data[1] as "image/png", data: data[2]! } }
        : { type: "image", source: { type: "url", url: part.image_url.url } },
    );
  }
  return blocks;
}

/** `system` and `messages` for a message list: alternating turns, every tool_use answered, no orphan result. */
export function anthropicMessages(messages: readonly ChatMessage[]): { system: Anthropic.TextBlockParam[]; messages: Turn[] } {
  const system: Anthropic.TextBlockParam[] = [];
  const turns: Turn[] = [];
  const push = (role: Turn["role"], blocks: Block[]) => {
    if (blocks.length === 0) return;
    const last = turns.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else turns.push({ role, content: blocks });
  };
  // Calls of the last assistant turn still waiting for their result.
  let unanswered: string[] = [];
  const answerRest = () => {
    if (unanswered.length > 0) push("user", unanswered.map((id) => ({ type: "tool_result", tool_use_id: id, content: "[no result]" })));
    unanswered = [];
  };
  for (const message of messages) {
    switch (message.role) {
      case "system":
        if (message.content !== "") system.push({ type: "text", text: message.content });
        break;
      case "user":
        answerRest();
        push("user", userBlocks(message.content));
        break;
      case "assistant": {
        answerRest();
        const calls = message.tool_calls ?? [];
        const text = message.content ?? "";
        if (text === "" && calls.length === 0) break;
        const blocks: Block[] = [...thinkingBlocks(message.providerItems)];
        if (text !== "") blocks.push({ type: "text", text });
        for (const call of calls) {
          const id = toolUseId(call.id);
          blocks.push({ type: "tool_use", id, name: call.function.name, input: toolInput(call.function.arguments) });
          unanswered.push(id);
        }
        push("assistant", blocks);
        break;
      }
      case "tool": {
        const id = toolUseId(message.tool_call_id);
        // The context builder never makes an orphan; should one slip through, the API would refuse the whole request.
        if (!unanswered.includes(id)) break;
        unanswered = unanswered.filter((other) => other !== id);
        push("user", [{ type: "tool_result", tool_use_id: id, content: message.content === "" ? "[empty]" : message.content }]);
        break;
      }
    }
  }
  answerRest();
  if (system.length > 0) system[0] = { ...system[0]!, cache_control: CACHE };
  return { system, messages: turns };
}

export function anthropicRequestBody(request: ChatRequest): Anthropic.MessageCreateParamsStreaming {
  const { system, messages } = anthropicMessages(request.messages);
  const body: Anthropic.MessageCreateParamsStreaming = {
    model: request.model,
    max_tokens: request.maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS,
    messages,
    stream: true,
  };
  if (system.length > 0) body.system = system;
  if (request.tools.length > 0) {
    body.tools = request.tools.map((tool, i, all) => ({
      name: tool.name,
      description: tool.description,
      input_schema: tool.parameters as Anthropic.Tool.InputSchema,
      ...(i === all.length - 1 ? { cache_control: CACHE } : {}),
    }));
  }
  const budget = request.reasoning !== undefined && request.reasoning !== "off" ? THINKING_BUDGETS[request.reasoning] : undefined;
  if (budget !== undefined) {
    if (request.maxTokens === undefined) {
      // The budget counts toward max_tokens: the default leaves the answer its usual room.
      body.max_tokens = budget + ANTHROPIC_DEFAULT_MAX_TOKENS;
      body.thinking = { type: "enabled", budget_tokens: budget };
    } else if (request.maxTokens > MIN_THINKING_BUDGET) {
      // A set maxTokens is kept; the budget must stay below it.
      body.thinking = { type: "enabled", budget_tokens: Math.min(budget, request.maxTokens - 1) };
    }
    // A maxTokens too small for the least budget: no thinking rather than a refused request.
  }
  // No temperature: the Messages API of @anthropic-ai/sdk 1.x takes none (it refused one with thinking on before).
  return body;
}
