/**
 * Sub-agents (issue 24): spawn_agent runs a child conversation to completion
 * and hands its final answer to the parent's model as the tool result. The
 * child is an ordinary conversation listed under its parent; its tool calls
 * are offered (and confirmed) on the child; interrupting the parent ends
 * both; depth is bounded. The fake model serves every request from one
 * queue, in the order the requests arrive: the parent waits for its child,
 * so parent and child requests never interleave.
 */
import { describe, expect, it } from "vitest";
import type { AgentwireClient } from "../../clients/typescript/index.js";
import type { FakeOpenAI } from "../fake-openai/server.js";
import { newConversation, useAgentFixture } from "../harness/agent-fixture.js";
import { EventRecorder } from "../harness/event-recorder.js";

const spawn = (prompt: string, id = "call_spawn") => ({
  kind: "reply" as const,
  toolCalls: [{ id, name: "spawn_agent", args: JSON.stringify({ prompt }) }],
});
const say = (text: string) => ({ kind: "reply" as const, text: [text] });
const toolMessages = (fake: FakeOpenAI, index: number) =>
  fake.messagesOf(index).filter((m: { role: string }) => m.role === "tool") as { role: string; content: string; tool_call_id: string }[];

/** The parent's spawn_agent call runs a child whose shell call the parent's autoConfirm budget lets run; the parent gets its answer. */
async function roundTrip(client: AgentwireClient, fake: FakeOpenAI): Promise<void> {
  fake.enqueue(
    spawn("Count the files in src and answer with the number."),
    { kind: "reply", toolCalls: [{ id: "call_child_shell", name: "shell", args: JSON.stringify({ command: "echo 7" }) }] },
    say("There are 7 files."),
    say("The sub-agent says 7."),
  );
  const { id, events } = await newConversation(client, { title: "parent" });
  const { generationId } = await client.step({ conversationId: id, autoConfirm: true });
  await events.waitForEnd(generationId);

  // The child's first request holds its prompt alone, nothing of the parent's conversation.
  const childFirst = fake.messagesOf(1);
  expect(childFirst.filter((m: { role: string }) => m.role === "user").map((m: { content: unknown }) => m.content)).toEqual([
    "Count the files in src and answer with the number.",
  ]);
  expect(JSON.stringify(childFirst)).not.toContain("hello");
  // The parent's model reads the child's final answer as the spawn_agent result.
  expect(toolMessages(fake, 3)).toEqual([expect.objectContaining({ tool_call_id: "call_spawn", content: "There are 7 files." })]);
  expect(events.of("generation_complete").at(-1)).toMatchObject({ final: true });

  const [started] = events.of("subagent_started");
  expect(started).toMatchObject({ generationId, toolCallId: "call_spawn", agentDepth: 1 });
  const childId = started!.childConversationId;
  const completed = events.of("tool_completed")[0]!.record;
  expect(completed).toMatchObject({ toolName: "spawn_agent", status: "completed", result: "There are 7 files.", childConversationId: childId });
  // subagent_started comes after the call started running and before it completed.
  const methods = events.methods();
  expect(methods.indexOf("subagent_started")).toBeGreaterThan(methods.indexOf("tool_executing"));
  expect(methods.indexOf("subagent_started")).toBeLessThan(methods.indexOf("tool_completed"));

  // The child: an ordinary conversation with its parent's model and settings, listed under its parent.
  const parent = (await client.conversation.get({ conversationId: id })).conversation;
  const children = await client.conversation.list({ parentConversationId: id });
  expect(children.data).toHaveLength(1);
  expect(children.data[0]).toMatchObject({
    id: childId,
    parentConversationId: id,
    parentToolCallId: "call_spawn",
    agentDepth: 1,
    model: "fake-model",
    workspace: parent.workspace,
    settings: parent.settings,
  });
  expect((await client.conversation.list({ parentConversationId: childId })).data).toEqual([]);
  const child = await client.conversation.get({ conversationId: childId, includeRecords: true });
  expect(child.records!.map((r) => (r.type === "message" ? `${r.role}: ${r.content}` : r.type === "tool_call" ? `${r.toolName} ${r.status}` : r.type))).toEqual([
    "user: Count the files in src and answer with the number.",
    "assistant: ",
    "shell completed",
    "assistant: There are 7 files.",
  ]);
  expect(child.state.lastGeneration).toMatchObject({ generationId: started!.childGenerationId, outcome: "completed" });
}

