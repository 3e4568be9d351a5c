/**
 * What survives a restart on the same data dir (records, metadata,
 * deletions, seq numbering), and the one-server-per-data-dir lock. Clients
 * are on in-memory links, except in the first test.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AgentwireClient } from "../../clients/typescript/index.js";
import { DataDirLockedError } from "../../src/store/conversation-store.js";
import { EventRecorder } from "../harness/event-recorder.js";
import { initialize, type RawSocket } from "../harness/raw-socket.js";
import { expectNotFound } from "../harness/rpc-errors.js";
import { startTestServer, type TestServer } from "../harness/test-server.js";

let dataDir: string;
const running: TestServer[] = [];
const sockets: RawSocket<unknown>[] = [];

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "agentwire-persist-"));
});
afterEach(async () => {
  for (const s of sockets.splice(0)) s.close();
  for (const server of running.splice(0).reverse()) await server.stop();
  await rm(dataDir, { recursive: true, force: true });
});

async function start(config: Parameters<typeof startTestServer>[0] = {}): Promise<TestServer> {
  const server = await startTestServer({ ...config, server: { ...config.server, dataDir } });
  running.push(server);
  return server;
}

async function restart(server: TestServer): Promise<TestServer> {
  await server.stop();
  running.splice(running.indexOf(server), 1);
  return start();
}

async function fill(client: AgentwireClient, conversationId: string, n: number, prefix: string): Promise<void> {
  for (let i = 0; i < n; i++) {
    await client.message.append({ conversationId, role: i % 3 === 2 ? "system" : "user", content: `${prefix} ${i}` });
  }
}

describe("restart on the same data dir", () => {
  it("keeps conversations, their metadata and records exactly", async () => {
    // Real WebSockets here (the other tests use in-memory links): text with ✓, quotes and newlines, over the wire and back.
    let server = await start();
    let client = await server.connect();
    const a = await client.conversation.create({ title: "first", system: "be kind", settings: { maxIterations: 7 } });
    await fill(client, a.id, 6, "a");
    await client.conversation.update({ conversationId: a.id, title: "first, renamed", model: "m-1" });
    const b = await client.conversation.create({ title: "second" });
    await fill(client, b.id, 2, "b ✓ \"quotes\" \n newline");
    const before = {
      a: await client.conversation.get({ conversationId: a.id, includeRecords: true }),
      b: await client.conversation.get({ conversationId: b.id, includeRecords: true }),
      list: await client.conversation.list({}),
    };
    expect(before.a.records).toHaveLength(6);

    server = await restart(server);
    client = await server.connect();
    const after = {
      a: await client.conversation.get({ conversationId: a.id, includeRecords: true }),
      b: await client.conversation.get({ conversationId: b.id, includeRecords: true }),
      list: await client.conversation.list({}),
    };
    expect(after.a.conversation).toEqual(before.a.conversation);
    expect(after.a.records).toEqual(before.a.records);
    expect(after.b.conversation).toEqual(before.b.conversation);
    expect(after.b.records).toEqual(before.b.records);
    expect(after.list).toEqual(before.list);
    expect(after.a.conversation).toMatchObject({ title: "first, renamed", model: "m-1", system: "be kind", recordCount: 6 });
    expect(after.a.conversation.settings.maxIterations).toBe(7);
    expect(after.a.state).toMatchObject({ generating: false, pendingTools: [], lastError: null });

    // And it keeps going: appends after the restart land after the old records.
    const next = await client.message.append({ conversationId: a.id, role: "user", content: "after restart" });
    const grown = await client.conversation.get({ conversationId: a.id, includeRecords: true });
    expect(grown.records).toEqual([...before.a.records!, next]);
  });

  it("keeps every one of 100 concurrent appends, in order", async () => {
    let server = await start();
    const writers = await Promise.all([server.connectInMemory(), server.connectInMemory()]);
    const c = await writers[0]!.conversation.create({});
    await Promise.all(
      writers.flatMap((w, wi) =>
        Array.from({ length: 50 }, (_, i) => w.message.append({ conversationId: c.id, role: "user", content: `w${wi}-${i}` })),
      ),
    );
    const before = await writers[0]!.conversation.get({ conversationId: c.id, includeRecords: true });
    expect(before.records).toHaveLength(100);

    server = await restart(server);
    const client = await server.connectInMemory();
    const after = await client.conversation.get({ conversationId: c.id, includeRecords: true });
    expect(after.records).toEqual(before.records);
    expect(after.conversation.recordCount).toBe(100);
  });

  it("numbers events after a restart above every seq handed out before it", async () => {
    let server = await start();
    let client = await server.connectInMemory();
    const c = await client.conversation.create({});
    const log = new EventRecorder(client);
    await client.conversation.subscribe({ conversationId: c.id });
    await fill(client, c.id, 5, "before");
    await client.conversation.update({ conversationId: c.id, title: "t" });
    await log.waitForCount("conversation_updated", 1);
    const seenBefore = log.events.map((e) => e.params.seq as number);
    expect(seenBefore).toHaveLength(6);
    const maxBefore = Math.max(...seenBefore);

    server = await restart(server);
    client = await server.connectInMemory();
    const got = await client.conversation.get({ conversationId: c.id });
    expect(got.state.seq).toBeGreaterThanOrEqual(maxBefore);

    const after = new EventRecorder(client);
    const sub = await client.conversation.subscribe({ conversationId: c.id });
    expect(sub.state.seq).toBe(got.state.seq);
    await client.message.append({ conversationId: c.id, role: "user", content: "after" });
    await after.waitForCount("message_added", 1);
    const [event] = after.of("message_added");
    expect(event!.seq).toBeGreaterThan(maxBefore);
    expect(event!.seq).toBe(sub.state.seq + 1);
  });

  it("keeps seqs unique across a restart after more than a thousand events", async () => {
    let server = await start();
    let client = await server.connectInMemory();
    const c = await client.conversation.create({});
    for (let batch = 0; batch < 3; batch++) {
      await Promise.all(
        Array.from({ length: 400 }, (_, i) => client.message.append({ conversationId: c.id, role: "user", content: `${batch}-${i}` })),
      );
    }
    const maxBefore = (await client.conversation.get({ conversationId: c.id })).state.seq;
    expect(maxBefore).toBe(1200);

    server = await restart(server);
    client = await server.connectInMemory();
    const log = new EventRecorder(client);
    await client.conversation.subscribe({ conversationId: c.id });
    await client.message.append({ conversationId: c.id, role: "user", content: "after" });
    await log.waitForCount("message_added", 1);
    expect(log.of("message_added")[0]!.seq).toBeGreaterThan(maxBefore);
    expect((await client.conversation.get({ conversationId: c.id })).conversation.recordCount).toBe(1201);
  });

  it("a client resuming with an afterSeq from before the restart misses nothing (or is told to resync)", async () => {
    let server = await start();
    let client = await server.connectInMemory();
    const c = await client.conversation.create({});
    await fill(client, c.id, 3, "old");
    const lastSeen = (await client.conversation.get({ conversationId: c.id })).state.seq;
    expect(lastSeen).toBe(3);

    server = await restart(server);
    client = await server.connectInMemory();
    const missed = await client.message.append({ conversationId: c.id, role: "user", content: "missed" });

    const resumer = await initialize(await server.openRawInMemory());
    sockets.push(resumer);
    const { response, before } = await resumer.request("conversation.subscribe", { conversationId: c.id, afterSeq: lastSeen });
    const result = response.result;
    if (!result.resync) {
      const replayedRecords = before.map((f) => JSON.parse(f).params.record?.id);
      expect(replayedRecords).toContain(missed.id);
    } else {
      expect(before).toEqual([]);
    }
    expect(result.replayed).toBe(before.length);
  });

  it("a deleted conversation stays deleted", async () => {
    let server = await start();
    let client = await server.connectInMemory();
    const gone = await client.conversation.create({ title: "gone" });
    await fill(client, gone.id, 2, "x");
    const kept = await client.conversation.create({ title: "kept" });
    await client.conversation.delete({ conversationId: gone.id });

    server = await restart(server);
    client = await server.connectInMemory();
    await expectNotFound(client.conversation.get({ conversationId: gone.id }), gone.id);
    expect((await client.conversation.list({})).data.map((x) => x.id)).toEqual([kept.id]);
    expect((await client.server.status()).conversationsStored).toBe(1);
  });
});

describe("one server per data dir", () => {
  it("a second server on a data dir in use is refused, naming the dir; the first keeps working", async () => {
    const first = await start();
    const client = await first.connectInMemory();
    const c = await client.conversation.create({ title: "mine" });

    const second = startTestServer({ server: { dataDir } });
    await expect(second).rejects.toBeInstanceOf(DataDirLockedError);
    await expect(second).rejects.toThrow(dataDir);

    // The refused start did not take the lock away from the first server.
    expect((await readFile(join(dataDir, "LOCK"), "utf8")).trim()).toBe(String(process.pid));
    await client.message.append({ conversationId: c.id, role: "user", content: "still writing" });
    expect((await client.conversation.get({ conversationId: c.id })).conversation.recordCount).toBe(1);

    // Once the first stops, the dir is free.
    await first.stop();
    running.splice(running.indexOf(first), 1);
    const third = await start();
    const again = await third.connectInMemory();
    expect((await again.conversation.get({ conversationId: c.id, includeRecords: true })).records).toHaveLength(1);
  });
});
