/**
 * Our ChatMessages as a Responses API request (`POST /responses`). Stateless:
 * `store: false` and the full input every turn, so what the context builder
 * truncates stays truncated and no server-side state can drift from ours.
 *
 * Mapping: a leading system message → `instructions`, later ones → system
 * message items; user text → `input_text`, user images → `input_image`;
 * assistant text → `output_text`; an assistant's tool calls → `function_call`
 * items; tool results → `function_call_output` items. An assistant turn's
 * `providerItems` (encrypted reasoning) go back first, in the order the
 * endpoint produced them: before the turn's message and calls, as they came.
 */
import type { ResponseCreateParamsStreaming, ResponseInputItem } from "openai/resources/responses/responses";
import type { ChatMessage, ChatUserPart } from "../chat-message.js";
import type { ChatRequest } from "../provider.js";

export interface ResponsesWireOptions {
  /**
   * Ask for reasoning items with `encrypted_content` (`include:
   * ["reasoning.encrypted_content"]`), so a reasoning model's thinking can be
   * sent back on later turns without `store`. OpenAI refuses the include for
   * models that do not reason ("Encrypted content is not supported with this
   * model"), so by default it is asked for only when the call sets a
   * reasoning level (low, medium, high) — which a non-reasoning model would
   * refuse anyway. true: always; false: never.
   */
  encryptedReasoning?: boolean;
}

/** The `input` items (and `instructions`) for a message list; every call answered, no output without its call. */
export function responsesInput(messages: readonly ChatMessage[]): { instructions?: string; input: ResponseInputItem[] } {
  const input: ResponseInputItem[] = [];
  let instructions: string | undefined;
  const announced = new Set<string>();
  const unanswered = new Set<string>();
  messages.forEach((message, i) => {
    switch (message.role) {
      case "system":
        if (i === 0) instructions = message.content;
        else input.push({ type: "message", role: "system", content: [{ type: "input_text", text: message.content }] });
        return;
      case "user":
        input.push({ type: "message", role: "user", content: userContent(message.content) });
        return;
      case "assistant": {
        const calls = message.tool_calls ?? [];
        const text = message.content ?? "";
        // An item the endpoint produced needs its following item (a message or a call) after it.
        if (text === "" && calls.length === 0) return;
        // Only this API's reasoning items: the anthropic wire stores thinking blocks in the same place.
        for (const item of message.providerItems ?? []) if ((item as { type?: unknown }).type === "reasoning") input.push(item as ResponseInputItem);
        if (text !== "") {
          // The SDK's type wants an id and status (an output message echoed back); the API, like
          // Codex, takes an assistant message item without them, and with store false there is no id to give.
          input.push({
            type: "message",
            role: "assistant",
            content: [{ type: "output_text", text, annotations: [] }],
          } as unknown as ResponseInputItem);
        }
        for (const call of calls) {
          input.push({ type: "function_call", call_id: call.id, name: call.function.name, arguments: call.function.arguments });
          announced.add(call.id);
          unanswered.add(call.id);
        }
        return;
      }
      case "tool":
        // The context builder never makes an orphan; should one slip through, the endpoint would refuse the whole request.
        if (!announced.has(message.tool_call_id)) return;
        input.push({ type: "function_call_output", call_id: message.tool_call_id, output: message.content });
        unanswered.delete(message.tool_call_id);
        return;
    }
  });
  // Likewise a call without its output (the endpoint answers "No tool output found for function call").
  for (const id of unanswered) {
    const at = input.findLastIndex((item) => item.type === "function_call" && item.call_id === id);
    input.splice(at + 1, 0, { type: "function_call_output", call_id: id, output: "[no result]" });
  }
  return { ...(instructions !== undefined ? { instructions } : {}), input };
}

function userContent(content: string | ChatUserPart[]) {
  if (typeof content === "string") return [{ type: "input_text" as const, text: content }];
  return content.map((part) =>
    part.type === "text"
      ? { type: "input_text" as const, text: part.text }
      : { type: "input_image" as const, image_url: part.image_url.url, detail: "auto" as const },
  );
}

export function responsesRequestBody(request: ChatRequest, options: ResponsesWireOptions = {}): ResponseCreateParamsStreaming {
  const { instructions, input } = responsesInput(request.messages);
  const body: ResponseCreateParamsStreaming = {
    model: request.model,
    ...(instructions !== undefined ? { instructions } : {}),
    input,
    stream: true,
    store: false,
  };
  if (request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({
      type: "function",
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
      // Our schemas are not written for strict mode (every property required, no additionalProperties).
      strict: false,
    }));
  }
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.maxTokens !== undefined) body.max_output_tokens = request.maxTokens;
  // As on the chat wire, "off" sends nothing: "none" and "minimal" are each understood by some models only.
  const reasons = request.reasoning !== undefined && request.reasoning !== "off";
  if (reasons) body.reasoning = { effort: request.reasoning as "low" | "medium" | "high", summary: "auto" };
  if (options.encryptedReasoning ?? reasons) body.include = ["reasoning.encrypted_content"];
  return body;
}
