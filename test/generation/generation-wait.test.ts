/**
 * generation.wait end to end: a scripted bot steps, then waits, and learns
 * how the generation ended (completed, interrupted, error), with its answer
 * and its usage — without counting notifications. Timeouts answer
 * { done: false }; unknown ids are INVALID_PARAMS naming generationId; a wait
 * whose connection closes leaves no listener behind.
 */
import { describe, expect, it } from "vitest";
import { newConversation, useAgentFixture } from "../harness/agent-fixture.js";
import { eventually } from "../harness/eventually.js";
import { expectInvalidParams } from "../harness/rpc-errors.js";

const fx = useAgentFixture({ provider: { maxRetries: 0 } });

const shellCall = (command: string, id = "call_1") => ({ id, name: "shell", args: JSON.stringify({ command }) });
/** Open waits across the server, and end listeners on one conversation: both must drop to 0 after every wait. */
const openWaits = () => fx.server.server.app.agent.waits.open;

describe("generation.wait answers with the outcome", () => {
  it("completed: the final assistant record and the usage summed over both model calls", async () => {
    fx.fake.enqueue(
      { kind: "reply", text: ["Checking."], toolCalls: [shellCall("echo waited")], usage: { prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 } },
      { kind: "reply", text: ["All ", "done."], usage: { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 } },
    );
    // No subscription: a bot needs none to learn the outcome.
    const conversation = await fx.client.conversation.create({});
    const id = conversation.id;
    await fx.client.message.append({ conversationId: id, role: "user", content: "go" });
    const { generationId } = await fx.client.step({ conversationId: id, autoConfirm: true });
    const result = await fx.client.generation.wait({ conversationId: id, timeoutMs: 5000 });
    expect(result).toMatchObject({
      done: true,
      generationId,
      outcome: "completed",
      usage: { promptTokens: 30, completionTokens: 8, totalTokens: 38 },
      modelCalls: 2,
      finalRecord: { type: "message", role: "assistant", content: "All done.", generationId },
    });
    expect(result.done && result.error).toBeUndefined();
    // The record it names is the stored one.
    const { records } = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
    expect(result.done && result.finalRecord).toEqual(records!.at(-1));
    expect(openWaits()).toBe(0);
  });

  it("error: code and message as the error notification said, lastError set", async () => {
    fx.fake.enqueue({ kind: "error", status: 400, message: "That request is not for you." });
    const { id, events } = await newConversation(fx.client);
    const { generationId } = await fx.client.step({ conversationId: id });
    const result = await fx.client.generation.wait({ conversationId: id, generationId, timeoutMs: 5000 });
    const notified = events.of("error")[0]!;
    expect(result).toMatchObject({ done: true, generationId, outcome: "error", finalRecord: null, modelCalls: 0, usage: null });
    expect(result.done && result.error).toEqual({ code: notified.code, message: notified.message, status: 400 });
    expect(result.done && result.error?.message).toContain("not for you");
    const { state } = await fx.client.conversation.get({ conversationId: id });
    expect(state.lastGeneration).toMatchObject({ generationId, outcome: "error", error: { code: notified.code } });
  });

  it("interrupted: a wait in progress is answered when interrupt ends the generation, with the partial text", async () => {
    fx.fake.enqueue({ kind: "reply", text: ["Partial ", "answer ", "never finished"], hangAfter: 2 });
    const { id, events } = await newConversation(fx.client);
    const { generationId } = await fx.client.step({ conversationId: id });
    const waiting = fx.client.generation.wait({ conversationId: id, timeoutMs: 5000 });
    await events.waitFor((e) => e.method === "generation_progress" && e.params.delta.includes("answer"));
    await eventually(() => openWaits() === 1, 2000, "the wait to be registered");
    await fx.client.interrupt({ conversationId: id });
    const result = await waiting;
    expect(result).toMatchObject({
      done: true,
      generationId,
      outcome: "interrupted",
      finalRecord: { role: "assistant", content: "Partial answer ", interrupted: true },
    });
    expect(openWaits()).toBe(0);
  });
});

