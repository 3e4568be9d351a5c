/**
 * The anthropic wire's request mapping on its own (anthropic-request.ts),
 * for histories the loop rarely makes: every result is checked by the
 * fake's validator, which refuses what the Messages API refuses.
 */
import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../../src/llm/chat-message.js";
import type { ChatRequest } from "../../src/llm/provider.js";
import { anthropicBaseURL } from "../../src/llm/wires/anthropic-client.js";
import { anthropicRequestBody } from "../../src/llm/wires/anthropic-request.js";
import { validateAnthropicRequest } from "../fake-openai/server.js";

function body(messages: ChatMessage[], controls: Partial<ChatRequest> = {}) {
  const request = anthropicRequestBody({ model: "claude", messages, tools: [], signal: new AbortController().signal, ...controls });
  expect(validateAnthropicRequest(request)).toBeNull();
  return request;
}

const call = (id: string) => ({ id, type: "function" as const, function: { name: "shell", arguments: '{"command":"ls"}' } });

describe("anthropic request mapping", () => {
  it("merges tool results and the next user message into one user turn, results first", () => {
    const request = body([
      { role: "user", content: "go" },
      { role: "assistant", content: null, tool_calls: [call("a"), call("b")] },
      { role: "tool", tool_call_id: "a", content: "one" },
      { role: "tool", tool_call_id: "b", content: "two" },
      { role: "user", content: "and then?" },
    ]);
    expect(request.messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(request.messages[2]!.content).toEqual([
      { type: "tool_result", tool_use_id: "a", content: "one" },
      { type: "tool_result", tool_use_id: "b", content: "two" },
      { type: "text", text: "and then?" },
    ]);
  });

  it("answers a call left without its result, drops a result without its call, and cleans ids the API refuses", () => {
    const request = body([
      { role: "user", content: "go" },
      { role: "assistant", content: "Running.", tool_calls: [call("call.1:x")] },
      { role: "tool", tool_call_id: "nobody", content: "stray" },
      { role: "user", content: "stop" },
    ]);
    expect(request.messages[1]!.content).toContainEqual(expect.objectContaining({ type: "tool_use", id: "call_1_x" }));
    expect(request.messages[2]!.content).toEqual([
      { type: "tool_result", tool_use_id: "call_1_x", content: "[no result]" },
      { type: "text", text: "stop" },
    ]);
  });

  it("sends back only this wire's items: thinking blocks yes, another wire's reasoning items no; invalid arguments become {}", () => {
    const thinking = { type: "thinking", thinking: "hm", signature: "sig" };
    const request = body(
      [
        { role: "user", content: "go" },
        { role: "assistant", content: null, tool_calls: [{ ...call("a"), function: { name: "shell", arguments: "{not json" } }], providerItems: [{ type: "reasoning", encrypted_content: "x" }, thinking] },
        { role: "tool", tool_call_id: "a", content: "done" },
      ],
      { reasoning: "medium" },
    );
    expect(request.messages[1]!.content).toEqual([thinking, { type: "tool_use", id: "a", name: "shell", input: {} }]);
    expect(request.thinking).toEqual({ type: "enabled", budget_tokens: 4096 });
  });

  it("keeps a set maxTokens: the budget stays below it, and a maxTokens too small for any budget sends no thinking", () => {
    expect(body([{ role: "user", content: "x" }], { reasoning: "high", maxTokens: 3000 })).toMatchObject({ max_tokens: 3000, thinking: { budget_tokens: 2999 } });
    const small = body([{ role: "user", content: "x" }], { reasoning: "low", maxTokens: 1000 });
    expect(small.max_tokens).toBe(1000);
    expect(small).not.toHaveProperty("thinking");
    expect(body([{ role: "user", content: "x" }], { reasoning: "off", temperature: 0.5 })).toEqual({ model: "claude", max_tokens: 8192, messages: [{ role: "user", content: [{ type: "text", text: "x" }] }], stream: true });
  });

  it("puts every system message in `system`, the cache mark on the first; images by URL as url sources", () => {
    const request = body([
      { role: "system", content: "You are terse." },
      { role: "user", content: [{ type: "text", text: "see" }, { type: "image_url", image_url: { url: "https://example.com/a.png" } }] },
      { role: "system", content: "Mode: plan." },
    ]);
    expect(request.system).toEqual([
      { type: "text", text: "You are terse.", cache_control: { type: "ephemeral" } },
      { type: "text", text: "Mode: plan." },
    ]);
    expect(request.messages[0]!.content).toContainEqual({ type: "image", source: { type: "url", url: "https://example.com/a.png" } });
  });

  it("takes a base URL with or without /v1 (the SDK adds /v1/messages)", () => {
    expect(anthropicBaseURL("https://api.anthropic.com")).toBe("https://api.anthropic.com");
    expect(anthropicBaseURL("https://api.anthropic.com/v1/")).toBe("https://api.anthropic.com");
    expect(anthropicBaseURL("http://gw.local/anthropic/v1")).toBe("http://gw.local/anthropic");
  });
});
