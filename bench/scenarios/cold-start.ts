/**
 * Cold start: ms from spawn() to the "agentwire listening" line, each launch
 * on a fresh data dir. Floors: a bare `node -e` that prints one line, and a
 * bare ws server that prints its listening line (what any Node WebSocket
 * server pays). Then the one-shot bot command, `agentwire chat "hello"
 * --json` with the server embedded in the command, against the fake: spawn
 * → exit, beside `node -e 0` spawn → exit. And spawn → the first
 * server.status answered (a client connects at the listening line,
 * initializes and asks): work the server puts off until after its listening
 * line shows there, not as a saving.
 *
 * Where this process's environment sets NODE_EXTRA_CA_CERTS, every node
 * process reads and parses that file before any JavaScript runs (Node 20:
 * ~56 ms for Debian's bundle on the 2-core hosts, in the floor as in the
 * server), so the same launches are also made with it unset: what Node's own
 * start is, and the ratio to it.
 */
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { RawClient } from "../raw-client.js";
import { currentServerEntry, runToExit, startBareNode, startBareWsServer, startFake, startServer, startWsConfigFloor, tempDir } from "../processes.js";
import { summarize } from "../stats.js";
import type { Scenario } from "./scenario.js";

/** The server never calls the model here; any URL will do. */
const UNUSED_MODEL_URL = "http://127.0.0.1:9/v1";

export const coldStart: Scenario = {
  name: "cold start",
  rows: ["cold.start", "cold.bare_ws", "cold.ws_config", "cold.start_no_extra_ca", "cold.oneshot", "cold.first_status"],
  describe: (cfg) =>
    `1 warm-up + ${cfg.coldStarts} launches, fresh data dir each; floors: bare node -e, a bare ws server, a ws server building agentwire's configuration schemas; ` +
    `one-shot: agentwire chat "hello" --json (embedded server, the fake's bench-burst-5), spawn → exit, 1 warm-up + ${cfg.coldStarts}, floor node -e 0 to exit; ` +
    `where NODE_EXTRA_CA_CERTS is set, serve and bare node are also launched with it unset`,
  async run({ cfg, log }) {
    const server: number[][] = [];
    const floor: number[][] = [];
    const bareWs: number[][] = [];
    const wsConfig: number[][] = [];
    const firstStatus: number[][] = [];
    // An empty value is unset for node (it reads no file), and cleanEnv passes the rest of the environment as is.
    const noExtraCa = process.env.NODE_EXTRA_CA_CERTS ? { NODE_EXTRA_CA_CERTS: "" } : undefined;
    const serverNoCa: number[][] = [];
    const floorNoCa: number[][] = [];
    for (let i = 0; i <= cfg.coldStarts; i++) {
      const bare = await startBareNode();
      await bare.stop();
      const ws = await startBareWsServer();
      await ws.stop();
      const configured = await startWsConfigFloor();
      await configured.stop();
      const launched = await startServer(UNUSED_MODEL_URL);
      // From the listening line on: connect, initialize, server.status (added to spawn → listening line).
      const listened = process.hrtime.bigint();
      const client = await RawClient.connect(launched.url);
      await client.request("server.status");
      const statusMs = launched.startMs + Number(process.hrtime.bigint() - listened) / 1e6;
      await client.close();
      await launched.close();
      log(
        `cold start ${i === 0 ? "warm-up" : i}: ${launched.startMs.toFixed(1)} ms, first server.status ${statusMs.toFixed(1)} ms ` +
          `(bare node ${bare.startMs.toFixed(1)} ms, bare ws server ${ws.startMs.toFixed(1)} ms, ws server + configuration schemas ${configured.startMs.toFixed(1)} ms)`,
      );
      let withoutCa = "";
      if (noExtraCa) {
        const bareNoCa = await startBareNode(noExtraCa);
        await bareNoCa.stop();
        const serverNoCaLaunch = await startServer(UNUSED_MODEL_URL, { env: noExtraCa });
        await serverNoCaLaunch.close();
        withoutCa = `; NODE_EXTRA_CA_CERTS unset: ${serverNoCaLaunch.startMs.toFixed(1)} ms, bare node ${bareNoCa.startMs.toFixed(1)} ms`;
        if (i > 0) {
          serverNoCa.push([serverNoCaLaunch.startMs]);
          floorNoCa.push([bareNoCa.startMs]);
        }
      }
      if (withoutCa) log(`cold start ${i === 0 ? "warm-up" : i}${withoutCa}`);
      if (i === 0) continue;
      server.push([launched.startMs]);
      firstStatus.push([statusMs]);
      floor.push([bare.startMs]);
      bareWs.push([ws.startMs]);
      wsConfig.push([configured.startMs]);
    }

    const oneShot: number[][] = [];
    const nodeExit: number[][] = [];
    const fake = await startFake();
    const home = await tempDir("oneshot");
    try {
      const cwd = join(home, "work");
      await mkdir(cwd);
      const env = { HOME: home, XDG_DATA_HOME: join(home, "data"), OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: "bench" };
      for (let i = 0; i <= cfg.coldStarts; i++) {
        const bare = await runToExit(["-e", "0"], {}, cwd);
        const chat = await runToExit([currentServerEntry(), "chat", "hello", "--json", "--model", "bench-burst-5"], env, cwd);
        if (!chat.stdout.includes('"type":"end","outcome":"completed"')) throw new Error(`the one-shot chat did not complete: ${chat.stdout.slice(-500)}`);
        log(`one-shot chat ${i === 0 ? "warm-up" : i}: ${chat.ms.toFixed(1)} ms (node -e 0 ${bare.ms.toFixed(1)} ms)`);
        if (i === 0) continue;
        oneShot.push([chat.ms]);
        nodeExit.push([bare.ms]);
      }
    } finally {
      await fake.stop();
      await rm(home, { recursive: true, force: true });
    }
    const f = summarize(floor);
    const e = summarize(nodeExit);
    return {
      "cold.start": { ...summarize(server), floor: f.median, floorSpread: f.spread },
      "cold.bare_ws": { ...summarize(bareWs), floor: f.median, floorSpread: f.spread, note: "a bare ws WebSocketServer on 127.0.0.1 printing its listening line (node -e, no agentwire)" },
      "cold.ws_config": {
        ...summarize(wsConfig),
        floor: f.median,
        floorSpread: f.spread,
        note: "bench/ws-config-floor.ts bundled like the bin: ws's WebSocketServer after building protocol/config.ts's zod schemas and parsing {} with them",
      },
      ...(noExtraCa
        ? {
            "cold.start_no_extra_ca": {
              ...summarize(serverNoCa),
              floor: summarize(floorNoCa).median,
              floorSpread: summarize(floorNoCa).spread,
              note: "the same launches with NODE_EXTRA_CA_CERTS set empty for the server and for bare node (this environment sets it: each node process otherwise reads and parses that file before any JavaScript runs)",
            },
          }
        : {}),
      "cold.first_status": { ...summarize(firstStatus), floor: f.median, floorSpread: f.spread, note: "connect + initialize + server.status at the listening line, timed from spawn" },
      "cold.oneshot": {
        ...summarize(oneShot),
        floor: e.median,
        floorSpread: e.spread,
        note: "one data dir for the runs (created by the warm-up); floor: node -e 0, spawn → exit, same iterations",
      },
    };
  },
};
