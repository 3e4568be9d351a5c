/**
 * Redis stalls for longer than the ownership lease while a generation
 * streams (issue 19, item 6): two real `agentwire serve` processes on one
 * PostgreSQL database and the machine's Redis, and a real
 * `CLIENT PAUSE <lease + margin> ALL` on that Redis.
 *
 * - The owner's own client keeps its stream while Redis is paused (its
 *   deltas never wait for the bus) and, when the owner gives its lease up,
 *   gets the generation's end at once, before Redis answers again: one
 *   `error` OWNER_UNAVAILABLE.
 * - Every client — on the owner and on the other instance — gets exactly
 *   one terminal event for the generation, never none and never two.
 * - What is stored is what was announced: no record holds text that no
 *   client was sent as deltas and `message_added`.
 * - The conversation works afterwards: a step from the other instance runs
 *   to its end and both clients see it.
 *
 * CLIENT PAUSE stops every client of that Redis, other test files' included,
 * so the lease is shortened to keep the pause short. On Redis 7.0 a
 * `CLIENT PAUSE … ALL` holds even CLIENT UNPAUSE until it runs out, so the
 * pause's own timeout is what ends it; the UNPAUSE in `finally` is for
 * versions that honour it early.
 *
 * Needs PostgreSQL and Redis; skipped, saying how to run it, without them.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { WebSocket } from "ws";
import { afterAll, describe, expect, it } from "vitest";
import { AgentwireClient } from "../../clients/typescript/index.js";
import { connectRedis } from "../../src/cluster/redis-client.js";
import { createLogger } from "../../src/logging/logger.js";
import { startFakeOpenAI } from "../fake-openai/server.js";
import { killAllCli, runCli, type CliProcess } from "../harness/cli-process.js";
import { eventually } from "../harness/eventually.js";
import { postgresReachable, usePostgresDatabase } from "../harness/postgres-db.js";
import { REDIS_URL, redisAvailable } from "../harness/redis-test.js";

const servicesUp = redisAvailable && (await postgresReachable("cluster-redis-pause.test.ts"));
const LEASE_MS = 1000;
/** Longer than the lease, so the lease certainly runs out inside it; short, as every Redis client waits it out. */
const PAUSE_MS = LEASE_MS + 1000;
/** The generation streams about 6 s, well past the pause. */
const TOKENS = 200;
const TOKEN_MS = 30;

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await killAllCli();
});

interface Seen {
  method: string;
  params: any;
  at: number;
}

/** Every notification of one conversation a client receives, with its arrival time. */
function record(client: AgentwireClient, conversationId: string): Seen[] {
  const seen: Seen[] = [];
  client.onAny((method, params: any) => {
    if (params?.conversationId === conversationId) seen.push({ method, params, at: Date.now() });
  });
  return seen;
}

function isEnd(e: Seen, generationId: string): boolean {
  return (
    e.params.generationId === generationId &&
    ((e.method === "generation_complete" && e.params.final === true) || e.method === "interrupted" || e.method === "error")
  );
}

function textOf(events: Seen[], generationId: string): string {
  return events
    .filter((e) => e.method === "generation_progress" && e.params.generationId === generationId && e.params.kind === "text")
    .map((e) => e.params.delta as string)
    .join("");
}

function expectSeqsIncrease(events: Seen[], who: string): void {
  const seqs = events.map((e) => e.params.seq as number);
  for (let i = 1; i < seqs.length; i++) expect(seqs[i], `${who}: seq after ${seqs[i - 1]}`).toBeGreaterThan(seqs[i - 1]!);
}

