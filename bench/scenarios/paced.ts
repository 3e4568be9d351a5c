/**
 * Paced: N tokens D ms apart (`bench-paced-N-D`). Per token, the latency is
 * its frame's arrival at the driver (bench/client.ts) minus the stamp the fake wrote into the token
 * (both process.hrtime.bigint(), CLOCK_MONOTONIC, system-wide). Percentiles
 * over every measured token of a launch; the floor's own latency alongside.
 */
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { agentTurn, connect, newConversation } from "../client.js";
import { floorTurn, openRelaySocket, relayTurn } from "../floor.js";
import { serverIsThisBuild, startFake, startRelay, startServer, tempDir } from "../processes.js";
import type { RowResult } from "../rows.js";
import { percentile, summarize, summarizeWithFloor } from "../stats.js";
import { launchesText, turns, type Scenario } from "./scenario.js";

export const WARMUP_TOKENS = 20;

export const paced: Scenario = {
  name: "paced",
  rows: [
    "paced.p50",
    "paced.p99",
    "paced.relay_p50",
    "paced.relay_p99",
    "paced.added_p50",
    "paced.added_p99",
    "paced.thread_added_p50",
    "paced.thread_added_p99",
    "paced.scavenges",
    "paced.dispatch_p50",
  ],
  describe: (cfg) =>
    `${cfg.pacedTokens} tokens at ${cfg.pacedDelayMs} ms, fresh conversation per turn; ${launchesText(cfg, cfg.pacedTurns)} (warm-up: ${WARMUP_TOKENS} tokens)`,
  async run({ cfg, log }) {
    const model = `bench-paced-${cfg.pacedTokens}-${cfg.pacedDelayMs}`;
    // The warm-up turn only needs to exercise the path, not to last the full 2 s.
    const warmModel = `bench-paced-${WARMUP_TOKENS}-${cfg.pacedDelayMs}`;
    const schedule = { warmup: cfg.warmup, turns: cfg.pacedTurns };
    const modelOf = (turn: number) => (turn < schedule.warmup ? warmModel : model);
    const fake = await startFake();
    const p50: number[][] = [];
    const p99: number[][] = [];
    const floorP50: number[][] = [];
    const floorP99: number[][] = [];
    const relayP50: number[][] = [];
    const relayP99: number[][] = [];
    const addedP50: number[][] = [];
    const addedP99: number[][] = [];
    const scavenged: number[][] = [];
    const dispatched: number[][] = [];
    const threadAddedP50: number[][] = [];
    const threadAddedP99: number[][] = [];
    // The same turns against a server with server.socketThread: what its thread hop adds to a lone stream.
    const configDir = await tempDir("socket-thread-config");
    const threadConfig = join(configDir, "agentwire.json");
    await writeFile(threadConfig, JSON.stringify({ server: { socketThread: true } }));
    const relay = await startRelay(fake.url);
    try {
      for (let launch = 0; launch < cfg.launches; launch++) {
        const server = await startServer(fake.url, { nodeArgs: ["--trace-gc"] });
        const scavenges = server.countLines(/Scavenge/);
        try {
          const client = await connect(server.url);
          const { tools } = await client.tools.list();
          const floor = (await turns(schedule, (i) => floorTurn(fake.url, modelOf(i), tools))).flatMap((t) => t.latencies);
          const relaySocket = await openRelaySocket(relay.url);
          const relayed = (await turns(schedule, (i) => relayTurn(relaySocket, modelOf(i)))).flatMap((t) => t.latencies);
          relaySocket.close();
          relayP50.push([percentile(relayed, 0.5)]);
          relayP99.push([percentile(relayed, 0.99)]);
          const perThousand: number[] = [];
          const dispatch: number[] = [];
          const measured = await turns(schedule, async (i) => {
            const conversationId = await newConversation(client);
            const gc0 = scavenges();
            const turn = await agentTurn(client, conversationId, modelOf(i));
            if (i < schedule.warmup) return [];
            if (turn.tokens !== cfg.pacedTokens) throw new Error(`turn delivered ${turn.tokens} of ${cfg.pacedTokens} tokens`);
            perThousand.push(((scavenges() - gc0) * 1000) / turn.tokens);
            dispatch.push(...turn.dispatch);
            return turn.latencies;
          });
          const all = measured.flat();
          p50.push([percentile(all, 0.5)]);
          p99.push([percentile(all, 0.99)]);
          // The relay ran in the same launch, just before: the difference is what the protocol adds.
          addedP50.push([percentile(all, 0.5) - percentile(relayed, 0.5)]);
          addedP99.push([percentile(all, 0.99) - percentile(relayed, 0.99)]);
          scavenged.push(perThousand);
          dispatched.push([percentile(dispatch, 0.5)]);
          floorP50.push([percentile(floor, 0.5)]);
          floorP99.push([percentile(floor, 0.99)]);
          log(
            `paced launch ${launch + 1}: p50 ${percentile(all, 0.5).toFixed(3)} p99 ${percentile(all, 0.99).toFixed(3)} ms ` +
              `(${all.length} tokens) | floor p50 ${percentile(floor, 0.5).toFixed(3)} p99 ${percentile(floor, 0.99).toFixed(3)} ms` +
              ` | relay p50 ${percentile(relayed, 0.5).toFixed(3)} p99 ${percentile(relayed, 0.99).toFixed(3)} ms`,
          );
          await client.close();
        } finally {
          await server.close();
        }
        if (!serverIsThisBuild()) continue;
        const threaded = await startServer(fake.url, { extraArgs: ["--config", threadConfig] });
        try {
          const client = await connect(threaded.url);
          const measured = await turns(schedule, async (i) => {
            const turn = await agentTurn(client, await newConversation(client), modelOf(i));
            if (i < schedule.warmup) return [];
            if (turn.tokens !== cfg.pacedTokens) throw new Error(`turn delivered ${turn.tokens} of ${cfg.pacedTokens} tokens`);
            return turn.latencies;
          });
          const all = measured.flat();
          const relayed = { p50: relayP50.at(-1)![0]!, p99: relayP99.at(-1)![0]! };
          threadAddedP50.push([percentile(all, 0.5) - relayed.p50]);
          threadAddedP99.push([percentile(all, 0.99) - relayed.p99]);
          log(`paced launch ${launch + 1} with server.socketThread: p50 ${percentile(all, 0.5).toFixed(3)} p99 ${percentile(all, 0.99).toFixed(3)} ms`);
          await client.close();
        } finally {
          await threaded.close();
        }
      }
    } finally {
      await relay.stop();
      await fake.stop();
      await rm(configDir, { recursive: true, force: true });
    }
    const withFloor = (value: number[][], floor: number[][]): RowResult => summarizeWithFloor(value, floor, "per launch: percentile over every measured token");
    const relayNote = "a bare Node relay (bench/relay.ts: node:http in, ws out, no protocol) between the fake and the driver: what any server in the middle costs here";
    return {
      "paced.p50": withFloor(p50, floorP50),
      "paced.p99": withFloor(p99, floorP99),
      "paced.relay_p50": { ...withFloor(relayP50, floorP50), note: relayNote },
      "paced.relay_p99": { ...withFloor(relayP99, floorP99), note: relayNote },
      "paced.added_p50": { ...summarize(addedP50), note: "per launch: agentwire's p50 minus the bare relay's p50, both measured in that launch" },
      "paced.added_p99": { ...summarize(addedP99), note: "per launch: agentwire's p99 minus the bare relay's p99, both measured in that launch" },
      ...(threadAddedP50.length > 0
        ? {
            "paced.thread_added_p50": {
              ...summarize(threadAddedP50),
              note: "per launch: the p50 of a server with server.socketThread minus the bare relay's p50 of that launch",
            },
            "paced.thread_added_p99": {
              ...summarize(threadAddedP99),
              note: "per launch: the p99 of a server with server.socketThread minus the bare relay's p99 of that launch",
            },
          }
        : {}),
      "paced.scavenges": { ...summarize(scavenged), note: "Scavenge lines of the server's --trace-gc during each measured turn, per 1000 tokens" },
      "paced.dispatch_p50": {
        ...summarize(dispatched),
        note: "per generation_progress frame (median per launch): the generated client's JSON.parse and dispatch in the driver, after the frame's arrival, where every agentwire latency is taken (as the floors take theirs before they parse)",
      },
    };
  },
};
