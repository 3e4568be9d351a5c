/**
 * Steer and queue (issue 23): a message appended while a generation runs is
 * held by the server — steered into the running generation at its next model
 * call (after the round's tool results), or queued to start a generation of
 * its own when the running one completes — and an append can be guarded
 * (expectedGenerationId) and retried safely (clientMessageId).
 */
import { describe, expect, it } from "vitest";
import { newConversation, startAgentFixture, useAgentFixture } from "../harness/agent-fixture.js";
import { expectInvalidParams, rpcError } from "../harness/rpc-errors.js";

const fx = useAgentFixture();

const shellCall = (command: string, id: string) => ({ id, name: "shell", args: JSON.stringify({ command }) });

/** A generation waiting for the confirmation of one shell call: the window in which messages are held. */
async function generationAtToolPending(callId: string) {
  fx.fake.enqueue({ kind: "reply", text: ["Running it."], toolCalls: [shellCall("echo round-output", callId)] });
  const { id, events } = await newConversation(fx.client, {}, "start");
  const { generationId } = await fx.client.step({ conversationId: id });
  await events.waitForMethod("tool_pending");
  return { id, events, generationId };
}

describe("steer", () => {
  it("joins the running generation at its next model call, after the tool result, announced as steered", async () => {
    const { id, events, generationId } = await generationAtToolPending("steer_1");
    const held = await fx.client.message.append({
      conversationId: id,
      role: "user",
      content: "also check the rounding",
      delivery: "steer",
      expectedGenerationId: generationId,
    });
    expect(held.delivery).toBe("steer");
    // Held, not stored: no message_added yet; the state and queue.list show it.
    expect(events.of("message_added").map((e) => e.record.id)).not.toContain(held.id);
    expect((await fx.client.queue.list({ conversationId: id })).messages.map((m) => [m.record.id, m.delivery])).toEqual([[held.id, "steer"]]);
    expect(events.of("queue_changed").at(-1)).toMatchObject({ reason: "added" });

    fx.fake.enqueue({ kind: "reply", text: ["Rounding checked."] });
    await fx.client.tool.confirm({ conversationId: id, toolCallId: "steer_1", action: "confirm" });
    const end = await events.waitForEnd(generationId);
    expect(end.params).toMatchObject({ final: true });

    // The second request: assistant's call, its result, then the steered message — never between the two.
    expect(fx.fake.requests).toHaveLength(2);
    const messages = fx.fake.requests[1]!.messages;
    expect(messages.slice(-3).map((m: { role: string }) => m.role)).toEqual(["assistant", "tool", "user"]);
    expect(messages.at(-2)).toMatchObject({ role: "tool", tool_call_id: "steer_1" });
    expect(messages.at(-1)).toMatchObject({ role: "user", content: "also check the rounding" });
    const steered = events.of("message_added").find((e) => e.record.id === held.id);
    expect(steered).toMatchObject({ delivery: "steered", record: { content: "also check the rounding" } });
    // Stored after the tool call, with the id and timestamp the append answered.
    const { records, state } = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
    expect(records!.map((r) => (r.type === "message" ? `${r.role}` : r.type === "tool_call" ? `tool:${r.status}` : r.type))).toEqual(["user", "assistant", "tool:completed", "user", "assistant"]);
    expect(records![3]).toMatchObject({ id: held.id, timestamp: held.timestamp });
    expect(state.queue).toEqual([]);
  });

  it("a steer taken after a final answer makes one more model call", async () => {
    fx.fake.enqueue({ kind: "reply", text: ["slow ", "answer ", "here"], delayMs: 150 });
    fx.fake.enqueue({ kind: "reply", text: ["About the steer."] });
    const { id, events } = await newConversation(fx.client, {}, "start");
    const { generationId } = await fx.client.step({ conversationId: id });
    await events.waitForMethod("generation_progress");
    await fx.client.message.append({ conversationId: id, role: "user", content: "and one more thing" });
    const end = await events.waitForEnd(generationId);
    expect(end.params).toMatchObject({ final: true, iteration: 2 });
    expect(fx.fake.requests).toHaveLength(2);
    expect(fx.fake.requests[1]!.messages.slice(-2)).toMatchObject([
      { role: "assistant", content: "slow answer here" },
      { role: "user", content: "and one more thing" },
    ]);
  });

  it("refuses a stale expectedGenerationId, naming the running generation (or none), and stores nothing", async () => {
    const { id, events, generationId } = await generationAtToolPending("stale_1");
    const running = await rpcError(
      fx.client.message.append({ conversationId: id, role: "user", content: "late", expectedGenerationId: "g_earlier" }),
    );
    expect(running.code).toBe(-32023);
    expect(running.message).toContain(generationId);
    expect(running.data).toEqual({ expectedGenerationId: "g_earlier", generationId });

    fx.fake.enqueue({ kind: "reply", text: ["Done."] });
    await fx.client.tool.confirm({ conversationId: id, toolCallId: "stale_1", action: "confirm" });
    await events.waitForEnd(generationId);
    const ended = await rpcError(fx.client.message.append({ conversationId: id, role: "user", content: "late", expectedGenerationId: generationId }));
    expect(ended.code).toBe(-32023);
    expect(ended.data).toEqual({ expectedGenerationId: generationId, generationId: null });
    const { records, state } = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
    expect(records!.some((r) => r.type === "message" && r.content === "late")).toBe(false);
    expect(state.queue).toEqual([]);
  });
});

