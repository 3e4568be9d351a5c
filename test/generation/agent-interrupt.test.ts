/**
 * `interrupt` at every phase of a generation (DESIGN "Invariants"): it ends
 * the generation within a second, aborts the HTTP stream, kills a running
 * tool's whole process group, settles pending confirmations as skipped,
 * keeps partial text, sends exactly one `interrupted`, and leaves a history
 * the next model call accepts.
 */
import { performance } from "node:perf_hooks";
import { describe, expect, it } from "vitest";
import type { AgentwireClient } from "../../clients/typescript/index.js";
import { newConversation, useAgentFixture } from "../harness/agent-fixture.js";
import type { EventRecorder } from "../harness/event-recorder.js";
import { isAlive, waitGone } from "../harness/process-liveness.js";

const fx = useAgentFixture();

const shellCall = (command: string, id: string) => ({ id, name: "shell", args: JSON.stringify({ command }) });

/** Interrupt and measure how long the answer took. */
async function timedInterrupt(client: AgentwireClient, conversationId: string) {
  const started = performance.now();
  const result = await client.interrupt({ conversationId });
  return { result, ms: performance.now() - started };
}

function count(events: EventRecorder, method: string, generationId?: string): number {
  return events.events.filter((e) => e.method === method && (generationId === undefined || e.params.generationId === generationId)).length;
}

/** The next step on the conversation completes, and the fake accepted its request. */
async function nextStepCompletes(id: string, events: EventRecorder, text = "back again") {
  const before = fx.fake.requests.length;
  fx.fake.enqueue({ kind: "reply", text: [text] });
  const { generationId } = await fx.client.step({ conversationId: id });
  const end = await events.waitForEnd(generationId);
  expect(end.method).toBe("generation_complete");
  expect(end.params.final).toBe(true);
  expect(fx.fake.requests.length).toBe(before + 1);
  expect(fx.fake.rejected).toEqual([]);
  return fx.fake.requests.at(-1)!;
}

describe("interrupt while streaming", () => {
  it("ends the generation before answering, keeps the partial text, aborts the HTTP stream", async () => {
    const words = Array.from({ length: 60 }, (_, i) => `w${i} `);
    fx.fake.enqueue({ kind: "reply", text: words, delayMs: 30 });
    const { id, events } = await newConversation(fx.client);
    const { generationId } = await fx.client.step({ conversationId: id });
    await events.waitForMethod("generation_progress");

    const { result, ms } = await timedInterrupt(fx.client, id);
    expect(result).toEqual({ interrupted: true });
    expect(ms).toBeLessThan(1000);
    // Everything was over before the answer: the interrupted event came first (same socket, in order).
    const interrupted = events.events.filter((e) => e.method === "interrupted");
    expect(interrupted).toHaveLength(1);
    expect(interrupted[0]!.params).toMatchObject({ generationId, phase: "streaming" });
    const state = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
    expect(state.state.generating).toBe(false);
    expect(state.state.generationId).toBeNull();

    // The partial text is what the client saw, stored and marked as cut.
    const seen = events.events
      .filter((e) => e.method === "generation_progress" && e.params.kind === "text")
      .map((e) => e.params.delta)
      .join("");
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.length).toBeLessThan(words.join("").length);
    const assistants = state.records!.filter((r) => r.type === "message" && r.role === "assistant");
    expect(assistants).toHaveLength(1);
    expect(assistants[0]).toMatchObject({ role: "assistant", content: seen, interrupted: true, generationId });
    // The message_added of the partial text precedes the interrupted event; no generation_complete.
    const methods = events.methods();
    expect(methods.lastIndexOf("message_added")).toBeLessThan(methods.indexOf("interrupted"));
    expect(methods).not.toContain("generation_complete");
    expect(methods).not.toContain("error");

    // The HTTP stream was really aborted by us.
    expect(fx.fake.exchanges).toHaveLength(1);
    expect(await fx.fake.exchanges[0]!.ended).toBe("client_closed");

    // Idempotent: nothing runs any more.
    expect(await fx.client.interrupt({ conversationId: id })).toEqual({ interrupted: false });
    await fx.client.conversation.get({ conversationId: id });
    expect(count(events, "interrupted")).toBe(1);

    // The next step works, and the model sees the partial answer.
    const request = await nextStepCompletes(id, events);
    expect(request.messages.at(-1)).toEqual({ role: "assistant", content: seen });
  });

  it("an interrupt before the first token stores nothing and still aborts the request", async () => {
    fx.fake.enqueue({ kind: "hang", when: "before_headers" });
    const { id, events } = await newConversation(fx.client);
    const { generationId } = await fx.client.step({ conversationId: id });
    await events.waitForMethod("generation_started");
    // Let the request reach the fake.
    const deadline = Date.now() + 2000;
    while (fx.fake.exchanges.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(fx.fake.exchanges).toHaveLength(1);

    const { result, ms } = await timedInterrupt(fx.client, id);
    expect(result).toEqual({ interrupted: true });
    expect(ms).toBeLessThan(1000);
    const interrupted = events.events.filter((e) => e.method === "interrupted");
    expect(interrupted).toHaveLength(1);
    expect(interrupted[0]!.params).toMatchObject({ generationId, phase: "streaming" });
    expect(await fx.fake.exchanges[0]!.ended).toBe("client_closed");
    const { records } = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
    expect(records!.map((r) => (r.type === "message" ? r.role : r.type))).toEqual(["user"]);
    await nextStepCompletes(id, events);
  });

  it("reasoning seen before the interrupt is kept as a reasoning record; the next request stays valid", async () => {
    const thoughts = Array.from({ length: 40 }, (_, i) => `t${i} `);
    fx.fake.enqueue({ kind: "reply", reasoning: thoughts, text: ["never reached"], delayMs: 30 });
    const { id, events } = await newConversation(fx.client);
    const { generationId } = await fx.client.step({ conversationId: id });
    await events.waitForMethod("generation_progress");
    expect((await fx.client.interrupt({ conversationId: id })).interrupted).toBe(true);
    const seen = events.events
      .filter((e) => e.method === "generation_progress" && e.params.kind === "reasoning")
      .map((e) => e.params.delta)
      .join("");
    const { records } = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
    // No text came: the thinking is stored alone, marked as cut, and no empty assistant message with it.
    expect(records!.at(-1)).toMatchObject({ type: "reasoning", content: seen, interrupted: true, generationId });
    expect(records!.filter((r) => r.type === "message" && r.role === "assistant")).toEqual([]);
    const request = await nextStepCompletes(id, events);
    // An empty cut answer says nothing to the model; reasoning is never sent back.
    expect(request.messages.at(-1)).toEqual({ role: "user", content: "hello" });
  });
});

