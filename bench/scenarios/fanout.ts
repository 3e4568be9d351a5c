/**
 * Fan-out: many conversations streaming paced answers at once, each watched
 * by several connections (the first of them sends step). Per-token latency
 * at every subscriber. Floor: the driver reading as many paced streams from
 * the fake directly, concurrently.
 */
import { closeAll, connectMany, watchGeneration, type AgentwireClient } from "../client.js";
import { USER_TEXT } from "../client.js";
import { floorTurn } from "../floor.js";
import { cpuMs, startFake, startServer } from "../processes.js";
import type { RowResult } from "../rows.js";
import { percentile, summarizeWithFloor } from "../stats.js";
import { WARMUP_TOKENS } from "./paced.js";
import { type Scenario } from "./scenario.js";

const TURN_TIMEOUT_MS = 120_000;

function driverCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

export const fanout: Scenario = {
  name: "fan-out",
  rows: ["fanout.p50", "fanout.p99"],
  describe: (cfg) =>
    `${cfg.fanoutConversations} conversations × ${cfg.fanoutSubscribers} subscriber connections, ` +
    `${cfg.fanoutTokens} tokens at ${cfg.fanoutDelayMs} ms, all at once; ` +
    `${cfg.launches} launch${cfg.launches === 1 ? "" : "es"} × (1 warm-up of ${WARMUP_TOKENS} tokens + ${cfg.fanoutTurns} turns)`,
  async run({ cfg, log }) {
    const model = `bench-paced-${cfg.fanoutTokens}-${cfg.fanoutDelayMs}`;
    const schedule = { warmup: 1, turns: cfg.fanoutTurns };
    const warmModel = `bench-paced-${WARMUP_TOKENS}-${cfg.fanoutDelayMs}`;
    const modelOf = (turn: number) => (turn < schedule.warmup ? warmModel : model);
    const fake = await startFake();
    const p50: number[][] = [];
    const p99: number[][] = [];
    const floorP50: number[][] = [];
    const floorP99: number[][] = [];
    const cpuText: string[] = [];
    try {
      for (let launch = 0; launch < cfg.launches; launch++) {
        const server = await startServer(fake.url);
        let clients: AgentwireClient[] = [];
        try {
          clients = await connectMany(server.url, cfg.fanoutConversations * cfg.fanoutSubscribers, 50);
          const { tools } = await clients[0].tools.list();
          const groups: { id: string; subscribers: AgentwireClient[] }[] = [];
          for (let i = 0; i < cfg.fanoutConversations; i++) {
            const subscribers = clients.slice(i * cfg.fanoutSubscribers, (i + 1) * cfg.fanoutSubscribers);
            const { id } = await subscribers[0].conversation.create({ title: `fan-out ${i}` });
            for (const client of subscribers) await client.conversation.subscribe({ conversationId: id });
            groups.push({ id, subscribers });
          }

          const floor: number[] = [];
          for (let t = 0; t < schedule.warmup + schedule.turns; t++) {
            const results = await Promise.all(groups.map(() => floorTurn(fake.url, modelOf(t), tools, TURN_TIMEOUT_MS)));
            if (t >= schedule.warmup) for (const r of results) floor.push(...r.latencies);
          }

          const latencies: number[] = [];
          let usage: { wallMs: number; server: number; fake: number; driver: number } | undefined;
          for (let t = 0; t < schedule.warmup + schedule.turns; t++) {
            if (t === schedule.warmup) {
              usage = { wallMs: performance.now(), server: cpuMs(server.pid), fake: cpuMs(fake.pid), driver: driverCpuMs() };
            }
            await Promise.all(groups.map((g) => g.subscribers[0].message.append({ conversationId: g.id, role: "user", content: USER_TEXT })));
            const watches = groups.flatMap((g) => g.subscribers.map((client) => watchGeneration(client, g.id, TURN_TIMEOUT_MS)));
            await Promise.all(groups.map((g) => g.subscribers[0].step({ conversationId: g.id, model: modelOf(t) })));
            const seen = await Promise.all(watches.map((w) => w.done));
            const expected = t < schedule.warmup ? WARMUP_TOKENS : cfg.fanoutTokens;
            const short = seen.find((s) => s.tokens !== expected);
            if (short) throw new Error(`a subscriber got ${short.tokens} of ${expected} tokens`);
            if (t >= schedule.warmup) for (const s of seen) latencies.push(...s.latencies);
          }
          const wall = performance.now() - usage!.wallMs;
          const share = (ms: number) => `${Math.round((100 * ms) / wall)}%`;
          cpuText.push(
            `server ${share(cpuMs(server.pid) - usage!.server)}, fake ${share(cpuMs(fake.pid) - usage!.fake)}, ` +
              `driver ${share(driverCpuMs() - usage!.driver)} of one core`,
          );
          p50.push([percentile(latencies, 0.5)]);
          p99.push([percentile(latencies, 0.99)]);
          floorP50.push([percentile(floor, 0.5)]);
          floorP99.push([percentile(floor, 0.99)]);
          log(
            `fan-out launch ${launch + 1}: p50 ${percentile(latencies, 0.5).toFixed(3)} p99 ${percentile(latencies, 0.99).toFixed(3)} ms ` +
              `(${latencies.length} token deliveries; CPU during measured turns: ${cpuText.at(-1)}) | floor p50 ${percentile(floor, 0.5).toFixed(3)} p99 ${percentile(floor, 0.99).toFixed(3)} ms`,
          );
        } finally {
          await closeAll(clients);
          await server.close();
        }
      }
    } finally {
      await fake.stop();
    }
    const withFloor = (value: number[][], floor: number[][]): RowResult =>
      summarizeWithFloor(
        value,
        floor,
        "per launch: percentile over every token at every subscriber; floor: the driver reading the same streams directly. " +
          `CPU during the measured turns, per launch: ${cpuText.join("; ")}`,
      );
    return { "fanout.p50": withFloor(p50, floorP50), "fanout.p99": withFloor(p99, floorP99) };
  },
};
