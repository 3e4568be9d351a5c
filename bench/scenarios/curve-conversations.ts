/**
 * Curve: concurrent streaming conversations (1 / 10 / 100 / 500), one
 * subscriber connection each, every conversation streaming the same paced
 * turn at once. Per point: tokens delivered per second across all of them,
 * per-token p99, the server's CPU share and peak RSS. A fresh server per
 * point and launch; within a launch the points run in order, so a drift of
 * the machine's load touches every point alike.
 */
import { cpus } from "node:os";
import { closeAll, connectMany, type AgentwireClient } from "../client.js";
import { CONVERSATION_FIGURES, curveRowId, curveRowIds, standInNote } from "../curve-rows.js";
import { UsageWindow, curveTurn, watchedConversations } from "../curve-turn.js";
import { startFake, startServer, type ServerProcess } from "../processes.js";
import type { RowResult } from "../rows.js";
import { percentile, summarize } from "../stats.js";
import { WARMUP_TOKENS } from "./paced.js";
import type { CurvePoint } from "../config.js";
import type { Scenario } from "./scenario.js";

type Figure = (typeof CONVERSATION_FIGURES)[number]["key"];

export const curveConversations: Scenario = {
  name: "curve: conversations",
  rows: curveRowIds("conversations"),
  describe: (cfg) =>
    `${cfg.curveConversations.map((p) => p.count).join(" / ")} conversations streaming at once, one subscriber connection each, ` +
    `${cfg.curveTokens} tokens at ${cfg.curveDelayMs} ms; ${cfg.curveFreshServers ? "a fresh server per point" : "one server for all points"}; ${cfg.launches} launch${cfg.launches === 1 ? "" : "es"} × ` +
    `(1 warm-up of ${WARMUP_TOKENS} tokens + ${cfg.curveTurns} turn${cfg.curveTurns === 1 ? "" : "s"}) per point`,
  async run({ cfg, log }) {
    const model = `bench-paced-${cfg.curveTokens}-${cfg.curveDelayMs}`;
    const warmModel = `bench-paced-${WARMUP_TOKENS}-${cfg.curveDelayMs}`;
    const samples = new Map<string, number[][]>();
    const push = (point: string, key: Figure, values: number[]) => {
      const id = curveRowId.conversations(point, key);
      samples.set(id, [...(samples.get(id) ?? []), values]);
    };
    const others = new Map<string, string[]>();
    const cores = cpus().length;
    const fake = await startFake();
    try {
      for (let launch = 0; launch < cfg.launches; launch++) {
        let shared: ServerProcess | undefined;
        try {
          for (const point of cfg.curveConversations) {
            const server = cfg.curveFreshServers ? await startServer(fake.url) : (shared ??= await startServer(fake.url));
            let clients: AgentwireClient[] = [];
            try {
              clients = await connectMany(server.url, point.count, 50);
              const conversations = await watchedConversations(clients.map((client) => [client]));
              await curveTurn(conversations, warmModel, WARMUP_TOKENS);
              const usage = new UsageWindow(server.pid, fake.pid);
              const tps: number[] = [];
              const latencies: number[] = [];
              for (let t = 0; t < cfg.curveTurns; t++) {
                const turn = await curveTurn(conversations, model, cfg.curveTokens);
                let tokens = 0;
                for (const s of turn.seen) {
                  tokens += s.tokens;
                  for (const l of s.latencies) latencies.push(l);
                }
                tps.push(tokens / (turn.wallMs / 1000));
              }
              const used = usage.end();
              const p99 = percentile(latencies, 0.99);
              push(point.id, "tps", tps);
              push(point.id, "p99", [p99]);
              push(point.id, "cpu", [used.serverPercent]);
              push(point.id, "machine", [used.machinePercent]);
            push(point.id, "rss", [used.peakRssMiB]);
              const shares =
              `fake ${used.fakePercent.toFixed(0)}%, driver ${used.driverPercent.toFixed(0)}%, ` +
              `whole machine ${used.machinePercent.toFixed(0)}% of ${cores * 100}%`;
              others.set(point.id, [...(others.get(point.id) ?? []), shares]);
              log(
                `curve conversations ${point.count} launch ${launch + 1}: ${tps.map((v) => Math.round(v)).join(", ")} tok/s, p99 ${p99.toFixed(2)} ms, ` +
                  `server CPU ${used.serverPercent.toFixed(0)}% (${shares}), peak RSS ${used.peakRssMiB.toFixed(1)} MiB`,
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
    for (const point of cfg.curveConversations) {
      const standIn = standInNote(point, "conversation(s)");
      const ideal = (point.count * 1000) / cfg.curveDelayMs;
      const notes: Record<Figure, string> = {
        tps: `per turn: tokens received by all subscribers ÷ (first step sent → last generation_complete); paced ideal ${ideal.toLocaleString("en-US")} tok/s`,
        p99: "per launch: percentile over every token of the measured turns",
        cpu: `% of one core over the measured turns; in the same windows, per launch: ${others.get(point.id)?.join("; ")}`,
        machine: `busy jiffies of /proc/stat (all but idle and iowait) as % of one core (${cores} cores: up to ${cores * 100} %), other users' processes included`,
        rss: "VmRSS sampled every 100 ms during the measured turns",
      };
      for (const figure of CONVERSATION_FIGURES) {
        const id = curveRowId.conversations(point.id, figure.key);
        out[id] = { ...summarize(samples.get(id) ?? []), note: `${standIn}${notes[figure.key]}` };
      }
    }
    const last = cfg.curveConversations.at(-1)!;
    const lastTps = out[curveRowId.conversations(last.id, "tps")];
    const verdict = saturation(cfg.curveConversations, cfg.curveDelayMs, out, cores);
    log(`curve conversations: ${verdict}`);
    lastTps.note = `${lastTps.note}. ${verdict}`;
    return out;
  },
};

/**
 * Where the curve stops following the paced ideal, and what the server's CPU
 * was there. The fake sleeps between tokens after each write, so when the
 * pipeline falls behind its pace slips and delivered tokens/s drops below
 * the ideal; per-token latency counts from the fake's write, so it shows only
 * the queueing after that.
 */
function saturation(
  points: CurvePoint[],
  delayMs: number,
  out: Record<string, RowResult>,
  cores: number,
): string {
  const at = (point: CurvePoint, key: Figure) => out[curveRowId.conversations(point.id, key)]?.median ?? Number.NaN;
  const ideal = (point: CurvePoint) => (point.count * 1000) / delayMs;
  const first = points.find((p) => at(p, "tps") < 0.9 * ideal(p));
  if (!first) return `Saturation: none up to ${points.at(-1)!.count} conversations (delivered tokens/s within 10 % of the paced ideal at every point).`;
  const cpu = at(first, "cpu");
  const machine = at(first, "machine");
  const share = Math.round((100 * at(first, "tps")) / ideal(first));
  let why: string;
  if (cpu >= 90) {
    why = `the server's JavaScript runs on one thread and uses ${cpu.toFixed(0)} % of one core there: its main thread is busy all the time, CPU-bound (the server CPU row shows it); the fake's pace then slips and p99 grows with the queue`;
  } else if (machine >= 0.9 * cores * 100) {
    why =
      `the server uses ${cpu.toFixed(0)} % of one core there, but the machine's ${cores} cores are ${Math.round(machine / cores)} % busy ` +
      `(server, fake, driver and whatever else runs: see the CPU note): the box is the limit, and the server waits for a core`;
  } else {
    why =
      `the server uses ${cpu.toFixed(0)} % of one core there and the machine ${Math.round(machine / cores)} % of its ${cores} cores: no CPU is full on average, ` +
      `but the fake's streams tick together, so each ${delayMs} ms the server handles a burst of ${first.count} tokens one after another ` +
      `(in a profile, one socket write per frame is the largest part) and the last of each burst waits for the rest`;
  }
  // Where the main thread itself is full, if that is further along the curve.
  const busy = points.find((p) => at(p, "cpu") >= 90);
  const later = busy && busy !== first ? `; the server's main thread is CPU-bound from ${busy.count} conversations (${at(busy, "cpu").toFixed(0)} % of one core, ${Math.round((100 * at(busy, "tps")) / ideal(busy))} % of the paced ideal delivered)` : "";
  return `Saturation: from ${first.count} conversations delivered tokens/s is ${share} % of the paced ideal; ${why}${later}.`;
}
