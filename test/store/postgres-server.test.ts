/**
 * A whole server on the PostgreSQL store: `agentwire serve --store
 * postgres://…` as a child process, killed with -9, and an in-process server
 * on another data dir (so what it knows can only come from the database)
 * that gets its conversations back and resumes a tool call that was waiting
 * for confirmation. One CLI start: each costs seconds on a busy machine.
 *
 * Needs PostgreSQL (test/harness/postgres-db.ts); skipped, saying how to run
 * it, where none answers.
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

const pgUp = await postgresReachable("postgres-server.test.ts");
const PASSWORD = "s3cret-never-printed";

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await killAllCli();
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "agentwire-pg-server-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function connect(url: string): Promise<AgentwireClient> {
  const client = await AgentwireClient.connect(url, { WebSocket: WebSocket as never });
  cleanups.push(() => client.close().catch(() => undefined));
  return client;
}

describe.skipIf(!pgUp)("agentwire serve --store postgres://…", { timeout: 30_000 }, () => {
  const db = usePostgresDatabase("server", { resetEach: true });
  /** The database's URL with a password in it (trust auth ignores it): it must never be printed. */
  const storeUrl = () => {
    const url = new URL(db.url);
    url.password = PASSWORD;
    return url.toString();
  };

  it("a server killed with -9 is replaced by one on another data dir: conversations, records and a waiting tool call come back from the database", async () => {
    const fake = await startFakeOpenAI({ apiKey: "test-key" });
    cleanups.push(() => fake.close());
    fake.enqueue({ kind: "reply", text: ["I will run it."], toolCalls: [{ id: "keep_1", name: "shell", args: JSON.stringify({ command: "echo from-pg" }) }] });
    const first = runCli(["serve", "--port", "0", "--data-dir", await tempDir(), "--store", storeUrl()], {
      OPENAI_BASE_URL: fake.url,
      OPENAI_API_KEY: "test-key",
      AGENTWIRE_MODEL: "fake-model",
    });
    const client = await connect(await first.listening(20_000));
    // A conversation with messages and a rename…
    const kept = await client.conversation.create({ title: "kept in PostgreSQL" });
    await client.message.append({ conversationId: kept.id, role: "user", content: "hello" });
    await client.message.append({ conversationId: kept.id, role: "user", content: "and again \u0000 with a NUL" });
    await client.conversation.update({ conversationId: kept.id, title: "renamed" });
    // …and one whose generation waits for a tool call's confirmation.
    const { id, events } = await newConversation(client, {}, "run something");
    await client.step({ conversationId: id });
    await events.waitForMethod("tool_pending", 10_000);
    const seqBefore = (await client.conversation.get({ conversationId: id })).state.seq;
    first.child.kill("SIGKILL");
    await first.exited;
    expect(first.stdout().trim().split("\n")).toHaveLength(1);
    expect(first.stderr()).toContain(`store ${storeUrl().replace(PASSWORD, "***")}`);
    expect(first.stdout() + first.stderr()).not.toContain(PASSWORD);

    // The next server has a data dir of its own: what it knows comes from the database.
    const fx = await startAgentFixture({ config: { server: { store: storeUrl(), dataDir: await tempDir() } } });
    cleanups.push(() => fx.close());
    const back = await fx.client.conversation.get({ conversationId: kept.id, includeRecords: true });
    expect(back.conversation).toMatchObject({ id: kept.id, title: "renamed", recordCount: 2 });
    expect(back.records!.map((r) => (r as { content: string }).content)).toEqual(["hello", "and again \u0000 with a NUL"]);
    expect((await fx.client.conversation.list({})).data.map((x) => x.id).sort()).toEqual([kept.id, id].sort());

    const got = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
    expect(got.state.pendingTools).toEqual([{ toolCallId: "keep_1", toolName: "shell", arguments: { command: "echo from-pg" }, kind: "execute", title: "Run echo from-pg", locations: [], rememberAs: { tool: "shell", prefix: "echo" } }]);
    expect(got.state.seq).toBeGreaterThan(seqBefore);
    const recorder = new EventRecorder(fx.client, id);
    await fx.client.conversation.subscribe({ conversationId: id });
    fx.fake.enqueue({ kind: "reply", text: ["It printed."] });
    const result = await fx.client.tool.confirm({ conversationId: id, toolCallId: "keep_1", action: "confirm" });
    expect(result.status).toBe("executing");
    const end = await recorder.waitForEnd((await recorder.waitForMethod("tool_completed")).params.generationId);
    expect(end.method).toBe("generation_complete");
    expect(recorder.events.every((e) => e.params.seq > seqBefore)).toBe(true);
    const rows = await db.query<{ position: number; status: string | null; role: string | null }>(
      `SELECT position, body->>'status' AS status, body->>'role' AS role FROM agentwire_records WHERE conversation_id = $1 ORDER BY position`,
      [id],
    );
    expect(rows.map((r) => r.status ?? r.role)).toEqual(["user", "assistant", "completed", "assistant"]);
    expect(rows.map((r) => r.position)).toEqual([0, 1, 2, 3]);
  });
});
