/**
 * Several agentwire servers in one process joined into a cluster on the real
 * Redis (--redis), sharing one store: a PostgreSQL database when one answers
 * (each server with its own store on it, as separate processes would be),
 * else one in-memory store object. Clients on one instance drive and watch
 * conversations another instance owns: events arrive once, in seq order,
 * identical everywhere; owner-only methods are forwarded and their errors
 * keep their codes; replay with afterSeq works across instances; a request
 * to a dead owner waits for its lease and runs on the instance that got it,
 * after which the dead owner's store handle is fenced out (PostgreSQL); an
 * owner whose lease was taken stops and hands its subscribers to the bus; an
 * owner that stops answering is taken over, its cut-off generation ends with
 * an `error` and its pending tool call is offered again.
 *
 * Needs Redis (test/harness/redis-test.ts); skipped, saying how to run it,
 * where none answers.
 */
import { randomBytes } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { AgentwireClient } from "../../clients/typescript/index.js";
import { ClusterKeys } from "../../src/cluster/cluster-keys.js";
import { connectRedis } from "../../src/cluster/redis-client.js";
import { OpenAIProvider } from "../../src/llm/openai-provider.js";
import { createLogger } from "../../src/logging/logger.js";
import type { ConversationStore } from "../../src/store/conversation-store.js";
import { MemoryConversationStore } from "../../src/store/memory-store.js";
import { PostgresConversationStore } from "../../src/store/postgres-store.js";
import { createBuiltinRegistry } from "../../src/tools/builtin-registry.js";
import type { Tool } from "../../src/tools/tool.js";
import { startFakeOpenAI, type FakeOpenAI } from "../fake-openai/server.js";
import { EventRecorder, type RecordedEvent } from "../harness/event-recorder.js";
import { eventually } from "../harness/eventually.js";
import { postgresReachable, usePostgresDatabase } from "../harness/postgres-db.js";
import { REDIS_URL, redisAvailable } from "../harness/redis-test.js";
import { rpcError } from "../harness/rpc-errors.js";
import { startStallingProxy } from "../harness/stalling-proxy.js";
import { startTestServer, type TestServer } from "../harness/test-server.js";

const pgUp = redisAvailable && (await postgresReachable("cluster-wiring.test.ts"));
const LEASE_MS = 1500;

const note: Tool = {
  name: "note",
  description: "Writes a note.",
  parameters: z.strictObject({ text: z.string().optional() }),
  async run() {
    return { success: true, output: "noted" };
  },
};

let fake: FakeOpenAI;
const running: TestServer[] = [];
const clients: AgentwireClient[] = [];

beforeAll(async () => {
  fake = await startFakeOpenAI({ apiKey: "test-key" });
});
afterAll(async () => {
  await fake?.close();
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => {})));
  await Promise.all(running.splice(0).map((s) => s.close().catch(() => {})));
  fake.reset();
});

describe("--redis", () => {
  it("is refused with the embedded lowdb store, in one line naming what to use instead", async () => {
    const refused = startTestServer({ server: { redis: "redis://127.0.0.1:1" } });
    await expect(refused).rejects.toThrow(/^--redis needs a store several instances can share \(--store postgres:\/\/…\)/);
  });
});

const stores = [
  ...(pgUp ? (["postgres"] as const) : []),
  // One store object shared by the servers: the wiring alone, without the database's fencing.
  "memory" as const,
];

