/**
 * Failures and interrupts on the anthropic wire: the SSE stream of the
 * Messages API cut, garbled, stalled or interrupted behaves as on the other
 * wires (test/generation/agent-failures.test.ts, agent-interrupt.test.ts),
 * a turn interrupted mid-thinking (no signature yet) leaves a history the
 * API takes, and loading the SDK on the first request does not count
 * against the idle timeout (300 ms here; the first test is the first request).
 */
import { describe, expect, it } from "vitest";
import { newConversation, useAgentFixture } from "../harness/agent-fixture.js";

const fx = useAgentFixture({ wire: "anthropic", provider: { maxRetries: 1, idleTimeoutMs: 300 } });

async function stepError(text: string[], modifiers: Record<string, number>): Promise<{ message: string; id: string; seen: number }> {
  fx.fake.enqueue({ kind: "reply", text, ...modifiers });
  const { id, events } = await newConversation(fx.client);
  const { generationId } = await fx.client.step({ conversationId: id });
  const end = await events.waitForEnd(generationId);
  expect(end.method).toBe("error");
  const { records } = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
  expect(records!.filter((r) => r.type === "message" && r.role === "assistant")).toEqual([]);
  return { message: end.params.message as string, id, seen: events.of("generation_progress").length };
}

describe("the anthropic wire when the stream fails", () => {
  it("a cut mid-way is one error, not retried after tokens were shown; a cut before any token is retried", async () => {
    // A pause between deltas, so they are read before the cut's reset (which drops unread data).
    const cut = await stepError(["one ", "two ", "three"], { cutAfter: 2, delayMs: 20 });
    expect(cut.seen).toBeGreaterThan(0);
    expect(fx.fake.exchanges).toHaveLength(1);
    fx.fake.reset();

    fx.fake.enqueue({ kind: "reply", text: ["lost"], cutAfter: 0 }, { kind: "reply", text: ["kept"] });
    const { id, events } = await newConversation(fx.client);
    const { generationId } = await fx.client.step({ conversationId: id });
    expect((await events.waitForEnd(generationId)).method).toBe("generation_complete");
    expect(events.of("generation_progress").map((p) => p.delta).join("")).toBe("kept");
  });

  it("a malformed event and a stalled stream each end in one error naming the cause", async () => {
    expect((await stepError(["fine ", "garbage"], { malformedAfter: 1 })).message).toMatch(/not valid JSON/);
    fx.fake.reset();
    expect((await stepError(["a", "b"], { hangAfter: 1 })).message).toMatch(/300 ms/);
  });

  it("an interrupt mid-thinking keeps the text seen, stores no unsigned thinking block, and the next request is valid", async () => {
    fx.fake.enqueue({ kind: "reply", reasoning: Array.from({ length: 40 }, (_, i) => `t${i} `), text: ["never"], delayMs: 30 });
    const { id, events } = await newConversation(fx.client, { settings: { reasoning: "low" } });
    const { generationId } = await fx.client.step({ conversationId: id });
    await events.waitForMethod("generation_progress");
    expect(await fx.client.interrupt({ conversationId: id })).toEqual({ interrupted: true });
    await events.waitFor((e) => e.method === "interrupted" && e.params.generationId === generationId);
    const { records } = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
    const assistant = records!.find((r) => r.type === "message" && r.role === "assistant");
    if (assistant) expect(assistant).not.toHaveProperty("providerItems");

    fx.fake.enqueue({ kind: "reply", text: ["Again."] });
    const { generationId: next } = await fx.client.step({ conversationId: id });
    expect((await events.waitForEnd(next)).method).toBe("generation_complete");
    // The fixture checks after each test that the fake refused nothing.
  });
});
