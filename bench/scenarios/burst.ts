/**
 * Burst: one model answer of N tokens written as fast as the socket takes
 * them (`bench-burst-N`), one fresh conversation per turn. Also the server
 * cost scenario: CPU (utime+stime from /proc) around each turn, RSS idle
 * and after. The floor (the driver reading the fake directly) runs in the
 * same launches.
 */
import { agentTurn, connect, newConversation, type AgentTurn, type FrameCounter } from "../client.js";
import { floorTurn } from "../floor.js";
import { cpuMs, rssMiB, sleep, startBareNode, startBareWsServer, startFake, startServer, startWsConfigFloor } from "../processes.js";
import type { RowResult } from "../rows.js";
import { mean, median, nsToMs, summarize, summarizeWithFloor } from "../stats.js";
import { launchesText, turns, type Scenario } from "./scenario.js";

/**
 * Idle time before each turn (the conversation's creation has settled; the floor's turns wait as long) and
 * after it before its CPU is read, so trailing work (store write, GC) counts.
 */
const SETTLE_MS = 50;

/**
 * A turn's rates. TTFT splits at the first token's stamp (the fake's clock when it wrote it, the same monotonic
 * clock as the driver's): before it, the step's way to the fake and the fake's own time to its first token;
 * after it, the token's way back (through the server, or straight to the floor's driver).
 */
function rates(turn: AgentTurn, expected: number): { tps: number; ttft: number; before: number; after: number } {
  if (turn.tokens !== expected || turn.firstNs === undefined || turn.lastNs === undefined) {
    throw new Error(`turn delivered ${turn.tokens} of ${expected} tokens`);
  }
  const ttft = nsToMs(turn.firstNs - turn.sentNs);
  // latencies[0]: the first token's, taken with the first frame that carried tokens (the one TTFT ends at).
  const after = turn.latencies[0]!;
  return { tps: turn.tokens / (nsToMs(turn.lastNs - turn.sentNs) / 1000), ttft, before: ttft - after, after };
}

