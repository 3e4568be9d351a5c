/**
 * A Responses API request read back as Chat Completions messages, so a test
 * can assert on what the model was shown the same way on either wire:
 * `instructions` → a leading system message; message items → messages
 * (a lone text part becomes a string); `function_call` items → the
 * `tool_calls` of an assistant message (joined to the assistant message
 * right before them); `function_call_output` → a tool message. Reasoning
 * items carry nothing a chat request could show and are left out.
 */
type Json = Record<string, any>;

function chatContent(content: unknown): unknown {
  if (typeof content === "string" || !Array.isArray(content)) return content;
  const parts = content.map((part: Json) => {
    if (part.type === "input_text" || part.type === "output_text") return { type: "text", text: part.text };
    if (part.type === "refusal") return { type: "text", text: part.refusal };
    if (part.type === "input_image") return { type: "image_url", image_url: { url: part.image_url } };
    return part;
  });
  if (parts.every((p: Json) => p.type === "text") && (parts.length === 1 || content[0]?.type === "output_text")) {
    return parts.map((p: Json) => p.text).join("");
  }
  return parts;
}

export function chatViewOfResponses(body: Json): Json[] {
  const messages: Json[] = [];
  if (typeof body.instructions === "string") messages.push({ role: "system", content: body.instructions });
  const input = typeof body.input === "string" ? [{ type: "message", role: "user", content: body.input }] : (body.input ?? []);
  let openAssistant: Json | null = null;
  for (const item of input as Json[]) {
    const type = item.type ?? "message";
    if (type === "message") {
      const message = { role: item.role, content: chatContent(item.content) };
      messages.push(message);
      openAssistant = item.role === "assistant" ? message : null;
    } else if (type === "function_call") {
      if (!openAssistant) {
        openAssistant = { role: "assistant", content: null };
        messages.push(openAssistant);
      }
      (openAssistant.tool_calls ??= []).push({ id: item.call_id, type: "function", function: { name: item.name, arguments: item.arguments } });
    } else if (type === "function_call_output") {
      messages.push({ role: "tool", tool_call_id: item.call_id, content: item.output });
      openAssistant = null;
    }
  }
  return messages;
}
