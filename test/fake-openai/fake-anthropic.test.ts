/**
 * The fake's Messages API side is as strict as the real one where the
 * anthropic wire could go wrong (validate-anthropic.ts), and answers in the
 * API's own error shape.
 */
import { describe, expect, it } from "vitest";
import { startFakeOpenAI, validateAnthropicRequest } from "./server.js";

const user = (text: string) => ({ role: "user", content: [{ type: "text", text }] });
const base = { model: "m", max_tokens: 100, stream: true };

describe("the fake Anthropic Messages endpoint", () => {
  it.each([
    ["no max_tokens", { model: "m", stream: true, messages: [user("hi")] }, "max_tokens"],
    ["two user turns in a row", { ...base, messages: [user("a"), user("b")] }, "alternate"],
    ["an empty text block", { ...base, messages: [user("")] }, "non-empty"],
    [
      "a tool_use without its result",
      { ...base, messages: [user("a"), { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "x", input: {} }] }, user("b")] },
      "without `tool_result`",
    ],
    ["a result without its call", { ...base, messages: [{ role: "user", content: [{ type: "tool_result", tool_use_id: "t9", content: "x" }] }] }, "unexpected `tool_use_id`"],
    ["a thinking budget not below max_tokens", { ...base, thinking: { type: "enabled", budget_tokens: 2000 }, max_tokens: 2000, messages: [user("a")] }, "budget_tokens"],
    [
      "a tool-calling turn without its thinking block while thinking is on",
      {
        ...base,
        max_tokens: 5000,
        thinking: { type: "enabled", budget_tokens: 1024 },
        messages: [
          user("a"),
          { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "x", input: {} }] },
          { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "ok" }] },
        ],
      },
      "must start with a thinking block",
    ],
    ["a thinking block without signature", { ...base, messages: [user("a"), { role: "assistant", content: [{ type: "thinking", thinking: "x" }] }] }, "signature"],
  ])("refuses %s", (_, body, words) => {
    expect(validateAnthropicRequest(body)?.message).toContain(words);
  });

  it("answers an unknown key and a scripted 529 with the API's error body", async () => {
    const fake = await startFakeOpenAI({ apiKey: "k" });
    try {
      const post = (headers: Record<string, string>) =>
        fetch(`${fake.url}/messages`, { method: "POST", headers: { "content-type": "application/json", "anthropic-version": "2023-06-01", ...headers }, body: JSON.stringify({ ...base, messages: [user("hi")] }) });
      const refused = await post({ "x-api-key": "wrong" });
      expect(refused.status).toBe(401);
      expect(await refused.json()).toEqual({ type: "error", error: { type: "authentication_error", message: "invalid x-api-key" } });
      fake.enqueue({ kind: "error", status: 529 });
      const overloaded = await post({ "x-api-key": "k" });
      expect(overloaded.status).toBe(529);
      expect(await overloaded.json()).toEqual({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } });
      fake.reset();
    } finally {
      await fake.close();
    }
  });
});