describe("interrupt while waiting for confirmation", () => {
  it("skips the pending call (reason interrupted, phase pending) and empties pendingTools", async () => {
    fx.fake.enqueue({ kind: "reply", text: ["Let me look."], toolCalls: [shellCall("echo should-not-run", "p1")] });
    const { id, events } = await newConversation(fx.client);
    const { generationId } = await fx.client.step({ conversationId: id });
    await events.waitForMethod("tool_pending");
    expect((await fx.client.conversation.get({ conversationId: id })).state.pendingTools).toHaveLength(1);

    const { result, ms } = await timedInterrupt(fx.client, id);
    expect(result).toEqual({ interrupted: true });
    expect(ms).toBeLessThan(1000);
    const skipped = events.events.filter((e) => e.method === "tool_skipped");
    expect(skipped).toHaveLength(1);
    expect(skipped[0]!.params.reason).toBe("interrupted");
    expect(skipped[0]!.params.record).toMatchObject({ toolCallId: "p1", status: "skipped", success: false });
    const interrupted = events.events.filter((e) => e.method === "interrupted");
    expect(interrupted).toHaveLength(1);
    expect(interrupted[0]!.params).toMatchObject({ generationId, phase: "pending" });
    // The skip is announced before the generation says it ended.
    expect(events.methods().indexOf("tool_skipped")).toBeLessThan(events.methods().indexOf("interrupted"));
    expect(events.methods()).not.toContain("tool_executing");

    const state = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
    expect(state.state.pendingTools).toEqual([]);
    expect(state.state.generating).toBe(false);
    expect(state.records!.find((r) => r.type === "tool_call")).toMatchObject({ toolCallId: "p1", status: "skipped" });
    // The first model call had completed normally.
    expect(await fx.fake.exchanges[0]!.ended).toBe("completed");

    // A decision after the interrupt is refused: the call is settled.
    const late = await fx.client.tool.confirm({ conversationId: id, toolCallId: "p1", action: "confirm" }).catch((e) => e);
    expect(late.code).toBe(-32022);

    const request = await nextStepCompletes(id, events);
    const answer = request.messages.find((m: any) => m.role === "tool" && m.tool_call_id === "p1");
    expect(answer.content).toMatch(/not run/i);
    expect(count(events, "interrupted")).toBe(1);
  });

  it("several calls offered together are all skipped, with one interrupted event", async () => {
    fx.fake.enqueue({
      kind: "reply",
      toolCalls: [shellCall("echo a", "m1"), shellCall("echo b", "m2"), shellCall("echo c", "m3")],
    });
    const { id, events } = await newConversation(fx.client);
    const { generationId } = await fx.client.step({ conversationId: id });
    await events.waitFor((e) => e.method === "tool_pending" && e.params.toolCallId === "m3");
    // Decide one of them (not the first): it still never runs.
    await fx.client.tool.confirm({ conversationId: id, toolCallId: "m2", action: "confirm" });
    expect((await fx.client.interrupt({ conversationId: id })).interrupted).toBe(true);

    const skipped = events.events.filter((e) => e.method === "tool_skipped");
    expect(skipped.map((e) => e.params.record.toolCallId)).toEqual(["m1", "m2", "m3"]);
    expect(skipped.every((e) => e.params.reason === "interrupted")).toBe(true);
    expect(events.methods()).not.toContain("tool_executing");
    const interrupted = events.events.filter((e) => e.method === "interrupted");
    expect(interrupted).toHaveLength(1);
    expect(interrupted[0]!.params).toMatchObject({ generationId, phase: "pending" });

    const state = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
    expect(state.state.pendingTools).toEqual([]);
    const tools = state.records!.filter((r) => r.type === "tool_call");
    expect(tools.map((r) => r.type === "tool_call" && r.status)).toEqual(["skipped", "skipped", "skipped"]);

    const request = await nextStepCompletes(id, events);
    expect(request.messages.filter((m: any) => m.role === "tool").map((m: any) => m.tool_call_id)).toEqual(["m1", "m2", "m3"]);
  });
});

