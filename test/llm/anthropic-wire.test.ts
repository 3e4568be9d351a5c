/**
 * What only the anthropic wire does (the agent loop itself runs on it in
 * test/generation/agent-loop.test.ts and the other wire-parametrised
 * tests): thinking blocks sent back signed and unchanged, cache_control on
 * the system prompt and the last tool, usage with cache reads and writes,
 * images as base64 image blocks, and the API's errors (429 with its
 * rate-limit headers, 529 overloaded, an error event mid-stream) — all
 * through @anthropic-ai/sdk against the fake's POST /v1/messages.
 */
import { describe, expect, it } from "vitest";
import { signatureOf } from "../fake-openai/server.js";
import { newConversation, useAgentFixture } from "../harness/agent-fixture.js";
import { EventRecorder } from "../harness/event-recorder.js";

const PRICING = { inputPerMillion: 3, cachedInputPerMillion: 0.3, cacheWriteInputPerMillion: 3.75, outputPerMillion: 15 };
/** Declared under the default provider (the fixture's endpoint override still serves it), for the cost. */
const providers = {
  default: { baseUrl: "http://127.0.0.1:1/v1", models: { "fake-model": { imageInput: true, reasoning: true, pricing: PRICING } } },
};

const fx = useAgentFixture({ wire: "anthropic", config: { providers } });

/** A 1×1 PNG. */
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";