describe("spawn_agent (chat wire)", () => {
  const fx = useAgentFixture();

  it("runs a child conversation to completion; the parent's model sees the child's final answer as the tool result", async () => {
    await roundTrip(fx.client, fx.fake);
  });

  it("the child's tool calls wait for tool.confirm on the child conversation, under the parent's policy", async () => {
    fx.fake.enqueue(
      spawn("Say hi with the shell."),
      { kind: "reply", toolCalls: [{ id: "call_hi", name: "shell", args: JSON.stringify({ command: "echo hi" }) }] },
      say("I said hi."),
      say("Done."),
    );
    const { id, events } = await newConversation(fx.client);
    const { generationId } = await fx.client.step({ conversationId: id });
    const pending = await events.waitForMethod("tool_pending");
    expect(pending.params).toMatchObject({ toolName: "spawn_agent", autoConfirmed: false, title: "Sub-agent: Say hi with the shell." });
    await fx.client.tool.confirm({ conversationId: id, toolCallId: "call_spawn", action: "confirm" });
    const started = (await events.waitForMethod("subagent_started")).params;
    const childId: string = started.childConversationId;

    const childEvents = new EventRecorder(fx.client, childId);
    const snapshot = await fx.client.conversation.subscribe({ conversationId: childId });
    // Offered on the child (possibly already before the subscription: then the snapshot lists it).
    const offered = snapshot.state.pendingTools.length > 0 ? snapshot.state.pendingTools[0] : (await childEvents.waitForMethod("tool_pending")).params;
    expect(offered).toMatchObject({ toolCallId: "call_hi", toolName: "shell" });
    expect(events.of("tool_pending").map((e) => e.toolCallId)).toEqual(["call_spawn"]);
    await fx.client.tool.confirm({ conversationId: childId, toolCallId: "call_hi", action: "confirm" });
    await events.waitForEnd(generationId);
    expect(toolMessages(fx.fake, 3)[0]!.content).toBe("I said hi.");
    childEvents.dispose();
  });

  it("interrupting the parent interrupts the child; the parent's tool result says so", async () => {
    fx.fake.enqueue(spawn("Take your time."), { kind: "hang", when: "before_headers" });
    const { id, events } = await newConversation(fx.client);
    const { generationId } = await fx.client.step({ conversationId: id, autoConfirm: true });
    const childId: string = (await events.waitForMethod("subagent_started")).params.childConversationId;
    // The child's model request is under way (and will never be answered).
    const deadline = Date.now() + 5000;
    while (fx.fake.exchanges.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    expect(fx.fake.exchanges).toHaveLength(2);

    expect(await fx.client.interrupt({ conversationId: id })).toEqual({ interrupted: true });
    expect(events.of("interrupted")).toEqual([expect.objectContaining({ generationId, phase: "executing" })]);
    const failed = events.of("tool_failed")[0]!.record;
    expect(failed).toMatchObject({ toolName: "spawn_agent", status: "failed", childConversationId: childId });
    expect(failed.result).toMatch(/^The sub-agent \(conversation c_\S+\) was interrupted before it finished/);
    const child = await fx.client.conversation.get({ conversationId: childId });
    expect(child.state.generating).toBe(false);
    expect(child.state.lastGeneration).toMatchObject({ outcome: "interrupted" });
    expect(await fx.fake.exchanges[1]!.ended).toBe("client_closed");
  });

  it("refuses a spawn deeper than limits.maxAgentDepth (2) with a tool error the model reads", async () => {
    fx.fake.enqueue(
      spawn("level one", "call_1"),
      spawn("level two", "call_2"),
      spawn("level three", "call_3"),
      say("grandchild did it itself"),
      say("child done"),
      say("parent done"),
    );
    const { id, events } = await newConversation(fx.client);
    const { generationId } = await fx.client.step({ conversationId: id, autoConfirm: true });
    await events.waitForEnd(generationId, 10_000);
    // Request 3 is the grandchild's second: its spawn_agent call failed without creating anything.
    const refusal = toolMessages(fx.fake, 3)[0]!;
    expect(refusal.tool_call_id).toBe("call_3");
    expect(refusal.content).toMatch(/sub-agents may nest at most 2 deep \(limits\.maxAgentDepth\)/);
    expect(toolMessages(fx.fake, 5).at(-1)!.content).toBe("child done");

    const [child] = (await fx.client.conversation.list({ parentConversationId: id })).data;
    const [grandchild] = (await fx.client.conversation.list({ parentConversationId: child!.id })).data;
    expect(grandchild).toMatchObject({ parentConversationId: child!.id, parentToolCallId: "call_2", agentDepth: 2 });
    expect((await fx.client.conversation.list({ parentConversationId: grandchild!.id })).data).toEqual([]);
    const records = (await fx.client.conversation.get({ conversationId: grandchild!.id, includeRecords: true })).records!;
    expect(records.find((r) => r.type === "tool_call")).toMatchObject({ toolName: "spawn_agent", status: "failed" });
    expect(records.find((r) => r.type === "tool_call")).not.toHaveProperty("childConversationId");
  });

  it("mode: the child runs in the mode the call names; a mode that runs calls unasked is refused to a parent that asks", async () => {
    const spawnIn = (prompt: string, mode: string, id: string) => ({
      kind: "reply" as const,
      toolCalls: [{ id, name: "spawn_agent", args: JSON.stringify({ prompt, mode }) }],
    });
    fx.fake.enqueue(spawnIn("plan it", "plan", "call_plan"), say("the plan"), spawnIn("just do it", "auto", "call_auto"), say("parent done"));
    const { id, events } = await newConversation(fx.client);
    const { generationId } = await fx.client.step({ conversationId: id, autoConfirm: true });
    await events.waitForEnd(generationId, 10_000);
    const children = (await fx.client.conversation.list({ parentConversationId: id })).data;
    expect(children).toHaveLength(1);
    expect(children[0]!.settings.mode).toBe("plan");
    // The plan-mode child was offered no writing tool.
    const childTools = ((fx.fake.requests[1] as { tools?: { function: { name: string } }[] }).tools ?? []).map((t) => t.function.name);
    expect(childTools).toContain("read_file");
    expect(childTools).not.toContain("write_file");
    expect(toolMessages(fx.fake, 3).at(-1)).toMatchObject({ tool_call_id: "call_auto", content: expect.stringMatching(/mode "auto" runs tool calls without asking/) });
  });
});

describe("spawn_agent (responses wire)", () => {
  const fx = useAgentFixture({ wire: "responses" });

  it("runs a child conversation to completion; the parent's model sees the child's final answer as the tool result", async () => {
    await roundTrip(fx.client, fx.fake);
  });
});

describe("spawn_agent with limits.maxChildAgents 2", () => {
  const fx = useAgentFixture({ config: { limits: { maxChildAgents: 2 } } });

  it("a third child of one conversation is refused with a tool error; the first two ran", async () => {
    fx.fake.enqueue(
      {
        kind: "reply",
        toolCalls: ["one", "two", "three"].map((n) => ({ id: `call_${n}`, name: "spawn_agent", args: JSON.stringify({ prompt: `task ${n}` }) })),
      },
      say("answer one"),
      say("answer two"),
      say("all done"),
    );
    const { id, events } = await newConversation(fx.client);
    const { generationId } = await fx.client.step({ conversationId: id, autoConfirm: true });
    await events.waitForEnd(generationId);
    const results = toolMessages(fx.fake, 3).map((m) => m.content);
    expect(results.slice(0, 2)).toEqual(["answer one", "answer two"]);
    expect(results[2]).toMatch(/already created 2 sub-agents, the most one conversation may \(limits\.maxChildAgents\)/);
    expect((await fx.client.conversation.list({ parentConversationId: id })).data.map((c) => c.parentToolCallId)).toEqual(["call_two", "call_one"]);
    expect(events.of("subagent_started")).toHaveLength(2);
  });
});
