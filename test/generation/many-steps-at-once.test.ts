/**
 * Many steps at once pass through the server's model-call gate
 * (src/generation/turn-gate.ts: 2 starts per event-loop turn, the rest in
 * later turns): every one still runs to its end, in full, and one
 * interrupted while its start waits ends interrupted, without a model call
 * of its own being lost or answered twice.
 */
import { expect, it } from "vitest";
import { newConversation, useAgentFixture } from "../harness/agent-fixture.js";

const fx = useAgentFixture();

it("30 steps sent together all complete, each with its own reply; one interrupted at once ends interrupted", async () => {
  const conversations = await Promise.all(Array.from({ length: 30 }, () => newConversation(fx.client)));
  for (let i = 0; i < 30; i++) fx.fake.enqueue({ kind: "reply", text: ["reply", ` ${i}`] });
  const steps = await Promise.all(conversations.map(({ id }) => fx.client.step({ conversationId: id })));
  const last = conversations.at(-1)!;
  const interrupted = await fx.client.interrupt({ conversationId: last.id });
  const ends = await Promise.all(conversations.map(({ events }, i) => events.waitForEnd(steps[i].generationId)));

  const outcomes = ends.map((end) => end.method);
  expect(outcomes.slice(0, 29).every((m) => m === "generation_complete")).toBe(true);
  expect(outcomes[29]).toBe(interrupted.interrupted ? "interrupted" : "generation_complete");
  // Each completed conversation got one whole reply; no reply went to two of them.
  const replies = await Promise.all(
    conversations.slice(0, 29).map(async ({ id }) => {
      const got = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
      return got.records!.filter((r) => r.type === "message" && r.role === "assistant").map((r) => (r as { content: string }).content);
    }),
  );
  for (const reply of replies) expect(reply).toHaveLength(1);
  const texts = replies.map((r) => r[0]);
  expect(new Set(texts).size).toBe(29);
  for (const text of texts) expect(text).toMatch(/^reply \d+$/);
});
