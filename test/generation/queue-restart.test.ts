/**
 * Held messages (message.append delivery steer or queue) and the
 * clientMessageId window are stored with the run state: they survive a
 * server killed with -9 (lowdb, the real CLI in a child process) and a
 * server replaced on the PostgreSQL store.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WebSocket } from "ws";
import { afterEach, describe, expect, it } from "vitest";
import { AgentwireClient } from "../../clients/typescript/index.js";
import { startFakeOpenAI } from "../fake-openai/server.js";
import { newConversation, startAgentFixture } from "../harness/agent-fixture.js";
import { killAllCli, runCli } from "../harness/cli-process.js";
import { EventRecorder } from "../harness/event-recorder.js";
import { postgresReachable, usePostgresDatabase } from "../harness/postgres-db.js";

const pgUp = await postgresReachable("queue-restart.test.ts");

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await killAllCli();
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "agentwire-queue-restart-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const shellCall = (id: string) => ({ id, name: "shell", args: JSON.stringify({ command: "echo queued-round" }) });

/** On `client`: a generation waiting at a tool call, two queued messages and one steered, the first with a clientMessageId. */
async function holdMessages(client: AgentwireClient) {
  const { id, events } = await newConversation(client, {}, "start");
  await client.step({ conversationId: id });
  await events.waitForMethod("tool_pending", 10_000);
  const a = await client.message.append({ conversationId: id, role: "user", content: "queued A", delivery: "queue", clientMessageId: "cm-a" });
  const b = await client.message.append({ conversationId: id, role: "user", content: "queued B", delivery: "queue" });
  const c = await client.message.append({ conversationId: id, role: "user", content: "steered C", delivery: "steer" });
  return { id, held: [a, b, c] };
}

/** After the restart: the three wait, in order, as queued messages; a retry answers the held one; a completed step takes the first. */
async function expectHeldAfterRestart(client: AgentwireClient, fake: { enqueue(script: object): void; requests: { messages: any[] }[] }, id: string, held: { id: string }[]) {
  const { state } = await client.conversation.get({ conversationId: id });
  expect(state.generating).toBe(false);
  expect(state.queue.map((m) => [m.record.id, m.record.content, m.delivery])).toEqual([
    [held[0]!.id, "queued A", "queue"],
    [held[1]!.id, "queued B", "queue"],
    [held[2]!.id, "steered C", "queue"],
  ]);
  const retry = await client.message.append({ conversationId: id, role: "user", content: "queued A", clientMessageId: "cm-a" });
  expect(retry).toMatchObject({ id: held[0]!.id, delivery: "queued" });

  const events = new EventRecorder(client, id);
  await client.conversation.subscribe({ conversationId: id });
  await client.queue.remove({ conversationId: id, recordId: held[1]!.id });
  await client.queue.remove({ conversationId: id, recordId: held[2]!.id });
  fake.enqueue({ kind: "reply", text: ["Round done."] });
  fake.enqueue({ kind: "reply", text: ["Answer to A."] });
  const { generationId } = await client.step({ conversationId: id });
  await client.tool.confirm({ conversationId: id, toolCallId: "held_1", action: "confirm" });
  await events.waitForEnd(generationId, 10_000);
  const next = await events.waitFor((e) => e.method === "generation_started" && e.params.generationId !== generationId, 10_000);
  await events.waitForEnd(next.params.generationId, 10_000);
  expect(fake.requests.at(-1)!.messages.at(-1)).toMatchObject({ role: "user", content: "queued A" });
  expect((await client.conversation.get({ conversationId: id })).state.queue).toEqual([]);
}

describe("the queue survives", { timeout: 40_000 }, () => {
  it("a server killed with -9 (lowdb)", async () => {
    const dataDir = await tempDir();
    const fake = await startFakeOpenAI({ apiKey: "test-key" });
    cleanups.push(() => fake.close());
    fake.enqueue({ kind: "reply", text: ["Running it."], toolCalls: [shellCall("held_1")] });
    const first = runCli(["serve", "--port", "0", "--data-dir", dataDir, "--log-level", "silent"], {
      OPENAI_BASE_URL: fake.url,
      OPENAI_API_KEY: "test-key",
      AGENTWIRE_MODEL: "fake-model",
    });
    const client = await AgentwireClient.connect(await first.listening(20_000), { WebSocket: WebSocket as never });
    cleanups.push(() => client.close().catch(() => undefined));
    const { id, held } = await holdMessages(client);
    first.child.kill("SIGKILL");
    await first.exited;

    const fx = await startAgentFixture({ config: { server: { dataDir } } });
    cleanups.push(() => fx.close());
    await expectHeldAfterRestart(fx.client, fx.fake, id, held);
    expect(fx.fake.rejected).toEqual([]);
  });

  describe.skipIf(!pgUp)("on PostgreSQL", () => {
    const db = usePostgresDatabase("queue", { resetEach: true });

    it("a server replaced by one on another data dir", async () => {
      const store = db.url;
      const one = await startAgentFixture({ config: { server: { store, dataDir: await tempDir() } } });
      one.fake.enqueue({ kind: "reply", text: ["Running it."], toolCalls: [shellCall("held_1")] });
      const { id, held } = await holdMessages(one.client);
      const rows = await db.query<{ queue: unknown[] }>(`SELECT run_state->'queue' AS queue FROM agentwire_conversations WHERE id = $1`, [id]);
      expect(rows[0]!.queue).toHaveLength(3);
      await one.close();

      const fx = await startAgentFixture({ config: { server: { store, dataDir: await tempDir() } } });
      cleanups.push(() => fx.close());
      await expectHeldAfterRestart(fx.client, fx.fake, id, held);
      expect(fx.fake.rejected).toEqual([]);
    });
  });
});
