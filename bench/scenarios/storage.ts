/**
 * Storage: ms per message.append into conversations of 100 … 100k records,
 * through the server over the socket (the answer comes once the record is
 * stored). The data dir is prefilled once through the store API (one
 * conversation per size) and copied for each launch. The same template is
 * also measured on the store directly, in this process (bench/store-append.ts).
 */
import { cp, rm } from "node:fs/promises";
import { USER_TEXT, connect } from "../client.js";
import { startServer, tempDir } from "../processes.js";
import type { RowResult } from "../rows.js";
import { median, range, summarize } from "../stats.js";
import { benchConversationId, measureStoreAppends, nearlyFullSize, prefillDataDir } from "../store-append.js";
import { launchesText, type Scenario } from "./scenario.js";

const UNUSED_MODEL_URL = "http://127.0.0.1:9/v1";
/** Sizes also measured on the store directly. */
const DIRECT = ["100", "100k", "99k9"];
/** The size sized at run time to leave its last segment nearly full. */
const WORST = "99k9";

export const storage: Scenario = {
  name: "storage",
  rows: [
    "storage.100",
    "storage.1k",
    "storage.10k",
    "storage.100k",
    "storage.99k9",
    "storage.ratio",
    "storage.ratio_worst",
    "storage.direct.100",
    "storage.direct.100k",
    "storage.direct.99k9",
  ],
  describe: (cfg) =>
    `sizes ${cfg.storageSizes.map((s) => s.records).join(" / ")} records of ~300 B, one conversation each in one data dir; ` +
    `a turn = ${cfg.appendsPerTurn} awaited message.append, measured turns round-robin over the sizes; ${launchesText(cfg)} per size`,
  async run({ cfg, log }) {
    // The worst case: its last segment nearly full through every append of a launch (warm-up and measured turns).
    const worstCase = await nearlyFullSize(cfg.storageSizes.find((s) => s.id === WORST)!.records, (cfg.warmup + cfg.turns) * cfg.appendsPerTurn);
    const sizes = cfg.storageSizes.map((s) => (s.id === WORST ? { ...s, records: worstCase.records } : s));
    log(`storage: ${worstCase.perSegment} records of ~300 B per segment; the worst case holds ${worstCase.records} records`);
    const template = await tempDir("storage-template");
    const socket = new Map<string, number[][]>(sizes.map((s) => [s.id, []]));
    const direct = new Map<string, number[][]>(DIRECT.map((id) => [id, []]));
    try {
      const t0 = performance.now();
      await prefillDataDir(template, sizes.map((s) => s.records));
      log(`storage: prefilled ${sizes.map((s) => s.records).join(" + ")} records in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

      for (let launch = 0; launch < cfg.launches; launch++) {
        const dataDir = await tempDir("storage");
        try {
          await cp(template, dataDir, { recursive: true });
          const server = await startServer(UNUSED_MODEL_URL, { dataDir });
          try {
            const client = await connect(server.url);
            const appendTurn = async (records: number) => {
              const conversationId = benchConversationId(records);
              const t = performance.now();
              for (let i = 0; i < cfg.appendsPerTurn; i++) {
                await client.message.append({ conversationId, role: "user", content: USER_TEXT });
              }
              return (performance.now() - t) / cfg.appendsPerTurn;
            };
            // Warm-up turns first (they also load each conversation), then the
            // measured turns round-robin over the sizes, so no size is favoured
            // by coming later in the launch.
            for (let i = 0; i < cfg.warmup; i++) for (const size of sizes) await appendTurn(size.records);
            const perTurn = new Map<string, number[]>(sizes.map((s) => [s.id, []]));
            for (let t = 0; t < cfg.turns; t++) {
              for (const size of sizes) perTurn.get(size.id)!.push(await appendTurn(size.records));
            }
            for (const size of sizes) {
              socket.get(size.id)!.push(perTurn.get(size.id)!);
              log(`storage launch ${launch + 1} @${size.records}: ${perTurn.get(size.id)!.map((ms) => ms.toFixed(3)).join(", ")} ms/append`);
            }
            await client.close();
          } finally {
            await server.close();
          }
        } finally {
          await rm(dataDir, { recursive: true, force: true });
        }
        for (const id of DIRECT) {
          const size = sizes.find((s) => s.id === id)!;
          const result = await measureStoreAppends(template, size.records, {
            warmup: cfg.appendsPerTurn,
            appends: cfg.turns * cfg.appendsPerTurn,
          });
          direct.get(id)!.push(result.times);
          log(`store direct launch ${launch + 1} @${size.records}: median ${median(result.times).toFixed(3)} ms/append, load ${result.loadMs.toFixed(0)} ms`);
        }
      }
    } finally {
      await rm(template, { recursive: true, force: true });
    }

    const out: Record<string, RowResult> = {};
    for (const size of sizes) {
      // The smoke run uses smaller stand-ins (config.ts); say so beside the row's label.
      const standIn = cfg.mode === "smoke" ? { note: `smoke run: ${size.records} records stand in` } : {};
      out[`storage.${size.id}`] = { ...summarize(socket.get(size.id)!), ...standIn };
    }
    // Per launch: its median at this size ÷ its median at 100; the row is the median over launches.
    const ratioRow = (id: string): RowResult => {
      const base = socket.get("100")!;
      const other = socket.get(id)!;
      const perLaunch = base.map((samples, i) => median(other[i]) / median(samples));
      const pooled = out[`storage.${id}`].median! / out["storage.100"].median!;
      return {
        median: median(perLaunch),
        spread: range(perLaunch),
        n: `${perLaunch.length} launch${perLaunch.length === 1 ? "" : "es"}`,
        note: `per launch: median ms/append at this size ÷ at 100 records; pooled medians give ${pooled.toFixed(2)}×`,
      };
    };
    out["storage.ratio"] = ratioRow("100k");
    const worst = ratioRow("99k9");
    out["storage.ratio_worst"] = {
      ...worst,
      note: `${worst.note}; ${worstCase.records} records: the last segment (${worstCase.perSegment} records when full) nearly full through the launch (worst case of a segmented store)`,
    };
    for (const id of DIRECT) out[`storage.direct.${id}`] = { ...summarize(direct.get(id)!), note: "store API in the driver process, no socket" };
    return out;
  },
};
