/**
 * Three real `agentwire serve --store postgres://… --redis redis://…`
 * processes on one PostgreSQL database and one Redis. Three clients, one per
 * instance, each watch all 20 conversations; each conversation is created on
 * one instance (its owner), stepped from the next and its tool call confirmed
 * from the third. Instance 0 is killed with -9 while its generations stream
 * (and while two of its conversations wait for a confirmation). Then:
 *
 * - the two surviving clients saw exactly the same events for every
 *   conversation, each once, in seq order, with no resync;
 * - every generation ended properly: completed, or (cut off by the kill) an
 *   `error` with OWNER_UNAVAILABLE sent by the instance that took over;
 * - the calls left pending were offered again, confirmed and ran;
 * - the stored records are what the clients saw (tool calls and their
 *   results; the final replies are the streamed text);
 * - the killed instance's client, back on another instance with afterSeq,
 *   gets the rest of every conversation without a resync.
 *
 * The failover time (kill → the first event from the new owner) is printed.
 * Needs PostgreSQL and Redis; skipped, saying how to run it, without them.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { WebSocket } from "ws";
import { afterAll, describe, expect, it } from "vitest";
import { AgentwireClient } from "../../clients/typescript/index.js";
import { startFakeOpenAI } from "../fake-openai/server.js";
import { killAllCli, runCli, type CliProcess } from "../harness/cli-process.js";
import { EventRecorder, type RecordedEvent } from "../harness/event-recorder.js";
import { eventually } from "../harness/eventually.js";
import { postgresReachable, usePostgresDatabase } from "../harness/postgres-db.js";
import { REDIS_URL, redisAvailable } from "../harness/redis-test.js";

const servicesUp = redisAvailable && (await postgresReachable("cluster-instances.test.ts"));
const CONVERSATIONS = 20;
const LEASE_MS = 1500;
/** Tokens streamed after the tool result, and the pause between them: a generation streams for about 2 s. */
const TOKENS = 40;
const TOKEN_MS = 50;

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await killAllCli();
});

/** The generation each event belongs to and whether it ends one. */
function ends(e: RecordedEvent): boolean {
  return (e.method === "generation_complete" && e.params.final) || e.method === "interrupted" || e.method === "error";
}

