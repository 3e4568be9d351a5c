/**
 * conversation.fork and the plan: the fork starts with the plan as it was at
 * the fork point — the one the last completed update_plan call among the
 * copied records set — not the original's current plan.
 */
import { expect, it } from "vitest";
import { newConversation, useAgentFixture } from "../harness/agent-fixture.js";

const FIRST = [{ content: "Read the code", status: "in_progress" }] as const;
const SECOND = [
  { content: "Read the code", status: "completed" },
  { content: "Fix it", status: "in_progress", priority: "high" },
] as const;

const planCall = (entries: unknown, id: string) => [
  { kind: "reply" as const, toolCalls: [{ id, name: "update_plan", args: JSON.stringify({ entries }) }] },
  { kind: "reply" as const, text: ["Planned."] },
];

const fx = useAgentFixture();

it("a fork has the plan of its fork point: the later plan, the earlier one, or none before the first", async () => {
  fx.fake.enqueue(...planCall(FIRST, "call_p1"), ...planCall(SECOND, "call_p2"));
  const { id, events } = await newConversation(fx.client); // record 0: the user's message
  const first = await fx.client.step({ conversationId: id }); // records 1–3: a tool round and "Planned."
  await events.waitForEnd(first.generationId);
  await fx.client.message.append({ conversationId: id, role: "user", content: "go on" }); // record 4
  const second = await fx.client.step({ conversationId: id }); // records 5–7
  await events.waitForEnd(second.generationId);
  const original = (await fx.client.conversation.get({ conversationId: id })).state.plan;
  expect(original).toMatchObject({ entries: SECOND, generationId: second.generationId });

  const whole = await fx.client.conversation.fork({ conversationId: id });
  const wholeState = (await fx.client.conversation.get({ conversationId: whole.id })).state;
  expect(wholeState.plan).toMatchObject({ entries: SECOND, generationId: second.generationId });
  // Not announced: the fork's first event is still to come.
  expect(wholeState.seq).toBe(0);
  expect((await fx.client.conversation.subscribe({ conversationId: whole.id })).state.plan).toEqual(wholeState.plan);

  const earlier = await fx.client.conversation.fork({ conversationId: id, atRecord: 4 });
  expect((await fx.client.conversation.get({ conversationId: earlier.id })).state.plan).toMatchObject({
    entries: FIRST,
    generationId: first.generationId,
  });

  const before = await fx.client.conversation.fork({ conversationId: id, atRecord: 1 });
  expect((await fx.client.conversation.get({ conversationId: before.id })).state.plan).toBeNull();
  // The original keeps its own.
  expect((await fx.client.conversation.get({ conversationId: id })).state.plan).toEqual(original);
});
