/**
 * Cold start: ms from spawn() to the "agentwire listening" line, each launch
 * on a fresh data dir. Floor: a bare `node -e` that prints one line.
 */
import { startBareNode, startServer } from "../processes.js";
import { summarize } from "../stats.js";
import type { Scenario } from "./scenario.js";

/** The server never calls the model here; any URL will do. */
const UNUSED_MODEL_URL = "http://127.0.0.1:9/v1";

export const coldStart: Scenario = {
  name: "cold start",
  rows: ["cold.start"],
  describe: (cfg) => `1 warm-up + ${cfg.coldStarts} launches, fresh data dir each; floor: bare node -e`,
  async run({ cfg, log }) {
    const server: number[][] = [];
    const floor: number[][] = [];
    for (let i = 0; i <= cfg.coldStarts; i++) {
      const bare = await startBareNode();
      await bare.stop();
      const launched = await startServer(UNUSED_MODEL_URL);
      await launched.close();
      log(`cold start ${i === 0 ? "warm-up" : i}: ${launched.startMs.toFixed(1)} ms (bare node ${bare.startMs.toFixed(1)} ms)`);
      if (i === 0) continue;
      server.push([launched.startMs]);
      floor.push([bare.startMs]);
    }
    const s = summarize(server);
    const f = summarize(floor);
    return { "cold.start": { ...s, floor: f.median, floorSpread: f.spread } };
  },
};
