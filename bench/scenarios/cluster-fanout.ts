/**
 * Cluster fan-out (issue 14): subscribers on instance A, the generation on
 * instance B (B created, so owns, the conversations; A serves its clients
 * from the Redis event bus). Per-token latency at every subscriber on A, as
 * a ratio to the same fan-out on a single instance (no --redis) on the same
 * PostgreSQL store, measured in the same launch: the "floor" column.
 *
 * Needs PostgreSQL (AGENTWIRE_BENCH_POSTGRES, default
 * postgres://$USER@127.0.0.1:5432/test, whose role may CREATE DATABASE) and
 * Redis (AGENTWIRE_BENCH_REDIS, default redis://127.0.0.1:6379); the rows
 * say so when either is missing.
 */
import { randomBytes } from "node:crypto";
import { connect as tcpConnect } from "node:net";
import { userInfo } from "node:os";
import { closeAll, connectMany, USER_TEXT, watchGeneration, type AgentwireClient } from "../client.js";
import { startFake, startServer, type ServerProcess } from "../processes.js";
import type { RowResult } from "../rows.js";
import { percentile, summarizeWithFloor } from "../stats.js";
import { WARMUP_TOKENS } from "./paced.js";
import type { Scenario } from "./scenario.js";

const TURN_TIMEOUT_MS = 120_000;
const POSTGRES_URL = process.env.AGENTWIRE_BENCH_POSTGRES ?? `postgres://${userInfo().username}@127.0.0.1:5432/test`;
const REDIS_URL = process.env.AGENTWIRE_BENCH_REDIS ?? "redis://127.0.0.1:6379";

/** Whether something accepts TCP connections at the URL's host and port (within a second). */
function answers(url: string, defaultPort: number): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = tcpConnect({ host: hostname.replace(/^\[|\]$/g, "") || "127.0.0.1", port: Number(port) || defaultPort });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

