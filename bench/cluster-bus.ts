/**
 * The Redis event bus between two instances, in one process: bus A
 * publishes, bus B (its own connections) delivers. Measures the added
 * latency of one event (publish on A → onEvent on B, one at a time) and the
 * throughput of pipelined publishing across 20 conversations. Not part of
 * `npm run bench` (the bus is not wired into the server yet); runs alone
 * against the Redis in AGENTWIRE_BENCH_REDIS or redis://127.0.0.1:6379:
 *   npx tsx bench/cluster-bus.ts [--events 2000] [--auto-pipelining]
 * Its keys live under a random prefix and are deleted at the end.
 */
import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { ClusterBus } from "../src/cluster/cluster-bus.js";
import { ClusterKeys } from "../src/cluster/cluster-keys.js";
import { connectRedis } from "../src/cluster/redis-client.js";
import { createLogger } from "../src/logging/logger.js";
import { notificationFrame } from "../src/sessions/notification-frame.js";

const { values } = parseArgs({ options: { events: { type: "string", default: "2000" }, "auto-pipelining": { type: "boolean", default: false } } });
const EVENTS = Number(values.events);
const url = process.env.AGENTWIRE_BENCH_REDIS ?? "redis://127.0.0.1:6379";
const log = createLogger("warn");
const keys = new ClusterKeys(`agentwire-bench:${randomBytes(6).toString("hex")}:`);
const connections = await Promise.all(
  ["a", "a-sub", "b", "b-sub"].map((name) => connectRedis(url, { name: `bench-${name}`, log, options: { enableAutoPipelining: values["auto-pipelining"] } })),
);
const [aCommands, aSubscriber, bCommands, bSubscriber] = connections as [typeof connections[0], typeof connections[0], typeof connections[0], typeof connections[0]];
const a = new ClusterBus(aCommands, aSubscriber, { keys, log });
const b = new ClusterBus(bCommands, bSubscriber, { keys, log });

/** A token notification the size the server sends while a model streams. */
const frame = (conversationId: string, seq: number) =>
  notificationFrame("generation_progress", { conversationId, seq, timestamp: new Date().toISOString(), generationId: "g_bench", kind: "text", delta: "token " } as never);

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

// Latency: one event in flight at a time.
{
  const id = "c_latency";
  let arrived: (() => void) | null = null;
  const sub = b.subscribe(id, undefined, { onEvent: () => arrived?.(), onResync: () => {} });
  await sub.ready;
  const samples: number[] = [];
  for (let seq = 1; seq <= EVENTS; seq++) {
    const delivered = new Promise<void>((resolve) => (arrived = resolve));
    const start = performance.now();
    void a.publish(id, { seq, prevSeq: seq - 1, method: "generation_progress", frame: frame(id, seq) });
    await delivered;
    samples.push(performance.now() - start);
  }
  sub.dispose();
  samples.sort((x, y) => x - y);
  const warm = samples.slice(Math.floor(samples.length / 10));
  console.log(
    `latency A→B, ${EVENTS} events one at a time: p50 ${percentile(warm, 50).toFixed(3)} ms, p99 ${percentile(warm, 99).toFixed(3)} ms, max ${warm.at(-1)!.toFixed(3)} ms`,
  );
}

// Throughput: 20 conversations, every event published without waiting.
{
  const ids = Array.from({ length: 20 }, (_, i) => `c_burst${i}`);
  const per = Math.max(1, Math.floor(EVENTS / ids.length)) * 5;
  let received = 0;
  const total = per * ids.length;
  let done!: () => void;
  const all = new Promise<void>((resolve) => (done = resolve));
  const subs = ids.map((id) => b.subscribe(id, undefined, { onEvent: () => ++received === total && done(), onResync: () => {} }));
  await Promise.all(subs.map((s) => s.ready));
  const start = performance.now();
  for (let seq = 1; seq <= per; seq++) for (const id of ids) void a.publish(id, { seq, prevSeq: seq - 1, method: "generation_progress", frame: frame(id, seq) });
  await all;
  const ms = performance.now() - start;
  console.log(`throughput A→B, ${total} events over ${ids.length} conversations: ${Math.round(total / (ms / 1000))} events/s (${ms.toFixed(0)} ms)`);
  for (const s of subs) s.dispose();
}

await a.close();
await b.close();
let cursor = "0";
do {
  const [next, found] = await aCommands.scan(cursor, "MATCH", `${keys.prefix}*`, "COUNT", 1000);
  if (found.length) await aCommands.del(...found);
  cursor = next;
} while (cursor !== "0");
for (const c of connections) c.disconnect();
