/**
 * Many generations at once, several watchers of one generation, and a long
 * conversation where tool history truncation kicks in.
 */
import { describe, expect, it } from "vitest";
import { newConversation, useAgentFixture } from "../harness/agent-fixture.js";
import { EventRecorder } from "../harness/event-recorder.js";

const fx = useAgentFixture();

function strictlyIncreasing(values: number[]): boolean {
  return values.every((v, i) => i === 0 || v > values[i - 1]!);
}

/** The first user message of a chat request (how we tell conversations apart at the fake). */
function firstUser(body: { messages: any[] }): string | undefined {
  return body.messages.find((m) => m.role === "user")?.content;
}

describe("10 conversations generating at once", () => {
  it("all complete, each with its own records, strictly increasing seqs, and its own tool result", async () => {
    // `bench-tool-true` answers by the request itself, not by queue order: a shell
    // call of `true` first, a short text once the last message is a tool result.
    const n = 10;
    const conversations = await Promise.all(
      Array.from({ length: n }, (_, i) => newConversation(fx.client, { model: "bench-tool-true" }, `hello from #${i}`)),
    );
    const steps = await Promise.all(conversations.map(({ id }) => fx.client.step({ conversationId: id, autoConfirm: true })));
    const ends = await Promise.all(conversations.map(({ events }, i) => events.waitForEnd(steps[i]!.generationId, 15_000)));

    expect(fx.fake.requests).toHaveLength(2 * n);
    for (let i = 0; i < n; i++) {
      const { id, events } = conversations[i]!;
      const { generationId } = steps[i]!;
      expect(ends[i]!.method).toBe("generation_complete");
      expect(ends[i]!.params).toMatchObject({ final: true, iteration: 2 });

      // Every event is this conversation's and this generation's; seqs strictly increase.
      expect(events.events.every((e) => e.params.conversationId === id)).toBe(true);
      const generationEvents = events.events.filter((e) => "generationId" in e.params);
      expect(generationEvents.every((e) => e.params.generationId === generationId)).toBe(true);
      expect(strictlyIncreasing(events.events.map((e) => e.params.seq))).toBe(true);
      expect(events.flow()).toEqual([
        "message_added",
        "generation_started",
        "message_added",
        "usage_updated",
        "generation_complete",
        "tool_pending",
        "tool_executing",
        "tool_completed",
        "generation_started",
        "generation_progress",
        "message_added",
        "usage_updated",
        "generation_complete",
      ]);

      const { records, state } = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
      expect(state.generating).toBe(false);
      expect(state.lastError).toBeNull();
      expect(records!.map((r) => (r.type === "message" ? r.role : r.type === "tool_call" ? `tool:${r.status}` : r.type))).toEqual([
        "user",
        "assistant",
        "tool:completed",
        "assistant",
      ]);
      expect(records![0]).toMatchObject({ content: `hello from #${i}` });
      expect(records!.every((r) => r.type !== "message" || r.role === "user" || r.generationId === generationId)).toBe(true);
      const tool = records![2]!;
      expect(tool.type === "tool_call" && tool.generationId).toBe(generationId);
      const assistant = records![1]!;
      const callId = tool.type === "tool_call" ? tool.toolCallId : "";
      expect(assistant.type === "message" && assistant.toolCalls).toEqual([{ toolCallId: callId, toolName: "shell" }]);
      // The streamed final text is what was stored.
      const text = events.events.filter((e) => e.method === "generation_progress").map((e) => e.params.delta).join("");
      expect(records![3]).toMatchObject({ role: "assistant", content: text });

      // At the fake: exactly two requests carried this conversation, the second answering its own call.
      const mine = fx.fake.requests.filter((r) => firstUser(r) === `hello from #${i}`);
      expect(mine).toHaveLength(2);
      expect(mine[1]!.messages.at(-1)).toMatchObject({ role: "tool", tool_call_id: callId });
      expect(mine[1]!.messages.at(-2).tool_calls.map((c: any) => c.id)).toEqual([callId]);
    }
    // No two conversations share a tool call id.
    const callIds = new Set(fx.fake.requests.filter((r) => r.messages.at(-1).role === "tool").map((r) => r.messages.at(-1).tool_call_id));
    expect(callIds.size).toBe(n);
    // None of them is still counted as running.
    expect((await fx.client.server.status()).generations).toBe(0);
  });
});

