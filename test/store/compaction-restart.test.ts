/**
 * A compaction survives a restart, on both stores: a server compacts a
 * conversation, closes, and the next server on the same store returns every
 * record (the compaction record among them) and starts the next model
 * request with the summary. The PostgreSQL case needs a server (see
 * test/harness/postgres-db.ts) and is skipped, saying how to run it, without one.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { compactionSummaryText } from "../../src/context/build-llm-context.js";
import { newConversation, startAgentFixture, type AgentFixture } from "../harness/agent-fixture.js";
import { EventRecorder } from "../harness/event-recorder.js";
import { postgresReachable, usePostgresDatabase } from "../harness/postgres-db.js";

const pgUp = await postgresReachable("compaction-restart.test.ts");
const db = pgUp ? usePostgresDatabase("compaction", { resetEach: true }) : undefined;

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "agentwire-compaction-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function compactThenRestart(server: () => Promise<Record<string, unknown>>): Promise<void> {
  let fx: AgentFixture = await startAgentFixture({ config: { server: await server() } });
  fx.fake.enqueue({ kind: "reply", text: ["Hello there."] }, { kind: "reply", text: ["The user said hello; I greeted them."] });
  const { id, events } = await newConversation(fx.client);
  await events.waitForEnd((await fx.client.step({ conversationId: id })).generationId);
  const { generationId } = await fx.client.conversation.compact({ conversationId: id });
  expect((await events.waitForEnd(generationId)).method).toBe("generation_complete");
  const before = (await fx.client.conversation.get({ conversationId: id, includeRecords: true })).records!;
  expect(before.map((r) => r.type)).toEqual(["message", "message", "compaction"]);
  await fx.close();

  fx = await startAgentFixture({ config: { server: await server() } });
  cleanups.push(() => fx.close());
  const after = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
  expect(after.records).toEqual(before);
  expect(after.conversation.usage).toMatchObject({ modelCalls: 2 });

  const again = new EventRecorder(fx.client, id);
  await fx.client.conversation.subscribe({ conversationId: id });
  fx.fake.enqueue({ kind: "reply", text: ["Yes?"] });
  await fx.client.message.append({ conversationId: id, role: "user", content: "still there?" });
  await again.waitForEnd((await fx.client.step({ conversationId: id })).generationId);
  expect(fx.fake.messagesOf(0).filter((m) => m.role !== "system")).toEqual([
    { role: "user", content: compactionSummaryText("The user said hello; I greeted them.") },
    { role: "user", content: "still there?" },
  ]);
}

describe("a compaction after a restart", { timeout: 30_000 }, () => {
  it("comes back from the lowdb data dir", async () => {
    const dataDir = await tempDir();
    await compactThenRestart(async () => ({ dataDir }));
  });

  it.skipIf(!pgUp)("comes back from PostgreSQL (the next server has a data dir of its own)", async () => {
    await compactThenRestart(async () => ({ store: db!.url, dataDir: await tempDir() }));
  });
});