describe.skipIf(!servicesUp)("a Redis paused for longer than the ownership lease while a generation streams", { timeout: 60_000 }, () => {
  const db = usePostgresDatabase("redis_pause");

  it("the owner's client keeps its stream, every client gets exactly one end, and the store holds only what was announced", async () => {
    const fake = await startFakeOpenAI({ apiKey: "test-key" });
    cleanups.push(() => fake.close());
    const prefix = `agentwire-test:${randomBytes(6).toString("hex")}:`;
    const servers: CliProcess[] = [];
    for (let i = 0; i < 2; i++) {
      const dataDir = await mkdtemp(join(tmpdir(), "agentwire-pause-"));
      cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
      servers.push(
        runCli(
          ["serve", "--port", "0", "--data-dir", dataDir, "--store", db.url, "--redis", REDIS_URL, "--redis-prefix", prefix, "--owner-lease-ms", String(LEASE_MS), "--log-level", "warn"],
          { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: "test-key", AGENTWIRE_MODEL: `bench-paced-${TOKENS}-${TOKEN_MS}` },
        ),
      );
    }
    const urls = await Promise.all(servers.map((s) => s.listening(30_000)));
    const [a, b] = await Promise.all(urls.map((url) => AgentwireClient.connect(url, { WebSocket: WebSocket as never })));
    cleanups.push(() => Promise.all([a!.close().catch(() => undefined), b!.close().catch(() => undefined)]));

    // Created on A, so A owns it; a watches on the owner, b on the other instance.
    const { id: conversationId } = await a!.conversation.create({ title: "paused" });
    const onA = record(a!, conversationId);
    const onB = record(b!, conversationId);
    await a!.conversation.subscribe({ conversationId });
    expect((await b!.conversation.subscribe({ conversationId })).resync).toBe(false);
    await a!.message.append({ conversationId, role: "user", content: "talk for a while" });
    const { generationId } = await a!.step({ conversationId });
    await eventually(() => onB.some((e) => e.method === "generation_progress"), 10_000, "b sees the stream");

    const pauser = await connectRedis(REDIS_URL, { name: "test-pauser", log: createLogger("silent") });
    cleanups.push(() => pauser.quit().catch(() => pauser.disconnect()));
    let pausedAt = 0;
    let resumedAt = 0;
    try {
      await pauser.client("PAUSE", PAUSE_MS, "ALL");
      pausedAt = Date.now();
      // Answered once the pause is over.
      await pauser.ping();
      resumedAt = Date.now();
    } finally {
      await pauser.client("UNPAUSE").catch(() => undefined);
    }
    expect(resumedAt - pausedAt).toBeGreaterThan(LEASE_MS);

    // The owner's client: its stream went on while Redis was paused, and then (or at the latest promptly after) it
    // was told how the generation ended.
    const deltasDuringPause = onA.filter((e) => e.method === "generation_progress" && e.at > pausedAt + 50 && e.at < resumedAt);
    expect(deltasDuringPause.length, "deltas on the owner during the pause").toBeGreaterThan(0);
    const endOnA = await eventually(() => onA.some((e) => isEnd(e, generationId)), 5_000, "the owner's client is told the end").then(
      () => onA.find((e) => isEnd(e, generationId))!,
    );
    expect(endOnA.at, "the end reached the owner's client while Redis was still paused").toBeLessThan(resumedAt);
    expect(endOnA.method).toBe("error");
    expect(endOnA.params.code).toBe(-32070);

    // Every client gets an end; then, after the time a takeover (the sweep every half lease) would need, no second one.
    await eventually(() => onB.some((e) => isEnd(e, generationId)), LEASE_MS * 8, "the other instance's client is told the end");
    await new Promise((r) => setTimeout(r, LEASE_MS * 3));
    const endsA = onA.filter((e) => isEnd(e, generationId));
    const endsB = onB.filter((e) => isEnd(e, generationId));
    expect(endsA.map((e) => e.method), "ends seen on the owner").toHaveLength(1);
    expect(endsB.map((e) => e.method), "ends seen on the other instance").toHaveLength(1);
    expectSeqsIncrease(onA, "a");
    expectSeqsIncrease(onB, "b");

    // The store holds only what was announced, to both clients: each record this generation stored was seen as
    // message_added by both, and an assistant reply's text is exactly the deltas its clients were sent.
    const got = await b!.conversation.get({ conversationId, includeRecords: true });
    const stored = got.records!.filter((r) => (r as { generationId?: string }).generationId === generationId);
    for (const [who, seen] of [["a", onA], ["b", onB]] as const) {
      const added = seen.filter((e) => e.method === "message_added" && e.params.record.generationId === generationId).map((e) => e.params.record);
      expect(added, `records of the generation announced to ${who}`).toEqual(stored.filter((r) => r.type === "message"));
    }
    for (const r of stored) {
      if (r.type === "message" && r.role === "assistant") expect(r.content, "a stored reply is the text its clients were sent").toBe(textOf(onB, generationId));
    }
    // How it ended, as stored, is what the clients were told.
    expect(got.state.generating).toBe(false);
    expect(got.state.lastGeneration?.generationId).toBe(generationId);
    expect(got.state.lastGeneration?.outcome).toBe(endsB[0]!.method === "error" ? "error" : endsB[0]!.method === "interrupted" ? "interrupted" : "completed");
    if (endsB[0]!.method === "error") expect(endsB[0]!.params.code).toBe(-32070);

    // The conversation goes on: a step from the other instance runs to its end, and both clients see it.
    await b!.message.append({ conversationId, role: "user", content: "and again" });
    const next = await b!.step({ conversationId, model: "bench-paced-5-0" });
    await eventually(() => onA.some((e) => isEnd(e, next.generationId)) && onB.some((e) => isEnd(e, next.generationId)), 10_000, "the next generation ends everywhere");
    expect(onB.find((e) => isEnd(e, next.generationId))!.method).toBe("generation_complete");

    for (const server of servers) server.child.kill("SIGTERM");
    console.log(
      `Redis paused ${resumedAt - pausedAt} ms (lease ${LEASE_MS} ms): ${deltasDuringPause.length} deltas reached the owner's client during the pause; ` +
        `its end (${endOnA.method}) came ${endOnA.at - pausedAt} ms into the pause, the other client's ${endsB[0]!.at - pausedAt} ms`,
    );
  });
});