describe.skipIf(!redisAvailable).each(stores)("a cluster of in-process servers on the %s store", { timeout: 30_000 }, (kind) => {
  const db = kind === "postgres" ? usePostgresDatabase("cluster") : undefined;
  const keyPrefix = `agentwire-test:${randomBytes(6).toString("hex")}:`;
  const memory = new MemoryConversationStore();

  /** `n` servers on one Redis and one store; `redisUrls[i]`, when given, is how server i reaches Redis (a proxy). */
  async function cluster(n: number, redisUrls: (string | undefined)[] = []): Promise<TestServer[]> {
    const servers: TestServer[] = [];
    for (let i = 0; i < n; i++) {
      // Unopened: the server opens (and closes) its own, as a process would.
      const store: ConversationStore = db ? new PostgresConversationStore(db.url) : memory;
      const server = await startTestServer(
        { model: "fake-model", server: { redis: redisUrls[i] ?? REDIS_URL, ownerLeaseMs: LEASE_MS } },
        {
          store,
          tools: createBuiltinRegistry([note]),
          provider: async () => new OpenAIProvider({ apiKey: "test-key", baseURL: fake.url, retryBaseDelayMs: 10, retryMaxDelayMs: 20 }),
          cluster: { keyPrefix, forwardTimeoutMs: 3000 },
        },
      );
      running.push(server);
      servers.push(server);
    }
    return servers;
  }

  async function connect(server: TestServer): Promise<AgentwireClient> {
    const client = await server.connectInMemory();
    clients.push(client);
    return client;
  }

  /**
   * A conversation created through A (so A owns it), both clients subscribed, and a step streaming
   * `words` paced tokens from the fake: returns once B has seen the first delta. `isEnd` tells the
   * generation's ending events (final complete, interrupted, error).
   */
  async function streamOwnedByA(a: AgentwireClient, b: AgentwireClient, words: number) {
    const { id: conversationId } = await a.conversation.create({});
    const seenOnA = new EventRecorder(a, conversationId);
    const seenOnB = new EventRecorder(b, conversationId);
    await a.conversation.subscribe({ conversationId });
    await b.conversation.subscribe({ conversationId });
    fake.enqueue({ kind: "reply", text: Array.from({ length: words }, (_, i) => `w${i} `), delayMs: 20 });
    await a.message.append({ conversationId, role: "user", content: "talk for a while" });
    const { generationId } = await a.step({ conversationId });
    await seenOnB.waitFor((e) => e.method === "generation_progress");
    const isEnd = (e: RecordedEvent) =>
      e.params.generationId === generationId && ((e.method === "generation_complete" && e.params.final) || e.method === "interrupted" || e.method === "error");
    return { conversationId, generationId, seenOnA, seenOnB, isEnd };
  }

  /** The recorder's events as [seq, method], checking that seqs strictly increase (no duplicate, no reordering). */
  function sequence(events: readonly RecordedEvent[]): [number, string][] {
    const out = events.map((e) => [e.params.seq as number, e.method] as [number, string]);
    for (let i = 1; i < out.length; i++) expect(out[i]![0], `seq after ${out[i - 1]![0]}`).toBeGreaterThan(out[i - 1]![0]);
    return out;
  }

  it("a client on B watches, a client on C drives, the owner A runs: same events everywhere, errors keep their codes, replay crosses instances", async () => {
    const [A, B, C] = await cluster(3);
    const a = await connect(A!);
    const b = await connect(B!);
    const c = await connect(C!);
    const { id: conversationId } = await a.conversation.create({});
    const seenOnA = new EventRecorder(a, conversationId);
    const seenOnB = new EventRecorder(b, conversationId);
    await a.conversation.subscribe({ conversationId });
    const onB = await b.conversation.subscribe({ conversationId });
    expect(onB.resync).toBe(false);

    fake.enqueue(
      { kind: "reply", text: ["Let me ", "write ", "that ", "down."], toolCalls: [{ id: "t1", name: "note", args: '{"text":"x"}' }] },
      { kind: "reply", text: ["Done", ", noted."] },
    );
    await c.message.append({ conversationId, role: "user", content: "take a note" });
    const { generationId } = await c.step({ conversationId });
    await seenOnB.waitFor((e) => e.method === "tool_pending");

    // A second step from a non-owner is answered by the owner, with the owner's code and data.
    const busy = await rpcError(c.step({ conversationId }));
    expect(busy.code).toBe(-32020);
    expect(busy.data).toEqual({ generationId });
    const unknown = await rpcError(b.tool.confirm({ conversationId, toolCallId: "nope", action: "confirm" }));
    expect(unknown.code).toBe(-32021);

    expect((await b.tool.confirm({ conversationId, toolCallId: "t1", action: "confirm" })).status).toBe("executing");
    await seenOnB.waitForEnd(generationId);
    await seenOnA.waitForEnd(generationId);
    await new Promise((r) => setTimeout(r, 50)); // nothing more may come
    const onA = sequence(seenOnA.events);
    expect(sequence(seenOnB.events)).toEqual(onA);
    expect(onA.map(([, m]) => m)).toContain("tool_completed");
    // The same frames, byte for byte: the owner serialized each once.
    expect(seenOnB.events.map((e) => JSON.stringify(e.params))).toEqual(seenOnA.events.map((e) => JSON.stringify(e.params)));

    // conversation.get from a non-owner reads the owner's state and records.
    const got = await c.conversation.get({ conversationId, includeRecords: true });
    expect(got.state.generating).toBe(false);
    expect(got.records!.map((r) => r.type)).toEqual(["message", "message", "tool_call", "message"]);

    // A client arriving on C with afterSeq gets the rest replayed from the bus, as the owner's own clients would.
    const afterSeq = onA[2]![0];
    const late = await connect(C!);
    const seenLate = new EventRecorder(late, conversationId);
    const replay = await late.conversation.subscribe({ conversationId, afterSeq });
    expect(replay.resync).toBe(false);
    const rest = onA.filter(([seq]) => seq > afterSeq);
    await eventually(() => seenLate.events.length >= rest.length);
    expect(sequence(seenLate.events)).toEqual(rest);

    // Who owns what, seen from each instance.
    const statusA = await a.server.status();
    expect(statusA.cluster?.owned).toContain(conversationId);
    expect(statusA.cluster?.instances.map((i) => i.id).sort()).toEqual(
      [statusA.cluster!.nodeId, (await b.server.status()).cluster!.nodeId, (await c.server.status()).cluster!.nodeId].sort(),
    );
    expect((await b.server.status()).cluster?.ownedCount).toBe(0);
    const metrics = await (await fetch(`http://127.0.0.1:${A!.server.port}/metrics`)).text();
    expect(metrics).toMatch(/^agentwire_cluster_instances 3$/m);
    expect(metrics).toMatch(/^agentwire_cluster_owned_conversations 1$/m);
    expect(metrics).toContain(`agentwire_cluster_instance_owned_conversations{node_id="${statusA.cluster!.nodeId}"`);
  });

  it("conversation.create { id } on one instance: others reach it at that id, and a create of the same id anywhere is CONVERSATION_EXISTS", async () => {
    const [A, B] = await cluster(2);
    const a = await connect(A!);
    const b = await connect(B!);
    const conversationId = `chosen-${randomBytes(4).toString("hex")}`;
    expect((await a.conversation.create({ id: conversationId, title: "on A" })).id).toBe(conversationId);
    const clash = await rpcError(b.conversation.create({ id: conversationId }));
    expect(clash.code).toBe(-32013);
    expect(clash.data).toEqual({ conversationId });
    await b.message.append({ conversationId, role: "user", content: "from B" });
    expect((await b.conversation.get({ conversationId })).conversation.title).toBe("on A");
    expect((await a.server.status()).cluster?.owned).toContain(conversationId);
  });

  it("interrupt from a non-owner ends a streaming generation; every watcher sees one `interrupted`", async () => {
    const [A, B] = await cluster(2);
    const a = await connect(A!);
    const b = await connect(B!);
    const { id: conversationId } = await a.conversation.create({});
    const seenOnB = new EventRecorder(b, conversationId);
    await b.conversation.subscribe({ conversationId });
    fake.enqueue({ kind: "reply", text: Array.from({ length: 200 }, (_, i) => `w${i} `), delayMs: 20 });
    await b.message.append({ conversationId, role: "user", content: "talk for a while" });
    const { generationId } = await b.step({ conversationId });
    await seenOnB.waitFor((e) => e.method === "generation_progress");
    const started = Date.now();
    expect(await b.interrupt({ conversationId })).toEqual({ interrupted: true });
    await seenOnB.waitForEnd(generationId);
    expect(Date.now() - started).toBeLessThan(1000);
    await new Promise((r) => setTimeout(r, 100));
    expect(seenOnB.of("interrupted")).toHaveLength(1);
    sequence(seenOnB.events);
    // The partial text was kept by the owner and is what any instance reads.
    const got = await b.conversation.get({ conversationId, includeRecords: true });
    expect(got.records!.at(-1)).toMatchObject({ type: "message", role: "assistant" });
  });

  it("a request to an owner that died waits for its lease and runs here; the dead owner's handle can no longer write", async () => {
    const [A, B] = await cluster(2);
    const a = await connect(A!);
    const b = await connect(B!);
    const { id: conversationId } = await a.conversation.create({});
    await a.message.append({ conversationId, role: "user", content: "before" });
    const stale = A!.server.app.hub.loaded(conversationId)!;
    const frozenAt = Date.now();
    await A!.server.app.cluster!.close({ release: false });

    // B finds A's lease, A does not answer: B waits for the lease to run out, takes the conversation and appends.
    const record = await b.message.append({ conversationId, role: "user", content: "after" });
    expect(Date.now() - frozenAt).toBeGreaterThan(LEASE_MS / 3);
    expect((await b.server.status()).cluster?.owned).toContain(conversationId);
    const got = await b.conversation.get({ conversationId, includeRecords: true });
    expect(got.records!.map((r) => r.type === "message" && r.content)).toEqual(["before", "after"]);
    expect(got.records!.at(-1)!.id).toBe(record.id);
    if (kind === "postgres") {
      // A woke up still holding its runtime: its writes carry the old fencing token and are refused.
      const late = { type: "message" as const, id: "r_late", role: "user" as const, content: "too late", timestamp: new Date().toISOString() };
      await expect(stale.handle.append(late)).rejects.toMatchObject({ name: "FencedError" });
      expect((await b.conversation.get({ conversationId, includeRecords: true })).records).toHaveLength(2);
    }
  });

  it("an owner whose lease was taken stops, and its own subscribers go on from the bus with the new owner's events", async () => {
    const [A, B] = await cluster(2);
    const a = await connect(A!);
    const b = await connect(B!);
    const { id: conversationId } = await a.conversation.create({});
    const seenOnA = new EventRecorder(a, conversationId);
    await a.conversation.subscribe({ conversationId });
    await a.message.append({ conversationId, role: "user", content: "one" });
    // As if A had paused past its lease: the lease is gone from Redis, and B takes the conversation with its next request.
    const redis = await connectRedis(REDIS_URL, { name: "test-lease-thief", log: createLogger("silent") });
    await redis.del(new ClusterKeys(keyPrefix).lease(conversationId));
    await b.message.append({ conversationId, role: "user", content: "two" });
    expect((await b.server.status()).cluster?.owned).toContain(conversationId);
    // A's next renewal finds the lease taken: it drops the runtime and serves its client from the bus.
    await eventually(() => A!.server.app.hub.loaded(conversationId) === undefined, LEASE_MS * 2, "A gave the conversation up");
    await b.message.append({ conversationId, role: "user", content: "three" });
    await seenOnA.waitFor((e) => e.method === "message_added" && e.params.record.content === "three");
    expect(seenOnA.of("message_added").map((p) => (p.record as { content: string }).content)).toEqual(["one", "two", "three"]);
    sequence(seenOnA.events);
    await redis.quit();
  });

  it("an owner whose lease is taken while it streams ends the generation for its own client at once; every client gets one ending", async () => {
    const [A, B] = await cluster(2);
    const a = await connect(A!);
    const b = await connect(B!);
    const { conversationId, generationId, seenOnA, seenOnB, isEnd } = await streamOwnedByA(a, b, 300);

    // As if A had paused past its lease: B takes the conversation, sees A's generation marked and ends it on the bus.
    // A's next publish is refused by the fence: it stops the generation and tells its own client at once.
    const redis = await connectRedis(REDIS_URL, { name: "test-lease-thief", log: createLogger("silent") });
    await redis.del(new ClusterKeys(keyPrefix).lease(conversationId));
    await redis.quit();
    await b.conversation.get({ conversationId });
    expect((await b.server.status()).cluster?.owned).toContain(conversationId);
    await seenOnA.waitFor(isEnd, LEASE_MS * 2);
    await seenOnB.waitFor(isEnd, LEASE_MS * 2);
    // A's client now follows the bus: B's ending of the same generation is not sent to it a second time.
    await eventually(() => A!.server.app.hub.loaded(conversationId) === undefined, LEASE_MS * 2, "A gave the conversation up");
    await new Promise((r) => setTimeout(r, LEASE_MS));
    expect(seenOnA.events.filter(isEnd).map((e) => [e.method, e.params.code])).toEqual([["error", -32070]]);
    expect(seenOnB.events.filter(isEnd).map((e) => [e.method, e.params.code])).toEqual([["error", -32070]]);
    sequence(seenOnA.events);
    sequence(seenOnB.events);
    // The reply being streamed was not stored; and the conversation goes on from either instance.
    const got = await a.conversation.get({ conversationId, includeRecords: true });
    expect(got.records!.map((r) => r.type === "message" && r.role)).toEqual(["user"]);
    expect(got.state.lastGeneration).toMatchObject({ generationId, outcome: "error" });
    fake.enqueue({ kind: "reply", text: ["after"] });
    const next = await a.step({ conversationId });
    await seenOnA.waitForEnd(next.generationId);
    await seenOnB.waitForEnd(next.generationId);
  });

  it("an owner cut off from Redis past its lease ends its generation for its own client at once; the instance that takes over tells the others the same", async () => {
    const url = new URL(REDIS_URL);
    const proxy = await startStallingProxy({ host: url.hostname, port: Number(url.port || 6379) });
    let servers: TestServer[] = [];
    try {
      // Only A reaches Redis through the proxy: when it stalls, Redis stops answering A, and B goes on.
      servers = await cluster(2, [proxy.url]);
      const [A, B] = servers;
      const a = await connect(A!);
      const b = await connect(B!);
      const { conversationId, generationId, seenOnA, seenOnB, isEnd } = await streamOwnedByA(a, b, 400);

      proxy.stall();
      const stalledAt = Date.now();
      const progressBefore = seenOnA.of("generation_progress").length;
      // A's own client keeps its stream while A cannot reach Redis, then hears the end from A, before anyone could take over.
      const endOnA = await seenOnA.waitFor(isEnd, LEASE_MS * 2);
      expect(Date.now() - stalledAt).toBeLessThan(LEASE_MS + 500);
      expect(seenOnA.of("generation_progress").length).toBeGreaterThan(progressBefore);
      expect(endOnA.method).toBe("error");
      expect(endOnA.params.code).toBe(-32070);
      // B takes the conversation over when A's lease has run out in Redis, and ends the generation for its client
      // with the ending A stored.
      const endOnB = await seenOnB.waitFor(isEnd, LEASE_MS * 4);
      expect(endOnB.params.message).toBe(endOnA.params.message);
      expect((await b.server.status()).cluster?.owned).toContain(conversationId);

      // Redis answers A again: what A queued meanwhile is refused by the fence, and its client follows the bus now,
      // without being told the end a second time.
      proxy.resume();
      await eventually(() => A!.server.app.hub.loaded(conversationId) === undefined, LEASE_MS * 2, "A gave the conversation up");
      fake.enqueue({ kind: "reply", text: ["after"] });
      const next = await b.step({ conversationId });
      await seenOnA.waitForEnd(next.generationId, LEASE_MS * 4);
      await seenOnB.waitForEnd(next.generationId);
      await new Promise((r) => setTimeout(r, 200));
      expect(seenOnA.events.filter(isEnd)).toHaveLength(1);
      expect(seenOnB.events.filter(isEnd)).toHaveLength(1);
      sequence(seenOnA.events);
      sequence(seenOnB.events);
      const got = await b.conversation.get({ conversationId, includeRecords: true });
      // The reply cut off was never stored; the next one was, and both clients were told of it.
      expect(got.records!.map((r) => (r.type === "message" ? `${r.role}:${r.content}` : r.type))).toEqual(["user:talk for a while", "assistant:after"]);
      expect(seenOnA.of("message_added").map((p) => p.record.id)).toEqual(got.records!.map((r) => r.id));
    } finally {
      proxy.resume();
      // A leaves while it can still reach Redis (closed after the proxy, it would wait on a connection that is gone).
      await servers[0]?.close();
      await proxy.close();
    }
  });

  it("an owner that stops answering is taken over: its generation ends with an error, the pending call is offered again and runs", async () => {
    const [A, B] = await cluster(2);
    const a = await connect(A!);
    const b = await connect(B!);
    const { id: conversationId } = await a.conversation.create({});
    const seenOnB = new EventRecorder(b, conversationId);
    await b.conversation.subscribe({ conversationId });
    fake.enqueue(
      { kind: "reply", text: ["I will note it."], toolCalls: [{ id: "keep", name: "note", args: "{}" }] },
      { kind: "reply", text: ["Noted after the takeover."] },
    );
    await a.message.append({ conversationId, role: "user", content: "note it" });
    const { generationId } = await a.step({ conversationId });
    await seenOnB.waitFor((e) => e.method === "tool_pending" && e.params.toolCallId === "keep");

    // A freezes as a dead process would: no renewals, no answers, nothing leaves it (its writes are never made).
    const owner = A!.server.app;
    owner.hub.loaded(conversationId)!.silence();
    const frozenAt = Date.now();
    await owner.cluster!.close({ release: false });

    // B's sweep takes the conversation within the lease time; its first event ends the cut-off generation.
    const ended = await seenOnB.waitFor((e) => e.method === "error" && e.params.generationId === generationId, LEASE_MS * 4);
    const failoverMs = Date.now() - frozenAt;
    expect(ended.params.code).toBe(-32070);
    expect(ended.params.message).toContain("was lost");
    expect(failoverMs).toBeLessThan(LEASE_MS * 3);
    console.log(`in-process failover: ${failoverMs} ms from the owner freezing to the new owner's first event (lease ${LEASE_MS} ms)`);
    // The pending call is offered again by the new owner, and confirming it from B runs it there.
    const offered = await seenOnB.waitFor((e) => e.method === "tool_pending" && e.params.toolCallId === "keep" && e.params.generationId !== generationId);
    const status = await b.server.status();
    expect(status.cluster?.owned).toContain(conversationId);
    await b.tool.confirm({ conversationId, toolCallId: "keep", action: "confirm" });
    await seenOnB.waitForEnd(offered.params.generationId);
    sequence(seenOnB.events);
    const got = await b.conversation.get({ conversationId, includeRecords: true });
    expect(got.records!.filter((r) => r.type === "tool_call").map((r) => [r.type === "tool_call" && r.toolCallId, r.type === "tool_call" && r.status])).toEqual([
      ["keep", "completed"],
    ]);
    expect(got.state.lastGeneration?.outcome).toBe("completed");
  });
});
