/**
 * The agent's plan: the built-in update_plan tool runs without asking
 * (unless settings.toolPolicy says otherwise), each call announces
 * plan_updated and sets state.plan, which a reconnecting client finds in its
 * subscribe snapshot and which survives a restart (stored with the run
 * state). Bad plans fail the call with the field named; a policy of "never"
 * takes the tool and its prompt guidance away from the model.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MAX_PLAN_ENTRIES } from "../../protocol/index.js";
import { PLAN_GUIDANCE } from "../../src/context/system-prompt.js";
import { readRunState } from "../../src/store/lowdb-run-state.js";
import { newConversation, startAgentFixture, useAgentFixture, type AgentFixture } from "../harness/agent-fixture.js";
import { EventRecorder } from "../harness/event-recorder.js";

const PLAN = [
  { content: "Reproduce the failing test", status: "completed", priority: "high" },
  { content: "Fix the rounding", status: "in_progress" },
  { content: "Run the suite", status: "pending", priority: "low" },
] as const;

/** A model reply calling update_plan with `entries`, then a closing answer. */
const planCall = (entries: unknown, id = "call_plan") => [
  { kind: "reply" as const, toolCalls: [{ id, name: "update_plan", args: JSON.stringify({ entries }) }] },
  { kind: "reply" as const, text: ["Planned."] },
];

describe("update_plan through the protocol", () => {
  const fx = useAgentFixture();

  it("runs without asking, announces plan_updated between tool_executing and tool_completed, and sets state.plan", async () => {
    fx.fake.enqueue(...planCall(PLAN));
    const { id, events } = await newConversation(fx.client);
    // No autoConfirm: the tool runs by itself (approval "ask" is the default).
    const { generationId } = await fx.client.step({ conversationId: id });
    await events.waitForEnd(generationId);

    expect(events.of("tool_pending")[0]).toMatchObject({
      toolName: "update_plan",
      autoConfirmed: true,
      autoReason: "policy",
      kind: "think",
      title: "Update plan (3 steps)",
      locations: [],
    });
    const methods = events.methods().filter((m) => m.startsWith("tool_") || m === "plan_updated");
    expect(methods).toEqual(["tool_pending", "tool_executing", "plan_updated", "tool_completed"]);
    expect(events.of("plan_updated")[0]).toEqual(expect.objectContaining({ generationId, entries: PLAN }));
    // The model reads where the plan stands.
    const toolMessage = fx.fake.requests[1]!.messages.find((m: { role: string }) => m.role === "tool") as { content: string };
    expect(toolMessage.content).toBe("Plan updated: 3 steps (1 completed, 1 in progress, 1 pending).");

    const { state } = await fx.client.conversation.get({ conversationId: id });
    expect(state.plan).toMatchObject({ entries: PLAN, generationId });
    expect(Date.parse(state.plan!.updatedAt)).not.toBeNaN();
  });

  it("a later call replaces the whole plan; a client reconnecting after it finds it in the subscribe snapshot", async () => {
    fx.fake.enqueue(...planCall(PLAN), ...planCall([{ content: "Run the suite", status: "completed" }], "call_plan_2"));
    const { id, events } = await newConversation(fx.client);
    const first = await fx.client.step({ conversationId: id });
    await events.waitForEnd(first.generationId);
    const seenSeq = events.events.at(-1)!.params.seq;
    await fx.client.message.append({ conversationId: id, role: "user", content: "go on" });
    const second = await fx.client.step({ conversationId: id });
    await events.waitForEnd(second.generationId);

    const late = await fx.connect();
    const replay = new EventRecorder(late, id);
    const snapshot = await late.conversation.subscribe({ conversationId: id, afterSeq: seenSeq });
    expect(snapshot.state.plan).toMatchObject({ entries: [{ content: "Run the suite", status: "completed" }], generationId: second.generationId });
    // The missed plan_updated is replayed too.
    expect(replay.of("plan_updated").map((e) => e.entries)).toEqual([[{ content: "Run the suite", status: "completed" }]]);
    await late.close();
  });

  it("a bad plan fails the call naming the field, announces nothing and keeps the plan", async () => {
    fx.fake.enqueue(...planCall(PLAN));
    const { id, events } = await newConversation(fx.client);
    await events.waitForEnd((await fx.client.step({ conversationId: id })).generationId);
    const before = (await fx.client.conversation.get({ conversationId: id })).state.plan;

    const bad = [
      [{ content: "Ship it", status: "done" }, "entries[0].status"],
      [{ content: "   ", status: "pending" }, "entries[0].content: must not be empty"],
      [{ content: "x".repeat(501), status: "pending" }, "entries[0].content: must be at most 500 characters"],
      [Array.from({ length: MAX_PLAN_ENTRIES + 1 }, () => ({ content: "step", status: "pending" })), `entries: must hold at most ${MAX_PLAN_ENTRIES} entries`],
    ] as const;
    for (const [i, [entries, problem]] of bad.entries()) {
      fx.fake.enqueue(...planCall(Array.isArray(entries) ? entries : [entries], `call_bad_${i}`));
      await fx.client.message.append({ conversationId: id, role: "user", content: "again" });
      const from = events.events.length;
      await events.waitForEnd((await fx.client.step({ conversationId: id })).generationId);
      const failed = events.events.slice(from).find((e) => e.method === "tool_failed");
      expect(failed?.params.record.result).toContain(problem);
      expect(events.events.slice(from).some((e) => e.method === "plan_updated")).toBe(false);
    }
    expect((await fx.client.conversation.get({ conversationId: id })).state.plan).toEqual(before);
  });

  it("the default system prompt says when to keep a plan while update_plan is offered", async () => {
    fx.fake.enqueue({ kind: "reply", text: ["hi"] });
    const { id, events } = await newConversation(fx.client);
    await events.waitForEnd((await fx.client.step({ conversationId: id })).generationId);
    const system = (fx.fake.requests[0]!.messages as { role: string; content: string }[])[0]!;
    expect(system.role).toBe("system");
    expect(system.content).toContain(PLAN_GUIDANCE);
  });

  it("toolPolicy never: not offered, not in the prompt, a call fails; ask: it waits for tool.confirm", async () => {
    fx.fake.enqueue({ kind: "reply", text: ["hi"] });
    const off = await newConversation(fx.client, { settings: { toolPolicy: { update_plan: "never" } } });
    await off.events.waitForEnd((await fx.client.step({ conversationId: off.id })).generationId);
    const request = fx.fake.requests[0]!;
    expect(request.tools!.map((t: { function: { name: string } }) => t.function.name)).not.toContain("update_plan");
    expect((request.messages as { content: string }[])[0]!.content).not.toContain("update_plan");
    expect((await fx.client.tools.list()).tools.map((t) => t.name)).toContain("update_plan");

    fx.fake.enqueue(...planCall(PLAN));
    await fx.client.message.append({ conversationId: off.id, role: "user", content: "plan anyway" });
    await off.events.waitForEnd((await fx.client.step({ conversationId: off.id })).generationId);
    expect(off.events.of("tool_failed")[0]!.record.result).toContain("not allowed by this conversation's policy");
    expect(off.events.of("plan_updated")).toEqual([]);
    expect((await fx.client.conversation.get({ conversationId: off.id })).state.plan).toBeNull();

    fx.fake.enqueue(...planCall(PLAN));
    const ask = await newConversation(fx.client, { settings: { toolPolicy: { update_plan: "ask" } } });
    const { generationId } = await fx.client.step({ conversationId: ask.id });
    const pending = await ask.events.waitForMethod("tool_pending");
    expect(pending.params).toMatchObject({ toolName: "update_plan", autoConfirmed: false });
    await fx.client.tool.confirm({ conversationId: ask.id, toolCallId: "call_plan", action: "confirm" });
    await ask.events.waitForEnd(generationId);
    expect(ask.events.of("plan_updated")).toHaveLength(1);
  });
});

