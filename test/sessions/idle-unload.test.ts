/**
 * Idle conversations leave memory and come back from disk intact.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../harness/test-server.js";

let ts: TestServer;
beforeAll(async () => {
  ts = await startTestServer({ limits: { idleUnloadMs: 0 } });
});
afterAll(async () => {
  await ts.close();
});

it("unloads only conversations nobody watches, and reloads them unchanged with seq still increasing", async () => {
  const client = await ts.connectInMemory();
  const idle = await client.conversation.create({ title: "idle" });
  const watched = await client.conversation.create({ title: "watched" });
  await client.conversation.subscribe({ conversationId: watched.id });
  for (let i = 0; i < 5; i++) {
    await client.message.append({ conversationId: idle.id, role: "user", content: `m${i}` });
  }
  const before = await client.conversation.get({ conversationId: idle.id, includeRecords: true });
  expect((await client.server.status()).conversationsLoaded).toBe(2);

  const unloaded = await ts.server.app.hub.unloadIdle(0, Date.now() + 1);
  expect(unloaded).toBe(1);
  const status = await client.server.status();
  expect(status.conversationsLoaded).toBe(1);
  expect(status.conversationsStored).toBe(2);

  const after = await client.conversation.get({ conversationId: idle.id, includeRecords: true });
  expect(after.records).toEqual(before.records);
  expect(after.conversation).toEqual(before.conversation);
  expect(after.state.seq).toBeGreaterThanOrEqual(before.state.seq);
  const seqs: number[] = [];
  client.on("message_added", (e) => seqs.push(e.seq));
  await client.conversation.subscribe({ conversationId: idle.id });
  await client.message.append({ conversationId: idle.id, role: "user", content: "after reload" });
  await new Promise((r) => setTimeout(r, 50));
  expect(seqs).toHaveLength(1);
  expect(seqs[0]).toBeGreaterThan(before.state.seq);
  expect((await client.conversation.get({ conversationId: idle.id })).conversation.recordCount).toBe(6);
});