describe("two clients watching one generation", () => {
  it("both receive the same events, with the same seqs and params, in the same order", async () => {
    // The watcher is on a real WebSocket (the fixture's client on an in-memory link): this is the
    // agent flow's round trip over a real socket, and both transports must carry the same events.
    const watcher = await fx.server.connect();
    const conversation = await fx.client.conversation.create({});
    const mine = new EventRecorder(fx.client, conversation.id);
    const theirs = new EventRecorder(watcher, conversation.id);
    await fx.client.conversation.subscribe({ conversationId: conversation.id });
    await watcher.conversation.subscribe({ conversationId: conversation.id });
    await fx.client.message.append({ conversationId: conversation.id, role: "user", content: "watch this" });

    fx.fake.enqueue(
      {
        kind: "reply",
        reasoning: ["thinking ", "hard"],
        text: ["Let ", "me ", "run ", "it."],
        toolCalls: [{ id: "w1", name: "shell", args: JSON.stringify({ command: "echo out; echo err >&2; echo out2" }) }],
        delayMs: 5,
      },
      { kind: "reply", text: ["All ", "done."], delayMs: 5 },
    );
    const { generationId } = await fx.client.step({ conversationId: conversation.id });
    await mine.waitForMethod("tool_pending");
    // The other client confirms: decisions from any subscriber count.
    await watcher.tool.confirm({ conversationId: conversation.id, toolCallId: "w1", action: "confirm" });
    await mine.waitForEnd(generationId);
    await theirs.waitForEnd(generationId);
    // A round trip on each socket, so nothing is still in flight.
    await fx.client.conversation.get({ conversationId: conversation.id });
    await watcher.conversation.get({ conversationId: conversation.id });

    const view = (r: EventRecorder) => JSON.stringify(r.events.map((e) => [e.method, e.params.seq, e.params]));
    expect(mine.events.length).toBeGreaterThan(10);
    expect(view(theirs)).toBe(view(mine));
    expect(strictlyIncreasing(mine.events.map((e) => e.params.seq))).toBe(true);
    // Seqs have no gaps within one subscription.
    const seqs = mine.events.map((e) => e.params.seq);
    expect(seqs.at(-1)! - seqs[0]! + 1).toBe(seqs.length);
  });
});

describe("toolHistoryRounds truncation in a long conversation", () => {
  it("keeps the last 2 tool calls in full and reduces older ones; every request is accepted", async () => {
    const rounds = 6;
    for (let r = 1; r <= rounds; r++) {
      fx.fake.enqueue({
        kind: "reply",
        text: [`Round ${r}.`],
        toolCalls: [{ id: `h${r}`, name: "shell", args: JSON.stringify({ command: `echo result-of-round-${r}` }) }],
      });
    }
    fx.fake.enqueue({ kind: "reply", text: ["Finished."] });
    const { id, events } = await newConversation(fx.client, { settings: { toolHistoryRounds: 2 } });
    const { generationId } = await fx.client.step({ conversationId: id, autoConfirm: true });
    const end = await events.waitForEnd(generationId, 15_000);
    expect(end.params).toMatchObject({ final: true, iteration: rounds + 1 });
    expect(fx.fake.requests).toHaveLength(rounds + 1);
    expect(fx.fake.rejected).toEqual([]);

    const last = fx.fake.requests.at(-1)!.messages;
    const calls = last.filter((m: any) => m.role === "assistant" && m.tool_calls).flatMap((m: any) => m.tool_calls);
    expect(calls.map((c: any) => c.id)).toEqual(["h1", "h2", "h3", "h4", "h5", "h6"]);
    const answers = new Map(last.filter((m: any) => m.role === "tool").map((m: any) => [m.tool_call_id, m.content]));
    const reduced = "[output omitted: shell — older than the last 2 tool calls]";
    for (let r = 1; r <= rounds; r++) {
      const call = calls.find((c: any) => c.id === `h${r}`);
      // The name is always kept.
      expect(call.function.name).toBe("shell");
      if (r <= rounds - 2) {
        expect(call.function.arguments).toBe("{}");
        expect(answers.get(`h${r}`)).toBe(reduced);
      } else {
        expect(JSON.parse(call.function.arguments)).toEqual({ command: `echo result-of-round-${r}` });
        expect(answers.get(`h${r}`)).toContain(`result-of-round-${r}`);
      }
    }
    // Nothing of the reduced rounds leaks through; the assistant texts stay.
    const text = JSON.stringify(last);
    for (let r = 1; r <= rounds - 2; r++) expect(text).not.toContain(`result-of-round-${r}`);
    for (let r = 1; r <= rounds; r++) expect(text).toContain(`Round ${r}.`);

    // Truncation is applied anew on every request: the 4th request had rounds 2 and 3 in full, round 1 reduced.
    const fourth = fx.fake.requests[3]!.messages;
    const fourthAnswers = new Map(fourth.filter((m: any) => m.role === "tool").map((m: any) => [m.tool_call_id, m.content]));
    expect(fourthAnswers.get("h1")).toBe(reduced);
    expect(fourthAnswers.get("h2")).toContain("result-of-round-2");
    expect(fourthAnswers.get("h3")).toContain("result-of-round-3");

    // The stored records keep everything in full.
    const { records } = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
    const tools = records!.filter((r) => r.type === "tool_call");
    expect(tools).toHaveLength(rounds);
    tools.forEach((t, i) => expect(t.type === "tool_call" && t.result).toContain(`result-of-round-${i + 1}`));
  });
});
