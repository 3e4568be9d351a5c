/**
 * `npm run bench` — agentwire against a fake OpenAI server, with the floor
 * (the same driver reading the fake directly) measured in the same run.
 * USAGE below lists the options (`npm run bench -- --help` prints it).
 *
 * Rows go to stdout as each scenario finishes, then the whole table;
 * progress goes to stderr. Exit code 1 when a scenario failed (a missed
 * target is not a failure), 2 for a command line it cannot run.
 */
import { existsSync, readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { configFor, type Mode } from "./config.js";
import { writeCurveCharts } from "./curve-charts.js";
import { acquireShippedBuild } from "../test/harness/shipped-bundle.js";
import { closeFloorAgent } from "./floor.js";
import { FAKE_ENTRY, FROM_SOURCE, ROOT, SERVER_ENTRY, setServerEntry, setServerExtraArgs, setServerNodeArgs, stopAll } from "./processes.js";
import { cpuJiffies, loadAverage, machine, markdown, soakSection, textRow, textTable } from "./report.js";
import { ROW_SPECS, type Row } from "./rows.js";
import { attack } from "./scenarios/attack.js";
import { burst } from "./scenarios/burst.js";
import { clusterFanout } from "./scenarios/cluster-fanout.js";
import { coldStart } from "./scenarios/cold-start.js";
import { curveConversations } from "./scenarios/curve-conversations.js";
import { curveStored } from "./scenarios/curve-stored.js";
import { curveSubscribers } from "./scenarios/curve-subscribers.js";
import { fanout } from "./scenarios/fanout.js";
import { features } from "./scenarios/features.js";
import { idleSockets } from "./scenarios/idle-sockets.js";
import { paced } from "./scenarios/paced.js";
import type { Scenario } from "./scenarios/scenario.js";
import { storage } from "./scenarios/storage.js";
import { toolRoundTrip } from "./scenarios/tool.js";
import { turnBurst } from "./scenarios/turn-burst.js";
import { workerWrites } from "./scenarios/worker-writes.js";

const SCENARIOS: Record<string, Scenario> = {
  cold: coldStart,
  burst,
  paced,
  features,
  tool: toolRoundTrip,
  "turn-burst": turnBurst,
  fanout,
  "cluster-fanout": clusterFanout,
  "worker-writes": workerWrites,
  idle: idleSockets,
  attack,
  storage,
  "curve-conversations": curveConversations,
  "curve-subscribers": curveSubscribers,
  "curve-stored": curveStored,
};

const USAGE = `Usage:
  npm run bench                 full run (~15 minutes), writes bench/RESULTS.md
  npm run bench -- --quick      fewer launches and turns (under a minute), prints only
  npm run bench -- --write      also write RESULTS.md from a quick run
  npm run bench -- --only burst,paced   run some scenarios (never writes RESULTS.md unless --write)
  npm run bench -- --only burst --profile /tmp/prof   each server launch runs with --cpu-prof into that dir;
                                summarize with: node dist/bench/profile-summary.js /tmp/prof/<file>.cpuprofile
  npm run bench -- --quick --only fanout --server /tmp/old/dist/bundle/cli.cjs
                                every server launch runs that build instead (before/after on one machine;
                                never writes RESULTS.md)
  npm run bench -- --quick --only fanout --server-config FILE   every server launch also reads --config FILE
  npm run bench -- --quick --only paced --server-node-args="--single-threaded-gc"   node flags for every server launch
  npx tsx bench/run.ts --smoke  tiny run from source, for the smoke test
Scenarios: ${Object.keys(SCENARIOS).join(", ")}
`;

/** The command line's options, or undefined after saying what is wrong with it (or printing the usage it asked for). */
function parseCommandLine() {
  try {
    const { values } = parseArgs({
      options: {
        help: { type: "boolean", short: "h", default: false },
        quick: { type: "boolean", default: false },
        smoke: { type: "boolean", default: false },
        write: { type: "boolean", default: false },
        only: { type: "string" },
        profile: { type: "string" },
        server: { type: "string" },
        "server-config": { type: "string" },
        "server-node-args": { type: "string" },
      },
    });
    if (values.help) process.stdout.write(USAGE);
    return values.help ? undefined : values;
  } catch (error) {
    process.stderr.write(`bench: ${(error as Error).message}\n${USAGE}`);
    process.exitCode = 2;
    return undefined;
  }
}

/** The whole run stops by itself after this long, whatever hangs. */
const RUN_LIMIT_MS: Record<Mode, number> = { full: 30 * 60_000, quick: 6 * 60_000, smoke: 3 * 60_000 };

async function main(): Promise<number> {
  const values = parseCommandLine();
  if (!values) return process.exitCode === 2 ? 2 : 0;
  const mode: Mode = values.smoke ? "smoke" : values.quick ? "quick" : "full";
  const cfg = configFor(mode);
  const only = values.only?.split(",").map((s) => s.trim()).filter(Boolean);
  for (const name of only ?? []) {
    if (SCENARIOS[name]) continue;
    process.stderr.write(`bench: --only: unknown scenario "${name}"; one of ${Object.keys(SCENARIOS).join(", ")}\n`);
    return 2;
  }
  for (const entry of [SERVER_ENTRY, FAKE_ENTRY]) {
    if (!existsSync(entry)) throw new Error(`${entry} is missing; run npm run build (npm run bench does)`);
  }

  if (values.server) {
    const entry = resolve(values.server);
    if (!existsSync(entry)) throw new Error(`--server: ${entry} does not exist`);
    setServerEntry(entry);
  }
  if (values["server-config"]) {
    const file = resolve(values["server-config"]);
    if (!existsSync(file)) throw new Error(`--server-config: ${file} does not exist`);
    setServerExtraArgs(["--config", file]);
  }
  const nodeArgs = values["server-node-args"]?.split(" ").filter(Boolean) ?? [];
  if (values.profile) {
    const dir = resolve(values.profile);
    await mkdir(dir, { recursive: true });
    nodeArgs.push("--cpu-prof", `--cpu-prof-dir=${dir}`);
  }
  if (nodeArgs.length > 0) setServerNodeArgs(nodeArgs);
  const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);
  // The shipped bundle must not be rebuilt under the servers this run starts (a test run's global setup
  // would replace its chunks mid-run): held until the process exits, whichever way.
  if (!FROM_SOURCE && !values.server) {
    const release = await acquireShippedBuild(ROOT);
    process.once("exit", release);
  }
  const started = performance.now();
  const limit = setTimeout(() => {
    log(`run limit of ${RUN_LIMIT_MS[mode] / 1000} s reached; stopping`);
    void stopAll().then(() => process.exit(1));
  }, RUN_LIMIT_MS[mode]);

  const m = machine();
  const loadAtStart = loadAverage();
  const jiffiesAtStart = cpuJiffies();
  log(`${mode} run on ${m.cpu} (${m.cores} cores), Node ${m.node}, code from ${FROM_SOURCE ? "source (tsx)" : "dist/"}`);
  const rows: Row[] = ROW_SPECS.map((spec) => ({ ...spec }));
  const descriptions: { name: string; text: string }[] = [];
  let failed = false;

  for (const [key, scenario] of Object.entries(SCENARIOS)) {
    const text = scenario.describe(cfg);
    descriptions.push({ name: scenario.name, text });
    const mine = rows.filter((row) => scenario.rows.includes(row.id));
    if (only && !only.includes(key)) {
      for (const row of mine) row.error = "not run (--only)";
      continue;
    }
    log(`== ${scenario.name}: ${text}`);
    const t0 = performance.now();
    try {
      const results = await scenario.run({ cfg, log });
      for (const row of mine) {
        const result = results[row.id];
        if (result) Object.assign(row, result);
        else row.error = "no result";
      }
    } catch (error) {
      failed = true;
      const message = error instanceof Error ? error.message : String(error);
      log(`${scenario.name} failed: ${error instanceof Error ? error.stack : message}`);
      for (const row of mine) row.error = message.split("\n")[0].slice(0, 200);
      await stopAll();
    }
    log(`${scenario.name} took ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    process.stdout.write(`${scenario.name} (${text}):\n${mine.map(textRow).join("\n")}\n`);
  }
  clearTimeout(limit);
  const durationS = (performance.now() - started) / 1000;
  const jiffies = cpuJiffies();
  const stealPercent = (100 * (jiffies[1] - jiffiesAtStart[1])) / Math.max(1, jiffies[0] - jiffiesAtStart[0]);

  process.stdout.write(`\nagentwire benchmark, ${mode} run, ${durationS.toFixed(0)} s — ${m.cpu}, ${m.cores} cores, Node ${m.node}\n`);
  process.stdout.write(`${textTable(rows)}\n`);

  // A profiled run is slower than a plain one, and other flags or another build are not what ships: never RESULTS.md.
  if (((mode === "full" && !only) || values.write) && !values.profile && !values.server && !values["server-node-args"]) {
    const file = join(ROOT, "bench", "RESULTS.md");
    const command = `npm run bench${mode === "full" ? "" : ` -- --${mode}`}${values.write ? " --write" : ""}${only ? ` --only ${only.join(",")}` : ""}`;
    const subtitle = `${mode} run of ${m.code}, ${m.date.slice(0, 10)}, ${m.cpu} (${m.cores} cores), Node ${m.node}; bars: min–max over launches`;
    const charts = await writeCurveCharts(rows, join(ROOT, "bench"), subtitle, 1000 / cfg.curveDelayMs);
    log(`wrote ${charts.map((c) => c.path).join(", ")}`);
    const results = markdown(rows, { machine: m, mode, durationS, scenarios: descriptions, command, load: [loadAtStart, loadAverage()], stealPercent, charts });
    // The memory soak's section (npm run soak -- --write) is not this run's: keep it as it was.
    const soak = existsSync(file) ? soakSection(readFileSync(file, "utf8")) : "";
    await writeFile(file, soak ? `${results.trimEnd()}\n\n${soak}\n` : results);
    log(`wrote ${file}`);
  }
  return failed ? 1 : 0;
}

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    void stopAll().then(() => process.exit(130));
  });
}

main().then(
  async (code) => {
    closeFloorAgent();
    await stopAll();
    process.exit(code);
  },
  async (error) => {
    process.stderr.write(`bench: ${error instanceof Error ? error.stack : String(error)}\n`);
    await stopAll();
    process.exit(1);
  },
);