describe("interrupt while a tool runs", () => {
  it("kills the tool's whole process group within a second; the call ends failed; phase executing", async () => {
    fx.fake.enqueue({ kind: "reply", toolCalls: [shellCall("echo BASH:$$; sleep 30 & echo CHILD:$!; wait", "x1")] });
    const { id, events } = await newConversation(fx.client);
    const { generationId } = await fx.client.step({ conversationId: id, autoConfirm: true });
    await events.waitFor(
      (e) =>
        e.method === "tool_output" &&
        /CHILD:\d+/.test(
          events.events
            .filter((o) => o.method === "tool_output")
            .map((o) => o.params.chunk)
            .join(""),
        ),
    );
    const output = events.events
      .filter((e) => e.method === "tool_output")
      .map((e) => e.params.chunk)
      .join("");
    const bashPid = Number(/BASH:(\d+)/.exec(output)![1]);
    const childPid = Number(/CHILD:(\d+)/.exec(output)![1]);
    expect(isAlive(bashPid)).toBe(true);
    expect(isAlive(childPid)).toBe(true);

    const started = performance.now();
    const result = await fx.client.interrupt({ conversationId: id });
    const ms = performance.now() - started;
    expect(result).toEqual({ interrupted: true });
    expect(ms).toBeLessThan(1000);
    // Both the shell and its background child are gone within the second.
    expect(await waitGone([bashPid, childPid], Math.max(0, 1000 - ms))).toEqual([]);

    const interrupted = events.events.filter((e) => e.method === "interrupted");
    expect(interrupted).toHaveLength(1);
    expect(interrupted[0]!.params).toMatchObject({ generationId, phase: "executing" });
    // The loop reports the run as failed (it did not succeed), never as completed or skipped.
    const failed = events.events.filter((e) => e.method === "tool_failed");
    expect(failed).toHaveLength(1);
    expect(failed[0]!.params.record).toMatchObject({ toolCallId: "x1", status: "failed", success: false });
    expect(failed[0]!.params.record.result).toContain("[interrupted]");
    expect(failed[0]!.params.record.result).toContain("CHILD:");
    expect(events.methods()).not.toContain("tool_completed");
    expect(events.methods()).not.toContain("tool_skipped");
    expect(events.methods().indexOf("tool_failed")).toBeLessThan(events.methods().indexOf("interrupted"));

    const { records, state } = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
    expect(state.generating).toBe(false);
    expect(records!.find((r) => r.type === "tool_call")).toMatchObject({ status: "failed", success: false });

    const request = await nextStepCompletes(id, events);
    const answer = request.messages.find((m: any) => m.role === "tool" && m.tool_call_id === "x1");
    expect(answer.content).toContain("[interrupted]");
  });

  it("a running call and calls still waiting behind it: the first fails, the others are skipped", async () => {
    fx.fake.enqueue({
      kind: "reply",
      toolCalls: [shellCall("echo STARTED; sleep 30", "r1"), shellCall("echo two", "r2"), shellCall("echo three", "r3")],
    });
    const { id, events } = await newConversation(fx.client);
    const { generationId } = await fx.client.step({ conversationId: id, autoConfirm: 1 });
    await events.waitFor((e) => e.method === "tool_output" && e.params.chunk.includes("STARTED"));
    // r2 and r3 are still waiting for a decision.
    expect((await fx.client.conversation.get({ conversationId: id })).state.pendingTools.map((t) => t.toolCallId)).toEqual(["r2", "r3"]);
    const { result, ms } = await timedInterrupt(fx.client, id);
    expect(result.interrupted).toBe(true);
    expect(ms).toBeLessThan(1000);
    expect(events.events.filter((e) => e.method === "tool_failed").map((e) => e.params.record.toolCallId)).toEqual(["r1"]);
    const skipped = events.events.filter((e) => e.method === "tool_skipped");
    expect(skipped.map((e) => [e.params.record.toolCallId, e.params.reason])).toEqual([
      ["r2", "interrupted"],
      ["r3", "interrupted"],
    ]);
    const interrupted = events.events.filter((e) => e.method === "interrupted");
    expect(interrupted).toHaveLength(1);
    expect(interrupted[0]!.params).toMatchObject({ generationId, phase: "executing" });
    expect((await fx.client.conversation.get({ conversationId: id })).state.pendingTools).toEqual([]);
    await nextStepCompletes(id, events);
  });
});