describe("update_plan over the Responses API wire", () => {
  const fx = useAgentFixture({ wire: "responses" });

  it("sets the plan the same way", async () => {
    fx.fake.enqueue(...planCall(PLAN));
    const { id, events } = await newConversation(fx.client);
    const { generationId } = await fx.client.step({ conversationId: id });
    await events.waitForEnd(generationId);
    expect(events.of("plan_updated")[0]).toMatchObject({ generationId, entries: PLAN });
    expect((await fx.client.conversation.get({ conversationId: id })).state.plan).toMatchObject({ entries: PLAN });
  });
});

describe("the plan survives a restart", () => {
  let dataDir: string;
  let fx: AgentFixture | undefined;
  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "agentwire-plan-restart-"));
  });
  afterEach(async () => {
    await fx?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("is in conversation.get and the subscribe snapshot of the next server on the same data dir", async () => {
    fx = await startAgentFixture({ config: { server: { dataDir } } });
    fx.fake.enqueue(...planCall(PLAN));
    const { id, events } = await newConversation(fx.client);
    const { generationId } = await fx.client.step({ conversationId: id });
    await events.waitForEnd(generationId);
    await fx.close();

    fx = await startAgentFixture({ config: { server: { dataDir } } });
    const got = await fx.client.conversation.get({ conversationId: id });
    expect(got.state.plan).toMatchObject({ entries: PLAN, generationId });
    const snapshot = await fx.client.conversation.subscribe({ conversationId: id });
    expect(snapshot.state.plan).toEqual(got.state.plan);
  });
});

it("a stored plan that does not parse is dropped on its own; the rest of the run state holds", () => {
  const rest = { lastError: null, lastGeneration: null, autoConfirmRemaining: 2 };
  const plan = { entries: [{ content: "a", status: "pending" }], generationId: "g_1", updatedAt: "2026-01-01T00:00:00.000Z" };
  expect(readRunState({ ...rest, plan })).toEqual({ ...rest, plan });
  expect(readRunState({ ...rest, plan: { entries: [{ content: "a", status: "done" }] } })).toEqual(rest);
  expect(readRunState(rest)).toEqual(rest);
});
