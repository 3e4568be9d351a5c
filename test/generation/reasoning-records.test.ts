/**
 * Thinking as a record of its own (`type: "reasoning"`), right before the
 * reply it belongs to, announced by reasoning_added; sent back as
 * `reasoning_content` on that assistant message only to a model declaring
 * the capability reasoningContent (DeepSeek-style), on the chat wire; carried
 * by import (checked) and fork.
 */
import { describe, expect, it } from "vitest";
import { newConversation, useAgentFixture } from "../harness/agent-fixture.js";
import { expectInvalidParams } from "../harness/rpc-errors.js";

const providers = {
  default: { baseUrl: "http://127.0.0.1:1/v1", models: { "fake-model": { reasoningContent: true }, "plain-model": {} } },
};
const fx = useAgentFixture({ config: { providers } });

const shellCall = { id: "call_1", name: "shell", args: JSON.stringify({ command: "echo hi" }) };

/** The assistant messages of request `i`, as the endpoint received them. */
function assistantsOf(i: number): Record<string, unknown>[] {
  return (fx.fake.requests[i]!.messages as Record<string, unknown>[]).filter((m) => m.role === "assistant");
}

describe("reasoning records", () => {
  it("are stored before their reply and sent back as reasoning_content to a model that declares it", async () => {
    fx.fake.enqueue(
      { kind: "reply", reasoning: ["Check ", "first."], text: ["Looking."], toolCalls: [shellCall] },
      { kind: "reply", reasoning: ["Fine."], text: ["Done."] },
    );
    const { id, events } = await newConversation(fx.client);
    const first = await fx.client.step({ conversationId: id, autoConfirm: true });
    await events.waitForEnd(first.generationId);

    const added = events.events.filter((e) => e.method === "reasoning_added").map((e) => e.params.record);
    expect(added.map((r) => r.content)).toEqual(["Check first.", "Fine."]);
    const { records } = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
    expect(records!.map((r) => r.type + (r.type === "message" ? `:${r.role}` : ""))).toEqual([
      "message:user",
      "reasoning",
      "message:assistant",
      "tool_call",
      "reasoning",
      "message:assistant",
    ]);
    expect(records![1]).toMatchObject({ id: added[0].id, content: "Check first.", generationId: first.generationId });

    // The second model call got the first reply's thinking back, on the message with its tool calls.
    expect(assistantsOf(1)).toEqual([expect.objectContaining({ content: "Looking.", reasoning_content: "Check first.", tool_calls: expect.any(Array) })]);
    expect(fx.fake.requests[0]!.messages.some((m: Record<string, unknown>) => "reasoning_content" in m)).toBe(false);

    // A model that does not declare it is never sent earlier thinking.
    fx.fake.enqueue({ kind: "reply", text: ["Plain."] });
    await fx.client.message.append({ conversationId: id, role: "user", content: "again" });
    const plain = await fx.client.step({ conversationId: id, model: "plain-model" });
    await events.waitForEnd(plain.generationId);
    expect(assistantsOf(2)).toHaveLength(2);
    for (const message of assistantsOf(2)) expect(message).not.toHaveProperty("reasoning_content");

    // A fork copies the reasoning records with the rest.
    const fork = await fx.client.conversation.fork({ conversationId: id });
    const copied = await fx.client.conversation.get({ conversationId: fork.id, includeRecords: true });
    expect(copied.records!.filter((r) => r.type === "reasoning").map((r) => r.type === "reasoning" && r.content)).toEqual(["Check first.", "Fine."]);
  });

  it("are imported when they come right before an assistant message, and the model is sent them back", async () => {
    const imported = await fx.client.conversation.create({
      records: [
        { type: "message", role: "user", content: "2 + 2?" },
        { type: "reasoning", content: "Simple addition." },
        { type: "message", role: "assistant", content: "4" },
        { type: "message", role: "user", content: "and 3 + 3?" },
      ],
    });
    const { records } = await fx.client.conversation.get({ conversationId: imported.id, includeRecords: true });
    expect(records![1]).toMatchObject({ type: "reasoning", content: "Simple addition.", id: expect.stringMatching(/^r_/) });
    fx.fake.enqueue({ kind: "reply", text: ["6"] });
    const before = fx.fake.requests.length;
    await fx.client.conversation.subscribe({ conversationId: imported.id });
    const { generationId } = await fx.client.step({ conversationId: imported.id });
    await fx.client.generation.wait({ conversationId: imported.id, generationId });
    expect(assistantsOf(before)).toEqual([{ role: "assistant", content: "4", reasoning_content: "Simple addition." }]);

    await expectInvalidParams(
      fx.client.conversation.create({
        records: [
          { type: "reasoning", content: "dangling" },
          { type: "message", role: "user", content: "hi" },
        ],
      }),
      "records[0].type",
    );
  });
});