describe("generation.wait without an ending", () => {
  it("times out with { done: false } (not an error) and releases its timer and listener; waiting again still works", async () => {
    fx.fake.enqueue({ kind: "reply", toolCalls: [shellCall("echo later")] }, { kind: "reply", text: ["later"] });
    const { id, events } = await newConversation(fx.client);
    const { generationId } = await fx.client.step({ conversationId: id });
    await events.waitForMethod("tool_pending");
    const started = Date.now();
    const result = await fx.client.generation.wait({ conversationId: id, timeoutMs: 150 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(result).toEqual({ done: false, generationId });
    expect(openWaits()).toBe(0);
    const runtime = await fx.server.server.app.hub.get(id);
    expect(runtime.endListenerCount).toBe(0);
    // timeoutMs 0 only looks.
    expect(await fx.client.generation.wait({ conversationId: id, timeoutMs: 0 })).toEqual({ done: false, generationId });

    const again = fx.client.generation.wait({ conversationId: id, generationId, timeoutMs: 5000 });
    await fx.client.tool.confirm({ conversationId: id, toolCallId: "call_1", action: "confirm" });
    expect(await again).toMatchObject({ done: true, outcome: "completed", finalRecord: { content: "later" } });
  });

  it("a closing connection ends its wait: no listener, timer or wait is left", async () => {
    fx.fake.enqueue({ kind: "reply", toolCalls: [shellCall("echo never")] });
    const { id, events } = await newConversation(fx.client);
    await fx.client.step({ conversationId: id });
    await events.waitForMethod("tool_pending");
    const bot = await fx.connect();
    const runtime = await fx.server.server.app.hub.get(id);
    const waiting = bot.generation.wait({ conversationId: id, timeoutMs: 600_000 });
    waiting.catch(() => {}); // the client rejects its own pending call when it closes
    await eventually(() => openWaits() === 1 && runtime.endListenerCount === 1, 2000, "the wait to be registered");
    await bot.close();
    await eventually(() => openWaits() === 0 && runtime.endListenerCount === 0, 2000, "the wait to be released");
    await fx.client.interrupt({ conversationId: id });
  });
});

describe("generation.wait on ended generations and unknown ids", () => {
  it("answers at once for a generation that already ended, by id or as the most recent; older ones stay known", async () => {
    fx.fake.enqueue({ kind: "reply", text: ["first"] }, { kind: "reply", text: ["second"] });
    const { id, events } = await newConversation(fx.client);
    const first = await fx.client.step({ conversationId: id });
    await events.waitForEnd(first.generationId);
    await fx.client.message.append({ conversationId: id, role: "user", content: "again" });
    const second = await fx.client.step({ conversationId: id });
    await events.waitForEnd(second.generationId);

    const latest = await fx.client.generation.wait({ conversationId: id });
    expect(latest).toMatchObject({ done: true, generationId: second.generationId, finalRecord: { content: "second" } });
    const earlier = await fx.client.generation.wait({ conversationId: id, generationId: first.generationId, timeoutMs: 0 });
    expect(earlier).toMatchObject({ done: true, generationId: first.generationId, outcome: "completed", finalRecord: { content: "first" } });
  });

  it("an unknown generationId, or a conversation that never generated, is INVALID_PARAMS naming generationId", async () => {
    const { id } = await newConversation(fx.client);
    await expectInvalidParams(fx.client.generation.wait({ conversationId: id }), "generationId");
    await expectInvalidParams(fx.client.generation.wait({ conversationId: id, generationId: "g_nope" }), "generationId");
    await expectInvalidParams(fx.client.generation.wait({ conversationId: id, timeoutMs: 600_001 }), "timeoutMs");
    await expectInvalidParams(fx.client.generation.wait({ conversationId: id, timeoutMs: -1 }), "timeoutMs");
    expect(openWaits()).toBe(0);
  });
});