describe.skipIf(!servicesUp)("three agentwire serve processes on one PostgreSQL and one Redis", { timeout: 60_000 }, () => {
  const db = usePostgresDatabase("instances");

  it("clients spread over the instances drive 20 conversations with tools; one instance is killed -9 mid-generation", async () => {
    const fake = await startFakeOpenAI({ apiKey: "test-key" });
    cleanups.push(() => fake.close());
    const prefix = `agentwire-test:${randomBytes(6).toString("hex")}:`;
    const servers: CliProcess[] = [];
    for (let i = 0; i < 3; i++) {
      const dataDir = await mkdtemp(join(tmpdir(), "agentwire-cluster-"));
      cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
      servers.push(
        runCli(
          ["serve", "--port", "0", "--data-dir", dataDir, "--store", db.url, "--redis", REDIS_URL, "--redis-prefix", prefix, "--owner-lease-ms", String(LEASE_MS), "--log-level", "warn"],
          { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: "test-key", AGENTWIRE_MODEL: `bench-tool-paced-${TOKENS}-${TOKEN_MS}` },
        ),
      );
    }
    const urls = await Promise.all(servers.map((s) => s.listening(30_000)));
    const clients = await Promise.all(urls.map((url) => AgentwireClient.connect(url, { WebSocket: WebSocket as never })));
    cleanups.push(() => Promise.all(clients.map((c) => c.close().catch(() => undefined))));
    const recorders = clients.map((c) => new EventRecorder(c));

    // Conversation k: created (so owned) on instance k % 3, stepped from the next, confirmed from the one after.
    const ids: string[] = [];
    for (let k = 0; k < CONVERSATIONS; k++) ids.push((await clients[k % 3]!.conversation.create({ title: `c${k}` })).id);
    for (const client of clients) for (const conversationId of ids) expect((await client.conversation.subscribe({ conversationId })).resync).toBe(false);
    /** Conversations of instance 0 left waiting for a confirmation when it dies. */
    const leftPending = new Set([ids[0]!, ids[3]!]);
    const generations = await Promise.all(
      ids.map(async (conversationId, k) => {
        const driver = clients[(k + 1) % 3]!;
        await driver.message.append({ conversationId, role: "user", content: `run it (${k})` });
        return (await driver.step({ conversationId })).generationId;
      }),
    );
    const watcher = recorders[1]!;
    const pending = await Promise.all(
      ids.map((conversationId) => watcher.waitFor((e) => e.method === "tool_pending" && e.params.conversationId === conversationId, 20_000)),
    );
    await Promise.all(
      ids.map((conversationId, k) => {
        if (leftPending.has(conversationId)) return undefined;
        return clients[(k + 2) % 3]!.tool.confirm({ conversationId, toolCallId: pending[k]!.params.toolCallId, action: "confirm" });
      }),
    );
    // Kill once every confirmed generation of instance 0 streams its final reply.
    const streaming = ids.filter((id, k) => k % 3 === 0 && !leftPending.has(id));
    await Promise.all(
      streaming.map((conversationId) =>
        watcher.waitFor((e) => e.method === "generation_progress" && e.params.conversationId === conversationId && (e.params.delta ?? "").includes("t:"), 20_000),
      ),
    );
    const killedAt = Date.now();
    servers[0]!.child.kill("SIGKILL");
    await servers[0]!.exited;

    // Cut-off generations end with an error from the new owner; the calls left pending are offered again.
    const cutOff = ids.filter((_, k) => k % 3 === 0);
    const errors = await Promise.all(
      cutOff.map((conversationId) =>
        watcher
          .waitFor((e) => e.method === "error" && e.params.conversationId === conversationId && e.params.generationId === generations[ids.indexOf(conversationId)], LEASE_MS * 6)
          .then((event) => ({ event, at: Date.now() - killedAt })),
      ),
    );
    for (const [i, { event }] of errors.entries()) expect(event.params.code, cutOff[i]).toBe(-32070);
    const failover = errors.map((e) => e.at).sort((a, b) => a - b);
    for (const conversationId of leftPending) {
      const again = await watcher.waitFor(
        (e) => e.method === "tool_pending" && e.params.conversationId === conversationId && e.params.generationId !== generations[ids.indexOf(conversationId)],
        10_000,
      );
      await clients[1]!.tool.confirm({ conversationId, toolCallId: again.params.toolCallId, action: "confirm" });
    }

    // Every generation ends: the last one of each conversation completes, or ended with the owner lost.
    await eventually(
      () =>
        ids.every((conversationId) => {
          const last = watcher.events.filter((e) => e.params.conversationId === conversationId && ends(e)).at(-1);
          return last !== undefined && (last.method === "generation_complete" || (last.method === "error" && !leftPending.has(conversationId)));
        }),
      20_000,
      "every generation ended",
    );
    await new Promise((r) => setTimeout(r, 300)); // nothing more may arrive

    // The two surviving clients saw the same events, each once, in seq order.
    for (const conversationId of ids) {
      const seen = recorders.slice(1).map((r) => r.events.filter((e) => e.params.conversationId === conversationId));
      const seqs = seen[0]!.map((e) => e.params.seq as number);
      for (let i = 1; i < seqs.length; i++) expect(seqs[i], `${conversationId}: seq after ${seqs[i - 1]}`).toBeGreaterThan(seqs[i - 1]!);
      expect(seen[1]!.map((e) => `${e.params.seq} ${e.method}`), conversationId).toEqual(seen[0]!.map((e) => `${e.params.seq} ${e.method}`));
    }

    // The killed instance's client comes back on another instance with afterSeq: it gets the rest, without a resync.
    const back = await AgentwireClient.connect(urls[2]!, { WebSocket: WebSocket as never });
    cleanups.push(() => back.close().catch(() => undefined));
    const seenBack = new EventRecorder(back);
    for (const conversationId of ids) {
      const lastSeen = recorders[0]!.events.filter((e) => e.params.conversationId === conversationId).at(-1)!.params.seq as number;
      const resumed = await back.conversation.subscribe({ conversationId, afterSeq: lastSeen });
      expect(resumed.resync, conversationId).toBe(false);
      const rest = watcher.events.filter((e) => e.params.conversationId === conversationId && e.params.seq > lastSeen);
      await eventually(() => seenBack.events.filter((e) => e.params.conversationId === conversationId).length >= rest.length, 5000, `replay of ${conversationId}`);
      expect(seenBack.events.filter((e) => e.params.conversationId === conversationId).map((e) => `${e.params.seq} ${e.method}`), conversationId).toEqual(
        rest.map((e) => `${e.params.seq} ${e.method}`),
      );
    }

    // No watcher was told that events were lost between instances (a resync mid-subscription is logged).
    for (const server of servers.slice(1)) expect(server.stderr()).not.toMatch(/were lost for connection|publishing an event .* failed/);

    // Stored records equal what the clients saw.
    for (const [k, conversationId] of ids.entries()) {
      const events = watcher.events.filter((e) => e.params.conversationId === conversationId);
      const { records } = await clients[1]!.conversation.get({ conversationId, includeRecords: true });
      const calls = records!.filter((r) => r.type === "tool_call");
      expect(calls.map((r) => r.type === "tool_call" && r.status), conversationId).toEqual(["completed"]);
      const completed = events.filter((e) => e.method === "tool_completed").at(-1)!;
      expect(completed.params.record, conversationId).toEqual(calls[0]);
      const added = events.filter((e) => e.method === "message_added").map((e) => e.params.record);
      expect(added, conversationId).toEqual(records!.filter((r) => r.type === "message"));
      if (k % 3 === 0 && !leftPending.has(conversationId)) {
        // Cut off while streaming: the reply being streamed was never stored.
        expect(records!.at(-1)!.type, conversationId).toBe("tool_call");
      } else {
        const finalGeneration = events.filter((e) => e.method === "generation_complete" && e.params.final).at(-1)!.params.generationId;
        const text = events
          .filter((e) => e.method === "generation_progress" && e.params.generationId === finalGeneration && e.params.kind === "text")
          .map((e) => e.params.delta)
          .join("");
        // Every streamed piece arrived: together they are the stored reply, exactly.
        const last = records!.at(-1)!;
        expect(last.type === "message" && last.role === "assistant" && last.content, conversationId).toBe(text);
        expect(text.length).toBeGreaterThan(0);
      }
    }
    console.log(
      `cluster failover (lease ${LEASE_MS} ms): kill -9 → the new owner's first event (the error ending the cut-off generation) ` +
        `after ${failover[0]}–${failover.at(-1)} ms for the ${cutOff.length} conversations of the killed instance`,
    );
    expect(failover.at(-1)!).toBeLessThan(LEASE_MS * 4);
  });
});
