/**
 * An Anthropic Messages request read back as Chat Completions messages, so a
 * test asserts on what the model was shown the same way on every wire:
 * `system` blocks → one leading system message (texts joined by a blank
 * line); a user turn → one user message per text block (our merged
 * messages each start with one), its images with it (a lone text a string); image blocks →
 * image_url parts (base64 as a data: URL); tool_use → the assistant's
 * `tool_calls` (input as JSON text); tool_result → a tool message each, in
 * place. Thinking blocks carry nothing a chat request could show and are left out.
 */
type Json = Record<string, any>;

function parts(blocks: Json[]): unknown {
  const out = blocks.flatMap((block): Json[] => {
    if (block.type === "text") return [{ type: "text", text: block.text }];
    if (block.type === "image") {
      const url = block.source.type === "base64" ? `data:${block.source.media_type};base64,${block.source.data}` : block.source.url;
      return [{ type: "image_url", image_url: { url } }];
    }
    return [];
  });
  if (out.length === 0) return null;
  return out.every((p) => p.type === "text") ? out.map((p) => p.text).join("") : out;
}

export function chatViewOfAnthropic(body: Json): Json[] {
  const messages: Json[] = [];
  const system = typeof body.system === "string" ? body.system : Array.isArray(body.system) ? body.system.map((b: Json) => b.text).join("\n\n") : undefined;
  if (system) messages.push({ role: "system", content: system });
  for (const message of (body.messages ?? []) as Json[]) {
    const blocks: Json[] = typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
    if (message.role === "assistant") {
      const calls = blocks.filter((b) => b.type === "tool_use");
      messages.push({
        role: "assistant",
        content: parts(blocks),
        ...(calls.length > 0 ? { tool_calls: calls.map((b) => ({ id: b.id, type: "function", function: { name: b.name, arguments: JSON.stringify(b.input) } })) } : {}),
      });
      continue;
    }
    for (const result of blocks.filter((b) => b.type === "tool_result")) {
      const content = typeof result.content === "string" ? result.content : (parts(result.content ?? []) ?? "");
      messages.push({ role: "tool", tool_call_id: result.tool_use_id, content });
    }
    // Consecutive user messages share one turn: each of ours starts with its text, its images follow it.
    let current: Json[] = [];
    const flush = () => {
      if (current.length > 0) messages.push({ role: "user", content: parts(current) });
      current = [];
    };
    for (const block of blocks.filter((b) => b.type !== "tool_result")) {
      if (block.type === "text") flush();
      current.push(block);
    }
    flush();
  }
  return messages;
}