describe("queue", () => {
  it("two queued messages run as two generations, in order, each starting by itself", async () => {
    const { id, events, generationId } = await generationAtToolPending("queue_1");
    const a = await fx.client.message.append({ conversationId: id, role: "user", content: "queued A", delivery: "queue" });
    const b = await fx.client.message.append({ conversationId: id, role: "user", content: "queued B", delivery: "queue" });
    expect([a.delivery, b.delivery]).toEqual(["queued", "queued"]);
    expect((await fx.client.conversation.get({ conversationId: id })).state.queue.map((m) => m.record.content)).toEqual(["queued A", "queued B"]);

    fx.fake.enqueue({ kind: "reply", text: ["First done."] });
    fx.fake.enqueue({ kind: "reply", text: ["Answer to A."] });
    fx.fake.enqueue({ kind: "reply", text: ["Answer to B."] });
    await fx.client.tool.confirm({ conversationId: id, toolCallId: "queue_1", action: "confirm" });
    await events.waitForEnd(generationId);
    const started = () => [...new Set(events.of("generation_started").map((e) => e.generationId))];
    await events.waitFor(() => started().length === 3 && events.of("generation_complete").filter((e) => e.final).length === 3, 10_000);
    const [, second, third] = started();
    await events.waitForEnd(third!);
    expect(second).not.toBe(generationId);

    // The queued message (not the steer path) went into the conversation just before its own generation.
    expect(fx.fake.requests.map((r) => r.messages.at(-1))).toMatchObject([
      { role: "user", content: "start" },
      { role: "tool" },
      { role: "user", content: "queued A" },
      { role: "user", content: "queued B" },
    ]);
    expect(events.of("message_added").filter((e) => e.delivery === "queued").map((e) => e.record.id)).toEqual([a.id, b.id]);
    const { records, state } = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
    expect(records!.filter((r) => r.type === "message").map((r) => (r as { content: string }).content)).toEqual([
      "start",
      "Running it.",
      "First done.",
      "queued A",
      "Answer to A.",
      "queued B",
      "Answer to B.",
    ]);
    expect(state.queue).toEqual([]);
    expect(state.lastGeneration?.generationId).toBe(third);
  });

  it("an interrupt keeps them queued (and says so); queue.remove and queue.clear drop them", async () => {
    const { id, events, generationId } = await generationAtToolPending("intr_1");
    const a = await fx.client.message.append({ conversationId: id, role: "user", content: "queued A", delivery: "queue" });
    await fx.client.message.append({ conversationId: id, role: "user", content: "queued B", delivery: "queue" });
    const steer = await fx.client.message.append({ conversationId: id, role: "user", content: "steered C" });
    expect(steer.delivery).toBe("steer");
    await fx.client.interrupt({ conversationId: id });
    await events.waitForEnd(generationId);
    // Nothing started by itself; the snapshot shows what waits (the untaken steer as a queued message).
    await new Promise((r) => setTimeout(r, 100));
    expect(fx.fake.requests).toHaveLength(1);
    const { state } = await fx.client.conversation.get({ conversationId: id });
    expect(state.generating).toBe(false);
    expect(state.queue.map((m) => [m.record.content, m.delivery])).toEqual([
      ["queued A", "queue"],
      ["queued B", "queue"],
      ["steered C", "queue"],
    ]);
    const snapshot = await (await fx.connect()).conversation.subscribe({ conversationId: id });
    expect(snapshot.state.queue).toHaveLength(3);

    expect(await fx.client.queue.remove({ conversationId: id, recordId: a.id })).toEqual({ removed: true });
    expect(await fx.client.queue.remove({ conversationId: id, recordId: a.id })).toEqual({ removed: false });
    expect(events.of("queue_changed").at(-1)).toMatchObject({ reason: "removed", messages: [{ record: { content: "queued B" } }, { record: { content: "steered C" } }] });
    expect(await fx.client.queue.clear({ conversationId: id })).toEqual({ removed: 2 });
    expect(events.of("queue_changed").at(-1)).toEqual(expect.objectContaining({ reason: "cleared", messages: [] }));
    expect((await fx.client.queue.list({ conversationId: id })).messages).toEqual([]);
  });

  it("is bounded by limits.maxQueuedBytes, all held messages together", async () => {
    const own = await startAgentFixture({ config: { limits: { maxQueuedBytes: 600 } } });
    try {
      own.fake.enqueue({ kind: "reply", text: ["Running it."], toolCalls: [shellCall("true", "bytes_1")] });
      const { id, events } = await newConversation(own.client, {}, "start");
      await own.client.step({ conversationId: id });
      await events.waitForMethod("tool_pending");
      await own.client.message.append({ conversationId: id, role: "user", content: "a".repeat(200), delivery: "queue" });
      // Alone it would fit; beside the first it does not.
      const error = await rpcError(own.client.message.append({ conversationId: id, role: "user", content: "b".repeat(300), delivery: "queue" }));
      expect(error.code).toBe(-32050);
      expect(error.data).toMatchObject({ limit: "maxQueuedBytes", max: 600 });
      expect((await own.client.queue.list({ conversationId: id })).messages.map((m) => m.record.content)).toEqual(["a".repeat(200)]);
      await own.client.interrupt({ conversationId: id });
    } finally {
      await own.close();
    }
  });

  it("is bounded by limits.maxQueuedMessages", async () => {
    const own = await startAgentFixture({ config: { limits: { maxQueuedMessages: 2 } } });
    try {
      own.fake.enqueue({ kind: "reply", text: ["Running it."], toolCalls: [shellCall("true", "bound_1")] });
      const { id, events } = await newConversation(own.client, {}, "start");
      await own.client.step({ conversationId: id });
      await events.waitForMethod("tool_pending");
      await own.client.message.append({ conversationId: id, role: "user", content: "one", delivery: "queue" });
      await own.client.message.append({ conversationId: id, role: "user", content: "two" });
      const error = await rpcError(own.client.message.append({ conversationId: id, role: "user", content: "three", delivery: "queue" }));
      expect(error.code).toBe(-32050);
      expect(error.data).toMatchObject({ limit: "maxQueuedMessages", max: 2 });
      expect((await own.client.queue.list({ conversationId: id })).messages.map((m) => m.record.content)).toEqual(["one", "two"]);
      await own.client.interrupt({ conversationId: id });
    } finally {
      await own.close();
    }
  });
});

