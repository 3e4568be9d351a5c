/**
 * Curve: one streaming conversation watched by 1 / 10 / 100 subscriber
 * connections (the first sends the step). Per point: per-token p99 over every
 * token at every subscriber, and the server's CPU per turn. A fresh server
 * per point and launch.
 */
import { closeAll, connectMany, type AgentwireClient } from "../client.js";
import { SUBSCRIBER_FIGURES, curveRowId, curveRowIds, standInNote } from "../curve-rows.js";
import { UsageWindow, curveTurn, watchedConversations } from "../curve-turn.js";
import { startFake, startServer, type ServerProcess } from "../processes.js";
import type { RowResult } from "../rows.js";
import { percentile, summarize } from "../stats.js";
import { WARMUP_TOKENS } from "./paced.js";
import type { Scenario } from "./scenario.js";

export const curveSubscribers: Scenario = {
  name: "curve: subscribers",
  rows: curveRowIds("subscribers"),
  describe: (cfg) =>
    `one conversation watched by ${cfg.curveSubscribers.map((p) => p.count).join(" / ")} subscriber connections, ` +
    `${cfg.curveTokens} tokens at ${cfg.curveDelayMs} ms; ${cfg.curveFreshServers ? "a fresh server per point" : "one server for all points"}; ${cfg.launches} launch${cfg.launches === 1 ? "" : "es"} × ` +
    `(1 warm-up of ${WARMUP_TOKENS} tokens + ${cfg.curveTurns} turn${cfg.curveTurns === 1 ? "" : "s"}) per point`,
  async run({ cfg, log }) {
    const model = `bench-paced-${cfg.curveTokens}-${cfg.curveDelayMs}`;
    const warmModel = `bench-paced-${WARMUP_TOKENS}-${cfg.curveDelayMs}`;
    const p99 = new Map<string, number[][]>(cfg.curveSubscribers.map((p) => [p.id, []]));
    const cpu = new Map<string, number[][]>(cfg.curveSubscribers.map((p) => [p.id, []]));
    const fake = await startFake();
    try {
      for (let launch = 0; launch < cfg.launches; launch++) {
        let shared: ServerProcess | undefined;
        try {
          for (const point of cfg.curveSubscribers) {
            const server = cfg.curveFreshServers ? await startServer(fake.url) : (shared ??= await startServer(fake.url));
            let clients: AgentwireClient[] = [];
            try {
              clients = await connectMany(server.url, point.count, 50);
              const conversations = await watchedConversations([clients]);
              await curveTurn(conversations, warmModel, WARMUP_TOKENS);
              const latencies: number[] = [];
              const perTurnMs: number[] = [];
              for (let t = 0; t < cfg.curveTurns; t++) {
                // One window per turn: CPU per turn, not per run of turns.
                const usage = new UsageWindow(server.pid, fake.pid);
                const turn = await curveTurn(conversations, model, cfg.curveTokens);
                perTurnMs.push(usage.end().serverMs);
                for (const s of turn.seen) for (const l of s.latencies) latencies.push(l);
              }
              const p = percentile(latencies, 0.99);
              p99.get(point.id)!.push([p]);
              cpu.get(point.id)!.push(perTurnMs);
              log(
                `curve subscribers ${point.count} launch ${launch + 1}: p99 ${p.toFixed(2)} ms over ${latencies.length} deliveries, ` +
                  `server CPU ${perTurnMs.map((ms) => ms.toFixed(0)).join(", ")} ms/turn`,
              );
            } finally {
              await closeAll(clients);
              if (server !== shared) await server.close();
            }
          }
        } finally {
          await shared?.close();
        }
      }
    } finally {
      await fake.stop();
    }

    const out: Record<string, RowResult> = {};
    for (const point of cfg.curveSubscribers) {
      const standIn = standInNote(point, `subscriber(s) and ${cfg.curveTokens}-token turns`);
      for (const figure of SUBSCRIBER_FIGURES) {
        const note =
          figure.key === "p99"
            ? `${standIn}per launch: percentile over every token at every subscriber`
            : `${standIn}utime+stime of the server over one turn (message.append, step, the stream to every subscriber, until the last generation_complete; /proc, 10 ms ticks)`;
        out[curveRowId.subscribers(point.id, figure.key)] = { ...summarize((figure.key === "p99" ? p99 : cpu).get(point.id)!), note };
      }
    }
    return out;
  },
};
