/**
 * interrupt { keepPending: true }: pause rather than stop. The generation
 * ends, but the tool calls waiting for a decision stay pending (no
 * tool_skipped, state.pendingTools lists them); the next step offers them
 * again, same toolCallIds, before any model call, and tool.confirm on them
 * runs them as usual.
 */
import { describe, expect, it } from "vitest";
import { newConversation, useAgentFixture } from "../harness/agent-fixture.js";

const fx = useAgentFixture();

const shellCall = (command: string, id: string) => ({ id, name: "shell", args: JSON.stringify({ command }) });

describe("interrupt keepPending", () => {
  it("leaves waiting calls pending, and the next step offers them again before calling the model", async () => {
    fx.fake.enqueue({ kind: "reply", text: ["Two checks."], toolCalls: [shellCall("echo first", "call_a"), shellCall("echo second", "call_b")] });
    const { id, events } = await newConversation(fx.client);
    const first = await fx.client.step({ conversationId: id });
    await events.waitForCount("tool_pending", 2);

    expect(await fx.client.interrupt({ conversationId: id, keepPending: true })).toEqual({ interrupted: true });
    const interrupted = events.events.filter((e) => e.method === "interrupted");
    expect(interrupted.map((e) => e.params)).toEqual([
      expect.objectContaining({ generationId: first.generationId, phase: "pending", keptPending: ["call_a", "call_b"] }),
    ]);
    expect(events.events.some((e) => e.method === "tool_skipped")).toBe(false);
    const paused = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
    expect(paused.state.generating).toBe(false);
    expect(paused.state.pendingTools.map((p) => p.toolCallId)).toEqual(["call_a", "call_b"]);
    expect(paused.records!.filter((r) => r.type === "tool_call").map((r) => r.type === "tool_call" && r.status)).toEqual(["pending", "pending"]);
    const requestsBefore = fx.fake.requests.length;

    // Resume: the same calls are offered first; the model is not called until they are settled.
    fx.fake.enqueue({ kind: "reply", text: ["Both done."] });
    const second = await fx.client.step({ conversationId: id });
    await events.waitFor((e) => e.method === "tool_pending" && e.params.generationId === second.generationId && e.params.toolCallId === "call_b");
    const offeredAgain = events.events.filter((e) => e.params.generationId === second.generationId);
    expect(offeredAgain.map((e) => [e.method, e.params.toolCallId])).toEqual([
      ["tool_pending", "call_a"],
      ["tool_pending", "call_b"],
    ]);
    expect(fx.fake.requests.length).toBe(requestsBefore);

    expect((await fx.client.tool.confirm({ conversationId: id, toolCallId: "call_a", action: "confirm" })).status).toBe("executing");
    await fx.client.tool.confirm({ conversationId: id, toolCallId: "call_b", action: "skip" });
    const end = await events.waitForEnd(second.generationId);
    expect(end.method).toBe("generation_complete");
    expect(fx.fake.requests.length).toBe(requestsBefore + 1);
    const done = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
    const calls = done.records!.filter((r) => r.type === "tool_call");
    expect(calls.map((r) => r.type === "tool_call" && [r.toolCallId, r.status])).toEqual([
      ["call_a", "completed"],
      ["call_b", "skipped"],
    ]);
  });

  it("without keepPending, interrupt still skips the waiting calls", async () => {
    fx.fake.enqueue({ kind: "reply", text: ["One check."], toolCalls: [shellCall("echo x", "call_x")] });
    const { id, events } = await newConversation(fx.client);
    await fx.client.step({ conversationId: id });
    await events.waitForMethod("tool_pending");
    await fx.client.interrupt({ conversationId: id });
    await events.waitForMethod("tool_skipped");
    const interrupted = events.events.find((e) => e.method === "interrupted")!;
    expect(interrupted.params).not.toHaveProperty("keptPending");
    expect((await fx.client.conversation.get({ conversationId: id })).state.pendingTools).toEqual([]);
  });
});