describe("when nothing runs", () => {
  it("delivery is an ordinary append; an assistant message cannot be steered or queued", async () => {
    const { id, events } = await newConversation(fx.client, {}, "start");
    const record = await fx.client.message.append({ conversationId: id, role: "user", content: "idle", delivery: "queue" });
    expect(record.delivery).toBeUndefined();
    const added = await events.waitFor((e) => e.method === "message_added" && e.params.record.id === record.id);
    expect(added.params.delivery).toBeUndefined();
    expect((await fx.client.queue.list({ conversationId: id })).messages).toEqual([]);
    await expectInvalidParams(fx.client.message.append({ conversationId: id, role: "assistant", content: "x", delivery: "steer" }), "delivery");
  });
});

describe("idempotent submit", () => {
  it("a retry with the same clientMessageId returns the stored record: one record, one event", async () => {
    const conversation = await fx.client.conversation.create({});
    const id = conversation.id;
    const other = await fx.connect();
    const seen: string[] = [];
    other.onAny((method, params: any) => {
      if (params?.conversationId === id && method === "message_added") seen.push(params.record.id);
    });
    await other.conversation.subscribe({ conversationId: id });
    const params = { conversationId: id, role: "user" as const, content: "pay the invoice", clientMessageId: "cm-1" };
    const first = await fx.client.message.append(params);
    const again = await fx.client.message.append(params);
    expect(again).toEqual(first);
    // Concurrent retries too.
    const [x, y] = await Promise.all([
      fx.client.message.append({ ...params, clientMessageId: "cm-2" }),
      fx.client.message.append({ ...params, clientMessageId: "cm-2" }),
    ]);
    expect(x.id).toBe(y.id);
    await expectInvalidParams(fx.client.message.append({ ...params, content: "pay it twice" }), "clientMessageId");
    const { records } = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
    expect(records!.map((r) => r.id)).toEqual([first.id, x.id]);
    await new Promise((r) => setTimeout(r, 50));
    expect(seen).toEqual([first.id, x.id]);
  });

  it("a retry of a held message answers the held message", async () => {
    const { id, generationId } = await generationAtToolPending("idem_1");
    const params = { conversationId: id, role: "user" as const, content: "later", delivery: "queue" as const, clientMessageId: "cm-q" };
    const first = await fx.client.message.append(params);
    expect(await fx.client.message.append(params)).toEqual(first);
    expect((await fx.client.queue.list({ conversationId: id })).messages).toHaveLength(1);
    await fx.client.interrupt({ conversationId: id });
    expect(generationId).toBeTruthy();
  });
});