describe("interrupt when nothing runs", () => {
  it("answers {interrupted: false} and sends no event", async () => {
    const { id, events } = await newConversation(fx.client);
    const seqBefore = (await fx.client.conversation.get({ conversationId: id })).state.seq;
    const eventsBefore = events.events.length;
    expect(await fx.client.interrupt({ conversationId: id })).toEqual({ interrupted: false });
    expect(await fx.client.interrupt({ conversationId: id })).toEqual({ interrupted: false });
    // A round trip after: anything published meanwhile would have arrived by now.
    const after = await fx.client.conversation.get({ conversationId: id });
    expect(after.state.seq).toBe(seqBefore);
    expect(events.events.length).toBe(eventsBefore);
    expect(fx.fake.requests).toHaveLength(0);
  });

  it("after a generation completed normally, interrupt is a no-op too", async () => {
    fx.fake.enqueue({ kind: "reply", text: ["done"] });
    const { id, events } = await newConversation(fx.client);
    const { generationId } = await fx.client.step({ conversationId: id });
    await events.waitForEnd(generationId);
    const n = events.events.length;
    expect(await fx.client.interrupt({ conversationId: id })).toEqual({ interrupted: false });
    await fx.client.conversation.get({ conversationId: id });
    expect(events.events.length).toBe(n);
  });

  it("two clients interrupting the same generation at once: both answer only after the end, one interrupted event", async () => {
    fx.fake.enqueue({ kind: "reply", toolCalls: [shellCall("echo nope", "d1")] });
    const { id, events } = await newConversation(fx.client);
    const other = await fx.connect();
    const { generationId } = await fx.client.step({ conversationId: id });
    await events.waitForMethod("tool_pending");
    const results = await Promise.all([fx.client.interrupt({ conversationId: id }), other.interrupt({ conversationId: id })]);
    // Whichever came second found the generation still ending or already gone; neither saw it running afterwards.
    expect(results.some((r) => r.interrupted)).toBe(true);
    expect((await fx.client.conversation.get({ conversationId: id })).state.generating).toBe(false);
    expect(events.events.filter((e) => e.method === "interrupted" && e.params.generationId === generationId)).toHaveLength(1);
    expect(count(events, "tool_skipped")).toBe(1);
    await nextStepCompletes(id, events);
  });
});