/** A database of the scenario's own on the PostgreSQL server; `drop` removes it. */
async function scratchDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const { default: pg } = await import("pg");
  const name = `agentwire_bench_${randomBytes(4).toString("hex")}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 3000 });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  try {
    await admin(`CREATE DATABASE ${name}`);
  } catch (error) {
    throw new Error(`PostgreSQL at ${POSTGRES_URL} is needed (set AGENTWIRE_BENCH_POSTGRES): ${(error as Error).message}`);
  }
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

interface Turns {
  conversations: number;
  subscribers: number;
  tokens: number;
  delayMs: number;
  turns: number;
}

/**
 * Fan-out turns: `conversations` created (so owned) through `owner`, each
 * watched by `subscribers` connections to `watched`; the step goes to the
 * owner. Returns every token's latency at every subscriber, measured turns only.
 */
async function fanoutLatencies(owner: ServerProcess, watched: ServerProcess, t: Turns): Promise<number[]> {
  const model = `bench-paced-${t.tokens}-${t.delayMs}`;
  const warmModel = `bench-paced-${WARMUP_TOKENS}-${t.delayMs}`;
  let drivers: AgentwireClient[] = [];
  let watchers: AgentwireClient[] = [];
  try {
    drivers = await connectMany(owner.url, t.conversations, 20);
    watchers = await connectMany(watched.url, t.conversations * t.subscribers, 50);
    const groups: { id: string; driver: AgentwireClient; subscribers: AgentwireClient[] }[] = [];
    for (let i = 0; i < t.conversations; i++) {
      const driver = drivers[i]!;
      const { id } = await driver.conversation.create({ title: `cluster fan-out ${i}` });
      const subscribers = watchers.slice(i * t.subscribers, (i + 1) * t.subscribers);
      for (const client of subscribers) await client.conversation.subscribe({ conversationId: id });
      groups.push({ id, driver, subscribers });
    }
    const latencies: number[] = [];
    for (let turn = 0; turn < 1 + t.turns; turn++) {
      const warm = turn === 0;
      await Promise.all(groups.map((g) => g.driver.message.append({ conversationId: g.id, role: "user", content: USER_TEXT })));
      const watches = groups.flatMap((g) => g.subscribers.map((client) => watchGeneration(client, g.id, TURN_TIMEOUT_MS)));
      await Promise.all(groups.map((g) => g.driver.step({ conversationId: g.id, model: warm ? warmModel : model })));
      const seen = await Promise.all(watches.map((w) => w.done));
      const expected = warm ? WARMUP_TOKENS : t.tokens;
      const short = seen.find((s) => s.tokens !== expected);
      if (short) throw new Error(`a subscriber got ${short.tokens} of ${expected} tokens`);
      if (!warm) for (const s of seen) latencies.push(...s.latencies);
    }
    return latencies;
  } finally {
    await closeAll([...drivers, ...watchers]);
  }
}

export const clusterFanout: Scenario = {
  name: "cluster fan-out",
  rows: ["cluster.fanout_p50", "cluster.fanout_p99"],
  describe: (cfg) =>
    `${cfg.clusterConversations} conversations owned by instance B × ${cfg.fanoutSubscribers} subscribers on instance A ` +
    `(PostgreSQL + Redis), ${cfg.fanoutTokens} tokens at ${cfg.fanoutDelayMs} ms; floor: the same on one instance; ` +
    `${cfg.launches} launch${cfg.launches === 1 ? "" : "es"} × (1 warm-up + ${cfg.fanoutTurns} turns)`,
  async run({ cfg, log }) {
    // Without the services this scenario is not measured, and its rows say so (the rest of the run goes on).
    const missing = [
      ...((await answers(POSTGRES_URL, 5432)) ? [] : [`PostgreSQL (${new URL(POSTGRES_URL).host}; AGENTWIRE_BENCH_POSTGRES)`]),
      ...((await answers(REDIS_URL, 6379)) ? [] : [`Redis (${new URL(REDIS_URL).host}; AGENTWIRE_BENCH_REDIS)`]),
    ];
    if (missing.length > 0) {
      const note = `not measured: nothing answers at ${missing.join(" or ")}; start them (.ci/run does) to measure this row`;
      log(`cluster fan-out ${note}`);
      const row: RowResult = { median: Number.NaN, note };
      return { "cluster.fanout_p50": row, "cluster.fanout_p99": { ...row } };
    }
    const shape: Turns = {
      conversations: cfg.clusterConversations,
      subscribers: cfg.fanoutSubscribers,
      tokens: cfg.fanoutTokens,
      delayMs: cfg.fanoutDelayMs,
      turns: cfg.fanoutTurns,
    };
    const fake = await startFake();
    const p50: number[][] = [];
    const p99: number[][] = [];
    const floorP50: number[][] = [];
    const floorP99: number[][] = [];
    try {
      for (let launch = 0; launch < cfg.launches; launch++) {
        const db = await scratchDatabase();
        try {
          const single = await startServer(fake.url, { extraArgs: ["--store", db.url] });
          let alone: number[];
          try {
            alone = await fanoutLatencies(single, single, shape);
          } finally {
            await single.close();
          }
          const clusterArgs = ["--store", db.url, "--redis", REDIS_URL, "--redis-prefix", `agentwire-bench:${randomBytes(4).toString("hex")}:`];
          const a = await startServer(fake.url, { extraArgs: clusterArgs });
          let across: number[];
          try {
            const b = await startServer(fake.url, { extraArgs: clusterArgs });
            try {
              across = await fanoutLatencies(b, a, shape);
            } finally {
              await b.close();
            }
          } finally {
            await a.close();
          }
          p50.push([percentile(across, 0.5)]);
          p99.push([percentile(across, 0.99)]);
          floorP50.push([percentile(alone, 0.5)]);
          floorP99.push([percentile(alone, 0.99)]);
          log(
            `cluster fan-out launch ${launch + 1}: A←B p50 ${percentile(across, 0.5).toFixed(3)} p99 ${percentile(across, 0.99).toFixed(3)} ms ` +
              `(${across.length} token deliveries) | one instance p50 ${percentile(alone, 0.5).toFixed(3)} p99 ${percentile(alone, 0.99).toFixed(3)} ms`,
          );
        } finally {
          await db.drop().catch(() => undefined);
        }
      }
    } finally {
      await fake.stop();
    }
    const withFloor = (value: number[][], floor: number[][]): RowResult =>
      summarizeWithFloor(
        value,
        floor,
        "per launch: percentile over every token at every subscriber on A, the generation running on B; floor: the same fan-out on one instance (no --redis) on the same store",
      );
    return { "cluster.fanout_p50": withFloor(p50, floorP50), "cluster.fanout_p99": withFloor(p99, floorP99) };
  },
};