describe("steer over the Responses API wire", () => {
  const rx = useAgentFixture({ wire: "responses" });

  it("the steered message follows the tool call's output in the next request", async () => {
    rx.fake.enqueue({ kind: "reply", text: ["Running it."], toolCalls: [shellCall("echo round-output", "rsteer_1")] });
    const { id, events } = await newConversation(rx.client, {}, "start");
    const { generationId } = await rx.client.step({ conversationId: id });
    await events.waitForMethod("tool_pending");
    const held = await rx.client.message.append({ conversationId: id, role: "user", content: "and the totals", delivery: "steer", expectedGenerationId: generationId });
    rx.fake.enqueue({ kind: "reply", text: ["Done."] });
    await rx.client.tool.confirm({ conversationId: id, toolCallId: "rsteer_1", action: "confirm" });
    await events.waitForEnd(generationId);
    expect(rx.fake.requests).toHaveLength(2);
    const roles = rx.fake.messagesOf(1).map((m: { role: string }) => m.role);
    expect(roles.slice(-3)).toEqual(["assistant", "tool", "user"]);
    expect(rx.fake.messagesOf(1).at(-1)).toMatchObject({ role: "user", content: "and the totals" });
    expect(events.of("message_added").find((e) => e.record.id === held.id)).toMatchObject({ delivery: "steered" });
  });
});
