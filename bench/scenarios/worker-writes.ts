/**
 * Does moving socket writes off the main thread pay? The fan-out load
 * (conversations × subscribers, one frame per conversation per tick) from a
 * bare host process (bench/worker-writes-host.ts), once with every write on
 * the main thread and once with the WebSocket server in a worker thread that
 * the main thread posts each tick's frames to. Delivery p99 at the clients
 * and the main thread's event-loop utilization — the share of the main
 * thread that the writes take from the agent's own work.
 */
import { join } from "node:path";
import { WebSocket } from "ws";
import { launch, ROOT, FROM_SOURCE } from "../processes.js";
import type { RowResult } from "../rows.js";
import { percentile, summarize } from "../stats.js";
import type { Scenario } from "./scenario.js";

const HOST_ENTRY = FROM_SOURCE ? join(ROOT, "bench", "worker-writes-host.ts") : join(ROOT, "dist", "bench", "worker-writes-host.js");

interface Leg {
  p99: number;
  mainElu: number;
}

async function runLeg(mode: "main" | "worker", conversations: number, subscribers: number, ticks: number, delay: number): Promise<Leg> {
  const host = await launch(
    [HOST_ENTRY, "--mode", mode, "--conversations", String(conversations), "--subscribers", String(subscribers), "--ticks", String(ticks), "--delay", String(delay)],
    /worker-writes listening on (ws:\/\/\S+) /,
  );
  const sockets: WebSocket[] = [];
  try {
    let out = "";
    const report = new Promise<{ mainElu: number }>((resolve) => {
      host.child.stdout!.on("data", (chunk: string | Buffer) => {
        out += String(chunk);
        const match = /report (\{.*\})\n/.exec(out);
        if (match) resolve(JSON.parse(match[1]!) as { mainElu: number });
      });
    });
    const latencies: number[] = [];
    const measuredFrom = Math.floor(ticks / 10);
    for (let i = 0; i < conversations * subscribers; i++) {
      const socket = new WebSocket(host.match[1]!, { perMessageDeflate: false });
      socket.on("error", () => {});
      await new Promise<void>((resolve, reject) => {
        socket.once("open", () => resolve());
        socket.once("error", reject);
      });
      socket.on("message", (data) => {
        const now = process.hrtime.bigint();
        const text = String(data);
        const seq = Number(/"seq":(\d+)/.exec(text)![1]);
        if (seq < measuredFrom) return;
        const stamp = BigInt(/t:(\d+);/.exec(text)![1]!);
        latencies.push(Number(now - stamp) / 1e6);
      });
      socket.send(JSON.stringify({ sub: Math.floor(i / subscribers) }));
      sockets.push(socket);
    }
    const { mainElu } = await report;
    const expected = (ticks - measuredFrom) * conversations * subscribers;
    if (latencies.length < expected) throw new Error(`${mode}: ${latencies.length} of ${expected} frames arrived`);
    return { p99: percentile(latencies, 0.99), mainElu: mainElu * 100 };
  } finally {
    for (const socket of sockets) socket.terminate();
    await host.stop();
  }
}

export const workerWrites: Scenario = {
  name: "worker writes",
  rows: ["worker.main_p99", "worker.worker_p99", "worker.main_elu", "worker.worker_elu"],
  describe: (cfg) =>
    `${cfg.fanoutConversations} conversations × ${cfg.fanoutSubscribers} connections, a frame per conversation every ${cfg.fanoutDelayMs} ms for ` +
    `${cfg.fanoutTokens} ticks, from a bare host (no agentwire): writes on the main thread, then in a worker thread; ${cfg.launches} launch${cfg.launches === 1 ? "" : "es"} each`,
  async run({ cfg, log }) {
    const legs = { main: [] as Leg[], worker: [] as Leg[] };
    for (let launch = 0; launch < cfg.launches; launch++) {
      for (const mode of ["main", "worker"] as const) {
        const leg = await runLeg(mode, cfg.fanoutConversations, cfg.fanoutSubscribers, cfg.fanoutTokens, cfg.fanoutDelayMs);
        legs[mode].push(leg);
        log(`worker writes launch ${launch + 1}, ${mode}: p99 ${leg.p99.toFixed(3)} ms, main thread busy ${leg.mainElu.toFixed(1)} %`);
      }
    }
    const rows = (pick: (leg: Leg) => number, mode: "main" | "worker", floor?: "main"): RowResult => {
      const result = summarize(legs[mode].map((leg) => [pick(leg)]));
      if (!floor) return result;
      const f = summarize(legs[floor].map((leg) => [pick(leg)]));
      return { ...result, floor: f.median, floorSpread: f.spread, note: "floor: the same load with every write on the main thread" };
    };
    return {
      "worker.main_p99": rows((leg) => leg.p99, "main"),
      "worker.worker_p99": rows((leg) => leg.p99, "worker", "main"),
      "worker.main_elu": rows((leg) => leg.mainElu, "main"),
      "worker.worker_elu": rows((leg) => leg.mainElu, "worker", "main"),
    };
  },
};