export const burst: Scenario = {
  name: "burst + server cost",
  rows: ["burst.tps", "burst.ttft", "burst.ttft_before", "burst.ttft_after", "burst.frames", "burst.scavenges", "cost.cpu", "cost.rss_idle", "cost.rss_bare_ws", "cost.rss_ws_config", "cost.rss_after"],
  describe: (cfg) =>
    `${cfg.burstTokens} tokens, no delay, fresh conversation per turn; ${launchesText(cfg)}, then ${cfg.ttftTurns} more turns per launch and side, floor and agentwire alternated, for TTFT and tokens/s`,
  async run({ cfg, log }) {
    const model = `bench-burst-${cfg.burstTokens}`;
    const fake = await startFake();
    const m = {
      tps: [] as number[][],
      ttft: [] as number[][],
      before: [] as number[][],
      after: [] as number[][],
      frames: [] as number[][],
      scavenges: [] as number[][],
      cpu: [] as number[][],
      rssIdle: [] as number[][],
      rssAfter: [] as number[][],
      floorTps: [] as number[][],
      floorTtft: [] as number[][],
      floorBefore: [] as number[][],
      floorAfter: [] as number[][],
      floorRss: [] as number[][],
      bareWsRss: [] as number[][],
      wsConfigRss: [] as number[][],
    };
    const firstFrame: number[] = [];
    try {
      for (let launch = 0; launch < cfg.launches; launch++) {
        const bare = await startBareNode();
        await sleep(300);
        m.floorRss.push([rssMiB(bare.pid)]);
        await bare.stop();
        // What a Node WebSocket server alone holds (node:http, net, ws loaded and listening): the idle RSS target's context.
        const bareWs = await startBareWsServer();
        await sleep(300);
        m.bareWsRss.push([rssMiB(bareWs.pid)]);
        await bareWs.stop();
        // ... and one that built agentwire's configuration schemas first: what that much of agentwire holds.
        const wsConfig = await startWsConfigFloor();
        await sleep(300);
        m.wsConfigRss.push([rssMiB(wsConfig.pid)]);
        await wsConfig.stop();

        // --trace-gc prints a line per collection (a few dozen per turn: no measurable cost).
        const server = await startServer(fake.url, { nodeArgs: ["--trace-gc"] });
        const scavenges = server.countLines(/Scavenge/);
        try {
          await sleep(300);
          m.rssIdle.push([rssMiB(server.pid)]);
          const counter: FrameCounter = { frames: 0 };
          const client = await connect(server.url, counter);
          const { tools } = await client.tools.list();

          // Each floor turn starts after the same idle pause as agentwire's (below): after one, every process on the
          // path wakes up again (measured: a step's first token ~4 ms later after 100 ms of idle than back to back),
          // and a floor read back to back would leave that to agentwire's side of the ratio alone.
          const floor = await turns(cfg, async () => {
            await sleep(SETTLE_MS);
            return floorTurn(fake.url, model, tools);
          });
          const floorRates = floor.map((t) => rates(t, cfg.burstTokens));
          m.floorTps.push(floorRates.map((r) => r.tps));
          m.floorTtft.push(floorRates.map((r) => r.ttft));
          m.floorBefore.push(floorRates.map((r) => r.before));
          m.floorAfter.push(floorRates.map((r) => r.after));

          const measured = await turns(cfg, async () => {
            const conversationId = await newConversation(client);
            await sleep(SETTLE_MS);
            const frames0 = counter.frames;
            const cpu0 = cpuMs(server.pid);
            const gc0 = scavenges();
            const turn = await agentTurn(client, conversationId, model);
            await sleep(SETTLE_MS);
            const cpu = cpuMs(server.pid) - cpu0;
            const frames = counter.frames - frames0;
            const perThousand = ((scavenges() - gc0) * 1000) / turn.tokens;
            return { ...rates(turn, cfg.burstTokens), frames: frames / turn.tokens, cpu, scavenges: perThousand, firstFrameTokens: turn.firstFrameTokens };
          });
          m.tps.push(measured.map((r) => r.tps));
          m.ttft.push(measured.map((r) => r.ttft));
          m.before.push(measured.map((r) => r.before));
          m.after.push(measured.map((r) => r.after));
          m.frames.push(measured.map((r) => r.frames));
          m.scavenges.push(measured.map((r) => r.scavenges));
          firstFrame.push(...measured.map((r) => r.firstFrameTokens));
          // /proc counts in clock ticks (10 ms): the launch's figure is its turns' mean.
          m.cpu.push([mean(measured.map((r) => r.cpu))]);
          m.rssAfter.push([rssMiB(server.pid)]);
          // TTFT's own turns (after RSS was read), a floor turn then agentwire's each time, after the same idle pause (see ttftTurns).
          // They are whole burst turns: their tokens/s join the row too (90 turns per side in a full run, not 15).
          // The 5 burst turns of each side run as a block, the floor's first, while the driver's code for it is
          // still cold (measured: a launch's first floor turns at 57k and 109k tok/s, its later ones 127k–190k).
          const ttftOnly = { agentwire: [] as ReturnType<typeof rates>[], floor: [] as ReturnType<typeof rates>[] };
          for (let i = 0; i < cfg.ttftTurns; i++) {
            await sleep(SETTLE_MS);
            ttftOnly.floor.push(rates(await floorTurn(fake.url, model, tools), cfg.burstTokens));
            const conversationId = await newConversation(client);
            await sleep(SETTLE_MS);
            ttftOnly.agentwire.push(rates(await agentTurn(client, conversationId, model), cfg.burstTokens));
          }
          m.floorTtft[m.floorTtft.length - 1]!.push(...ttftOnly.floor.map((r) => r.ttft));
          m.ttft[m.ttft.length - 1]!.push(...ttftOnly.agentwire.map((r) => r.ttft));
          m.floorBefore[m.floorBefore.length - 1]!.push(...ttftOnly.floor.map((r) => r.before));
          m.floorAfter[m.floorAfter.length - 1]!.push(...ttftOnly.floor.map((r) => r.after));
          m.before[m.before.length - 1]!.push(...ttftOnly.agentwire.map((r) => r.before));
          m.after[m.after.length - 1]!.push(...ttftOnly.agentwire.map((r) => r.after));
          m.floorTps[m.floorTps.length - 1]!.push(...ttftOnly.floor.map((r) => r.tps));
          m.tps[m.tps.length - 1]!.push(...ttftOnly.agentwire.map((r) => r.tps));
          log(
            `burst launch ${launch + 1}: ${measured.map((r) => `${Math.round(r.tps)} tok/s ttft ${r.ttft.toFixed(2)} ms (${r.firstFrameTokens} tok in 1st frame) cpu ${r.cpu.toFixed(0)} ms`).join("; ")}` +
              ` | floor ${floorRates.map((r) => Math.round(r.tps)).join(", ")} tok/s` +
              ` | ${cfg.ttftTurns} TTFT turns: median ${median(ttftOnly.agentwire.map((r) => r.ttft)).toFixed(2)} ms, floor ${median(ttftOnly.floor.map((r) => r.ttft)).toFixed(2)} ms` +
              `, ${Math.round(median(ttftOnly.agentwire.map((r) => r.tps)))} tok/s, floor ${Math.round(median(ttftOnly.floor.map((r) => r.tps)))} tok/s`,
          );
          await client.close();
        } finally {
          await server.close();
        }
      }
    } finally {
      await fake.stop();
    }
    const withFloor = (value: number[][], floor: number[][]): RowResult => summarizeWithFloor(value, floor);
    return {
      "burst.tps": {
        ...withFloor(m.tps, m.floorTps),
        note: `every turn's: the burst turns' and the ${cfg.ttftTurns} TTFT turns per launch and side (whole ${cfg.burstTokens}-token turns, floor and agentwire alternated)`,
      },
      "burst.ttft": {
        ...withFloor(m.ttft, m.floorTtft),
        note:
          `every turn's TTFT: the burst turns' and ${cfg.ttftTurns} more per launch and side, each after the 50 ms idle pause (floor and agentwire alternated); ` +
          `tokens carried by the first generation_progress frame: median ${median(firstFrame)}, max ${Math.max(...firstFrame)}`,
      },
      "burst.ttft_before": {
        ...withFloor(m.before, m.floorBefore),
        note: "the same turns as TTFT's, split at the first token's stamp: the step through the server to the fake, and the fake's own time to its first token (the floor: its request straight to the fake)",
      },
      "burst.ttft_after": {
        ...withFloor(m.after, m.floorAfter),
        note: "the same turns, from the first token's stamp to the arrival of the frame that carried it: through the server (the floor: straight from the fake)",
      },
      "burst.frames": { ...summarize(m.frames), note: "every WebSocket frame received during the turn ÷ tokens" },
      "burst.scavenges": { ...summarize(m.scavenges), note: "Scavenge lines of the server's --trace-gc during the turn, per 1000 tokens delivered" },
      "cost.cpu": { ...summarize(m.cpu), note: "per launch: mean of its measured turns (/proc ticks are 10 ms)" },
      "cost.rss_idle": { ...withFloor(m.rssIdle, m.floorRss), note: "floor: a bare node process" },
      "cost.rss_bare_ws": { ...withFloor(m.bareWsRss, m.floorRss), note: "node -e with ws's WebSocketServer listening on 127.0.0.1, no connection" },
      "cost.rss_ws_config": {
        ...withFloor(m.wsConfigRss, m.floorRss),
        note: "bench/ws-config-floor.ts bundled like the bin: ws's WebSocketServer listening after building protocol/config.ts's zod schemas and parsing {} with them",
      },
      "cost.rss_after": summarize(m.rssAfter),
    };
  },
};