describe("the anthropic wire", () => {
  it("sends a tool-calling turn's thinking block back first, with its signature unchanged; reasoning sets the thinking budget", async () => {
    fx.fake.enqueue(
      { kind: "reply", reasoning: ["I should", " list files."], toolCalls: [{ id: "toolu_1", name: "shell", args: ['{"command":', '"echo hi"}'] }] },
      { kind: "reply", text: ["It printed hi."] },
    );
    const { id, events } = await newConversation(fx.client, { settings: { reasoning: "high" } });
    const { generationId } = await fx.client.step({ conversationId: id });
    const pending = await events.waitForMethod("tool_pending");
    expect(pending.params.arguments).toEqual({ command: "echo hi" });
    await fx.client.tool.confirm({ conversationId: id, toolCallId: "toolu_1", action: "confirm" });
    expect((await events.waitForEnd(generationId)).method).toBe("generation_complete");

    const [first, second] = fx.fake.requests;
    // high → a 16384-token budget, and max_tokens leaves the answer the default 8192 beside it.
    expect(first).toMatchObject({ thinking: { type: "enabled", budget_tokens: 16384 }, max_tokens: 16384 + 8192 });
    expect(first).not.toHaveProperty("temperature");
    const assistant = (second!.messages as any[])[1];
    expect(assistant.role).toBe("assistant");
    expect(assistant.content[0]).toEqual({ type: "thinking", thinking: "I should list files.", signature: signatureOf("I should list files.") });
    expect(assistant.content[1]).toEqual({ type: "tool_use", id: "toolu_1", name: "shell", input: { command: "echo hi" } });
    expect((second!.messages as any[])[2].content[0]).toMatchObject({ type: "tool_result", tool_use_id: "toolu_1" });

    // The readable text as a reasoning record; the signed block kept on the assistant record as providerItems.
    const { records } = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
    expect(records![1]).toMatchObject({ type: "reasoning", content: "I should list files." });
    expect(records![2]).toMatchObject({
      role: "assistant",
      providerItems: [{ type: "thinking", thinking: "I should list files.", signature: signatureOf("I should list files.") }],
    });
  });

  it("marks the system prompt and the last tool with cache_control, and nothing else", async () => {
    fx.fake.enqueue({ kind: "reply", text: ["Ok."] });
    const { id, events } = await newConversation(fx.client, { system: "Be brief." });
    const { generationId } = await fx.client.step({ conversationId: id });
    await events.waitForEnd(generationId);
    const body = fx.fake.requests[0]!;
    expect(body.system).toEqual([{ type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } }]);
    const tools = body.tools as any[];
    expect(tools.length).toBeGreaterThan(1);
    expect(tools.at(-1)!.cache_control).toEqual({ type: "ephemeral" });
    expect(tools.slice(0, -1).filter((t) => t.cache_control)).toEqual([]);
    expect(tools[0]).toMatchObject({ name: expect.any(String), input_schema: { type: "object" } });
    // The API requires max_tokens: the documented default when the conversation sets none.
    expect(body.max_tokens).toBe(8192);
    expect(body).not.toHaveProperty("thinking");
  });

  it("reports cache reads and writes: promptTokens counts them, cachedPromptTokens the reads, cacheWritePromptTokens the writes, each at its price", async () => {
    fx.fake.enqueue({
      kind: "reply",
      text: ["Cached."],
      usage: { prompt_tokens: 1000, cached_tokens: 600, cache_write_tokens: 300, completion_tokens: 50, total_tokens: 1050, reasoning_tokens: 20 },
    });
    const { id, events } = await newConversation(fx.client);
    const { generationId } = await fx.client.step({ conversationId: id });
    const end = await events.waitForEnd(generationId);
    const expected = { promptTokens: 1000, cachedPromptTokens: 600, cacheWritePromptTokens: 300, completionTokens: 50, reasoningTokens: 20, totalTokens: 1050 };
    expect(end.params.usage).toEqual(expected);
    const [update] = events.of("usage_updated");
    expect(update!.last).toEqual(expected);
    // 100 uncached × 3 + 600 read × 0.3 + 300 written × 3.75 + 50 out × 15, per million.
    expect(update!.cost).toEqual({ amount: 0.002355, currency: "USD" });
  });

  it("sends an uploaded image as a base64 image block after the text", async () => {
    fx.fake.enqueue({ kind: "reply", text: ["Red."] });
    const conversation = await fx.client.conversation.create({});
    const { assetId } = await fx.client.asset.upload({ conversationId: conversation.id, data: PNG, mimeType: "image/png" });
    await fx.client.message.append({ conversationId: conversation.id, role: "user", content: "What colour?", attachments: [{ type: "image", assetId }] });
    const events = new EventRecorder(fx.client, conversation.id);
    await fx.client.conversation.subscribe({ conversationId: conversation.id });
    const { generationId } = await fx.client.step({ conversationId: conversation.id });
    expect((await events.waitForEnd(generationId)).method).toBe("generation_complete");
    const user = (fx.fake.requests[0]!.messages as any[])[0];
    expect(user).toEqual({
      role: "user",
      content: [
        { type: "text", text: "What colour?" },
        { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
      ],
    });
  });

  it("maps the API's errors: a 429 with anthropic-ratelimit headers is told and retried, 529 overloaded is retried, an error event mid-stream ends the generation with its type", async () => {
    fx.fake.enqueue(
      { kind: "error", status: 429, headers: { "retry-after": "0", "anthropic-ratelimit-requests-limit": "50", "anthropic-ratelimit-requests-remaining": "0" } },
      { kind: "error", status: 529 },
      { kind: "reply", text: ["Made it."] },
    );
    const { id, events } = await newConversation(fx.client);
    const { generationId } = await fx.client.step({ conversationId: id });
    expect((await events.waitForEnd(generationId)).method).toBe("generation_complete");
    const notices = events.of("notice");
    expect(notices.map((n) => n.code)).toEqual(["rate_limited", "model_retry", "model_retry"]);
    expect(notices[0]!.data).toMatchObject({ status: 429, limits: { "limit-requests": "50", "remaining-requests": "0" } });
    expect(notices[2]!.data).toMatchObject({ status: 529, error: expect.stringContaining("Overloaded") });

    fx.fake.enqueue({ kind: "reply", text: ["Half", " an", " answer"], streamError: { after: 1, code: "overloaded_error", message: "Overloaded" } });
    const { generationId: second } = await fx.client.step({ conversationId: id });
    const end = await events.waitForEnd(second);
    expect(end.method).toBe("error");
    expect(end.params.message).toContain("Overloaded (overloaded_error)");
  });
});
