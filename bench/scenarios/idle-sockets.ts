/**
 * Idle sockets: N connections that completed initialize and then do
 * nothing; the server's RSS with all of them open. Bounded by this
 * process's open-file limit (each connection is one fd here and one in the
 * server); when the limit is lower, fewer are opened and the row says so.
 * They all come from 127.0.0.1, over the server's default per-address cap
 * (1024), so the launch raises --max-connections-per-address and
 * --max-connections to the count (plus the one status connection's margin).
 */
import { readdirSync } from "node:fs";
import { closeAll, connectMany, type AgentwireClient } from "../client.js";
import { openFileLimit, rssMiB, sleep, startServer } from "../processes.js";
import { summarize } from "../stats.js";
import type { Scenario } from "./scenario.js";

const UNUSED_MODEL_URL = "http://127.0.0.1:9/v1";

function connectionsPossible(wanted: number): number {
  const open = readdirSync("/proc/self/fd").length;
  return Math.max(0, Math.min(wanted, openFileLimit() - open - 256));
}

export const idleSockets: Scenario = {
  name: "idle sockets",
  rows: ["idle.rss", "idle.per_conn"],
  describe: (cfg) => `${cfg.idleConnections} initialized connections from 127.0.0.1 (both connection caps raised to match), idle; ${cfg.launches} launch${cfg.launches === 1 ? "" : "es"}, one measurement each`,
  async run({ cfg, log }) {
    const count = connectionsPossible(cfg.idleConnections);
    if (count < 1) throw new Error(`no file descriptors to spare (limit ${openFileLimit()})`);
    const rss: number[][] = [];
    const perConn: number[][] = [];
    for (let launch = 0; launch < cfg.launches; launch++) {
      const cap = String(count + 16);
      const server = await startServer(UNUSED_MODEL_URL, { extraArgs: ["--max-connections", cap, "--max-connections-per-address", cap] });
      let clients: AgentwireClient[] = [];
      try {
        await sleep(300);
        const before = rssMiB(server.pid);
        const t0 = performance.now();
        clients = await connectMany(server.url, count, 100);
        const connectMs = performance.now() - t0;
        const status = await clients[0].server.status();
        if (status.initializedConnections < count) {
          throw new Error(`server reports ${status.initializedConnections} initialized connections, expected ${count}`);
        }
        await sleep(1000);
        const after = rssMiB(server.pid);
        rss.push([after]);
        perConn.push([((after - before) * 1024) / count]);
        log(
          `idle sockets launch ${launch + 1}: ${count} connections in ${(connectMs / 1000).toFixed(1)} s; ` +
            `RSS ${before.toFixed(1)} → ${after.toFixed(1)} MiB`,
        );
      } finally {
        await closeAll(clients);
        await server.close();
      }
    }
    const fewer = count < cfg.idleConnections ? `; only ${count} of ${cfg.idleConnections} opened (open-file limit ${openFileLimit()})` : "";
    return {
      "idle.rss": { ...summarize(rss), note: `${count} connections${fewer}` },
      "idle.per_conn": { ...summarize(perConn), note: "(RSS with them − RSS before) ÷ connections" },
    };
  },
};
