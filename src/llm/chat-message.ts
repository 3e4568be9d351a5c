/**
 * Chat messages as the OpenAI chat completions API takes them. Kept as our
 * own minimal types (structurally compatible with the SDK's) so that the
 * context builder and the loop do not depend on one provider's package.
 */
export interface ChatToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/** A piece of a user message: text, or an image given as a URL (a data: URL for uploaded images). */
export type ChatUserPart = { type: "text"; text: string } | { type: "image_url"; image_url: { url: string } };

export type ChatMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string | ChatUserPart[] }
  | {
      role: "assistant";
      content: string | null;
      tool_calls?: ChatToolCall[];
      /**
       * Items the endpoint produced with this turn and wants back, opaque
       * (the Responses API's encrypted reasoning, the Messages API's signed
       * thinking blocks): the wire that made them re-sends them before the
       * turn's message and calls (each only its own kind); the chat wire leaves them out.
       */
      providerItems?: unknown[];
      /**
       * The thinking stored for this turn (its reasoning record). The provider
       * registry keeps it only for a model that declares reasoningContent; the
       * chat wire sends it as `reasoning_content`, the responses wire never.
       */
      reasoning?: string;
    }
  | { role: "tool"; tool_call_id: string; content: string };
