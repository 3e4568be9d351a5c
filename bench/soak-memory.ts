/**
 * `npm run soak` — can a client grow the server's memory without bound with
 * valid requests? (issue 7, item 1: every 4 MB append grew RSS by about
 * 8 MB until the process died of heap exhaustion after about 2 GB.)
 *
 * One real `agentwire serve` process (the bundle, default limits, its own
 * temp data dir) takes 2 GB of valid appends: `message.append` of
 * 1,000,000-character user messages (under the default 1 MiB limit), round
 * robin over 200 conversations that the driver's one connection subscribes
 * to, so every append also goes out as a ~1 MB `message_added` frame, which
 * the driver reads. The server's RSS (/proc/PID/status VmRSS) is read after
 * every append and every 50 ms; `server.status` heapUsed at every table row.
 * The run fails (exit 1) when RSS passes the ceiling.
 *
 *   npm run soak                          2 GB (2000 appends), a few minutes
 *   npm run soak -- --quick               200 MB
 *   npm run soak -- --mb 500              any size
 *   npm run soak -- --capped-heap 256     also a leg with --max-old-space-size=256 (the live set must fit)
 *   npm run soak -- --baseline PATH/dist/bundle/cli.cjs --baseline-label c397f4c --baseline-mb 300
 *                                         also a leg on another build (the code before the fix), not held to the ceiling
 *   npm run soak -- --write               put the section into bench/RESULTS.md (kept there by npm run bench)
 *
 * Legs run one after the other in the same run; the table puts them side by side.
 */
import { existsSync, readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { totalmem } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { getHeapStatistics } from "node:v8";
import { RawClient } from "./raw-client.js";
import { ROOT, SERVER_ENTRY, rssMiB, sleep, startServer, stopAll, type ServerProcess } from "./processes.js";
import { loadAverage, machine, replaceSoakSection, type Machine } from "./report.js";

const MiB = 1024 * 1024;
const UNUSED_MODEL_URL = "http://127.0.0.1:9/v1";
/** Characters of each appended message: ASCII, so also its UTF-8 bytes; the default maxMessageBytes is 1 MiB. */
const MESSAGE_CHARS = 1_000_000;
/**
 * RSS ceiling of the server over the whole run, MiB (the reasoning is
 * CEILING_REASON, printed with every run and written to RESULTS.md).
 */
const CEILING_MIB = 1024;
/** A leg ends when its server's RSS passes this (the old code grows without bound; this machine has 24 GB). */
const SAFETY_MIB = 4096;
const CEILING_REASON =
  "what the server keeps alive is bounded: the replay logs (64 MiB across all conversations), the store's segment cache " +
  "(64 MiB), the process at rest (~70 MiB RSS) and the frames in flight (a few MiB). A leg with --max-old-space-size=256 (--capped-heap 256) " +
  "shows that this live set fits: heapUsed at most ~200 MiB and RSS under 300 MiB through all 2 GB. With the default heap " +
  "limit V8 lets old space grow to a few times the live heap before a full collection, so RSS rises and falls between " +
  "~250 and ~670 MiB (peaks of 667 and 668 MiB in the two 2 GB runs made to choose the ceiling): garbage not yet " +
  "collected, not growth. The ceiling allows V8's largest heap growing factor (4x) over a ~200 MiB live heap (~800 MiB) " +
  "plus ~100 MiB outside the heap, rounded up to 1 GiB: about 1.5x the highest measured peak. The old code, at 2.2-2.4 bytes " +
  "of RSS per byte appended, passes it after about 400 MB of appends";

interface Sample {
  appends: number;
  rssMiB: number;
  heapUsedMiB: number;
}

interface LegSpec {
  name: string;
  /** Server bundle to run. */
  entry: string;
  nodeArgs: string[];
  appends: number;
  /** Held to the ceiling. */
  checked: boolean;
}

interface LegResult {
  spec: LegSpec;
  samples: Sample[];
  peakRssMiB: number;
  peakAtAppends: number;
  peakHeapUsedMiB: number;
  /** RSS and heapUsed 5 s after the last append. */
  settled: Sample | undefined;
  startRssMiB: number;
  seconds: number;
  appended: number;
  notificationsRead: number;
  bytesRead: number;
  recordsStored: number | undefined;
  error?: string;
}

function message(n: number): string {
  const head = `soak append ${n}: `;
  return head + "lorem ipsum dolor sit amet, consectetur adipiscing elit. ".repeat(Math.ceil(MESSAGE_CHARS / 57)).slice(0, MESSAGE_CHARS - head.length);
}

/** The leg's server, so an interrupted run still stops it and removes its data dir (up to 2 GB). */
let running: ServerProcess | undefined;

async function runLeg(spec: LegSpec, opts: { conversations: number; every: number; safetyMiB: number }, log: (line: string) => void): Promise<LegResult> {
  const result: LegResult = {
    spec,
    samples: [],
    peakRssMiB: 0,
    peakAtAppends: 0,
    peakHeapUsedMiB: 0,
    settled: undefined,
    startRssMiB: 0,
    seconds: 0,
    appended: 0,
    notificationsRead: 0,
    bytesRead: 0,
    recordsStored: undefined,
  };
  let server: ServerProcess | undefined;
  let client: RawClient | undefined;
  let sampler: NodeJS.Timeout | undefined;
  const t0 = performance.now();
  try {
    server = await startServer(UNUSED_MODEL_URL, { entry: spec.entry, nodeArgs: spec.nodeArgs, extraArgs: ["--log-level", "warn"] });
    running = server;
    const pid = server.pid;
    const readRss = () => {
      let rss: number;
      try {
        rss = rssMiB(pid);
      } catch {
        return 0; // gone: the append that follows fails and says so
      }
      if (rss > result.peakRssMiB) {
        result.peakRssMiB = rss;
        result.peakAtAppends = result.appended;
      }
      return rss;
    };
    sampler = setInterval(readRss, 50);
    client = await RawClient.connect(server.url, "agentwire-soak");
    client.onOther = (m: any) => {
      if (m?.method === "message_added") result.notificationsRead++;
    };
    const ids: string[] = [];
    for (let i = 0; i < opts.conversations; i++) {
      const conversation = await client.request("conversation.create", { title: `soak ${i}` });
      await client.request("conversation.subscribe", { conversationId: conversation.id });
      ids.push(conversation.id);
    }
    await sleep(500);
    const sample = async (): Promise<Sample> => {
      const status = await client!.request("server.status", {});
      const s = { appends: result.appended, rssMiB: readRss(), heapUsedMiB: status.memory.heapUsed / MiB };
      result.peakHeapUsedMiB = Math.max(result.peakHeapUsedMiB, s.heapUsedMiB);
      return s;
    };
    const first = await sample();
    result.startRssMiB = first.rssMiB;
    result.samples.push(first);
    const every = opts.every;
    log(`${spec.name}: ${opts.conversations} conversations subscribed; RSS ${first.rssMiB.toFixed(1)} MiB, heapUsed ${first.heapUsedMiB.toFixed(1)} MiB`);
    for (let n = 0; n < spec.appends; n++) {
      await client.request("message.append", { conversationId: ids[n % ids.length], role: "user", content: message(n) });
      result.appended++;
      // Past the ceiling the leg goes on (the table shows how far RSS goes); past the safety stop it ends.
      const rss = readRss();
      if (rss > opts.safetyMiB) throw new Error(`RSS ${rss.toFixed(1)} MiB after ${n + 1} appends passed the safety stop of ${opts.safetyMiB} MiB; leg stopped`);
      if ((n + 1) % every === 0 || n + 1 === spec.appends) {
        const s = await sample();
        result.samples.push(s);
        log(
          `${spec.name}: ${((s.appends * MESSAGE_CHARS) / 1e6).toFixed(0)} MB appended: RSS ${s.rssMiB.toFixed(1)} MiB, heapUsed ${s.heapUsedMiB.toFixed(1)} MiB ` +
            `(peak RSS ${result.peakRssMiB.toFixed(1)}), ${((performance.now() - t0) / 1000).toFixed(0)} s`,
        );
      }
    }
    // Every append's message_added must have reached the driver.
    for (let i = 0; i < 100 && result.notificationsRead < result.appended; i++) await sleep(50);
    if (result.notificationsRead !== result.appended) {
      throw new Error(`read ${result.notificationsRead} message_added notifications for ${result.appended} appends`);
    }
    const page = await client.request("conversation.list", { limit: 500 });
    result.recordsStored = page.data.reduce((sum: number, c: { recordCount: number }) => sum + c.recordCount, 0);
    if (result.recordsStored !== result.appended) throw new Error(`the server stores ${result.recordsStored} records for ${result.appended} appends`);
    result.seconds = (performance.now() - t0) / 1000;
    await sleep(5000);
    result.settled = await sample();
  } catch (error) {
    result.error = error instanceof Error ? error.message : String(error);
    const stderr = server?.stderr().trim();
    if (stderr) result.error += `; server stderr: ${stderr.slice(-600)}`;
    if (server && (server.child.exitCode !== null || server.child.signalCode !== null)) {
      result.error += ` (server exited: code ${server.child.exitCode}, signal ${server.child.signalCode})`;
    }
    result.seconds = (performance.now() - t0) / 1000;
  } finally {
    if (sampler) clearInterval(sampler);
    if (client) {
      result.bytesRead = client.bytesIn;
      await client.close();
    }
    await server?.close();
    running = undefined;
  }
  return result;
}

const mb = (appends: number) => ((appends * MESSAGE_CHARS) / 1e6).toFixed(0);
const f1 = (v: number | undefined) => (v === undefined ? "" : v.toFixed(1));

/** The side-by-side table: one line per sampled point, a pair of columns per leg. */
function table(legs: LegResult[], markdownTable: boolean): string {
  const points = [...new Set(legs.flatMap((leg) => leg.samples.map((s) => s.appends)))].sort((a, b) => a - b);
  const header = ["appended", ...legs.flatMap((leg) => [`${leg.spec.name}: RSS MiB`, "heapUsed MiB"])];
  const lines = points.map((appends) => [
    `${mb(appends)} MB`,
    ...legs.flatMap((leg) => {
      const s = leg.samples.find((x) => x.appends === appends);
      return [f1(s?.rssMiB), f1(s?.heapUsedMiB)];
    }),
  ]);
  lines.push(["5 s after the last", ...legs.flatMap((leg) => [f1(leg.settled?.rssMiB), f1(leg.settled?.heapUsedMiB)])]);
  lines.push(["peak", ...legs.flatMap((leg) => [`${f1(leg.peakRssMiB)} (at ${mb(leg.peakAtAppends)} MB)`, f1(leg.peakHeapUsedMiB)])]);
  if (markdownTable) {
    return [`| ${header.join(" | ")} |`, `| ${header.map(() => "---").join(" | ")} |`, ...lines.map((l) => `| ${l.join(" | ")} |`)].join("\n");
  }
  const all = [header, ...lines];
  const widths = header.map((_, i) => Math.max(...all.map((l) => l[i].length)));
  const line = (l: string[]) => l.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(" | ");
  return [line(header), widths.map((w) => "-".repeat(w)).join("-+-"), ...lines.map(line)].join("\n");
}

function legLine(leg: LegResult, ceilingMiB: number): string {
  const growth = leg.peakRssMiB - leg.startRssMiB;
  const per = leg.appended ? (growth * MiB) / (leg.appended * MESSAGE_CHARS) : NaN;
  const verdict = leg.error
    ? `FAILED: ${leg.error}`
    : leg.spec.checked
      ? `peak ${leg.peakRssMiB <= ceilingMiB ? "within" : "OVER"} the ceiling of ${ceilingMiB} MiB`
      : "not held to the ceiling";
  return (
    `${leg.spec.name} (${leg.spec.entry === SERVER_ENTRY ? "this checkout's bundle" : leg.spec.entry}${leg.spec.nodeArgs.length ? `, node ${leg.spec.nodeArgs.join(" ")}` : ""}): ` +
    `${mb(leg.appended)} MB in ${leg.appended} appends, ${leg.seconds.toFixed(0)} s; RSS ${leg.startRssMiB.toFixed(1)} → peak ${leg.peakRssMiB.toFixed(1)} MiB ` +
    `(+${growth.toFixed(0)} MiB, ${per.toFixed(2)} bytes of RSS growth per byte appended); heapUsed peak ${leg.peakHeapUsedMiB.toFixed(1)} MiB; ` +
    `${leg.notificationsRead} message_added read (${(leg.bytesRead / 1e6).toFixed(0)} MB received); ${verdict}`
  );
}

function section(legs: LegResult[], info: { machine: Machine; load: [string, string]; ceilingMiB: number; conversations: number; command: string }): string {
  const m = info.machine;
  const main = legs[0];
  return [
    "## Memory soak (`npm run soak`)",
    "",
    `Written by \`${info.command}\`; \`npm run bench\` keeps this section. Issue 7, item 1: RSS after 2 GB of valid appends stays under a stated ceiling.`,
    "",
    `- Code: ${m.code}; Node ${m.node}; ${m.cpu}, ${m.cores} cores; ${m.os}; date ${m.date}`,
    `- Load average (1, 5, 15 min) at start: ${info.load[0]}; at end: ${info.load[1]} (the machine is shared with other work)`,
    `- V8 heap limit of a Node process with default flags on this machine: ${(getHeapStatistics().heap_size_limit / MiB).toFixed(0)} MiB; memory ${(totalmem() / 2 ** 30).toFixed(1)} GiB`,
    `- What: one \`agentwire serve\` process (default limits, its own temp data dir) takes \`message.append\` of ${MESSAGE_CHARS.toLocaleString("en-US")}-character user messages, ` +
      `one after the other, round robin over ${info.conversations} conversations that the driver's connection subscribes to; the driver reads every \`message_added\` frame. ` +
      "RSS is /proc/PID/status VmRSS (read after every append and every 50 ms: the peak), heapUsed is `server.status` memory.heapUsed at each row.",
    "",
    table(legs, true),
    "",
    ...legs.map((leg) => `- ${legLine(leg, info.ceilingMiB)}`),
    "",
    `**Ceiling: ${info.ceilingMiB} MiB** of RSS (\`CEILING_MIB\` in bench/soak-memory.ts; the run exits 1 when a checked leg passes it). Why: ${CEILING_REASON}.`,
    "",
    `**Old code** (before issue 7's fix): issue 7 reported +8 MB of RSS per 4 MB append on one conversation, i.e. about 2 bytes per byte appended: ` +
      `${mb(main.spec.appends)} MB of appends would take about ${((2 * main.spec.appends * MESSAGE_CHARS) / 1e9).toFixed(1)} GB more RSS, and the process died of heap exhaustion after about 2 GB of appends.` +
      legs
        .filter((leg) => !leg.spec.checked)
        .map(
          (leg) =>
            ` The "${leg.spec.name}" leg above measures that code in this run: the bundle \`${leg.spec.entry}\` of a checkout of the commit before the work ` +
            "(`git worktree add <dir> <commit> && cd <dir> && npm ci`, whose prepare script builds it), " +
            `kept to ${mb(leg.spec.appends)} MB because it grows without bound.`,
        )
        .join(""),
    "",
  ].join("\n");
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      quick: { type: "boolean", default: false },
      mb: { type: "string" },
      conversations: { type: "string", default: "200" },
      rows: { type: "string", default: "20" },
      "ceiling-mib": { type: "string" },
      "capped-heap": { type: "string" },
      baseline: { type: "string" },
      "baseline-label": { type: "string" },
      "baseline-mb": { type: "string", default: "300" },
      write: { type: "boolean", default: false },
    },
  });
  const log = (line: string) => process.stderr.write(`[soak] ${line}\n`);
  const totalMb = Number(values.mb ?? (values.quick ? 200 : 2000));
  const conversations = Number(values.conversations);
  const ceilingMiB = Number(values["ceiling-mib"] ?? CEILING_MIB);
  for (const [name, v] of Object.entries({ mb: totalMb, conversations, "ceiling-mib": ceilingMiB })) {
    if (!Number.isFinite(v) || v <= 0) throw new Error(`--${name} must be a positive number`);
  }
  if (!existsSync(SERVER_ENTRY)) throw new Error(`${SERVER_ENTRY} is missing; run npm run build (npm run soak does)`);
  const appendsFor = (megabytes: number) => Math.round((megabytes * 1e6) / MESSAGE_CHARS);
  const specs: LegSpec[] = [{ name: "default limits", entry: SERVER_ENTRY, nodeArgs: [], appends: appendsFor(totalMb), checked: true }];
  if (values["capped-heap"]) {
    const heap = Number(values["capped-heap"]);
    specs.push({ name: `heap ${heap} MiB`, entry: SERVER_ENTRY, nodeArgs: [`--max-old-space-size=${heap}`], appends: appendsFor(totalMb), checked: true });
  }
  if (values.baseline) {
    if (!existsSync(values.baseline)) throw new Error(`--baseline: ${values.baseline} does not exist`);
    specs.push({
      name: `old code${values["baseline-label"] ? ` ${values["baseline-label"]}` : ""}`,
      entry: values.baseline,
      nodeArgs: [],
      appends: appendsFor(Math.min(totalMb, Number(values["baseline-mb"]))),
      checked: false,
    });
  }

  const m = machine();
  const loadStart = loadAverage();
  log(`${specs.map((s) => `${s.name}: ${mb(s.appends)} MB`).join("; ")}; ${conversations} conversations; ceiling ${ceilingMiB} MiB; load ${loadStart}`);
  const legs: LegResult[] = [];
  // Every leg samples at the same points (the main leg's size ÷ rows), so the table lines up.
  const every = Math.max(1, Math.round(specs[0].appends / Number(values.rows)));
  for (const spec of specs) legs.push(await runLeg(spec, { conversations, every, safetyMiB: SAFETY_MIB }, log));
  const loadEnd = loadAverage();

  process.stdout.write(`\nagentwire memory soak — ${m.cpu}, ${m.cores} cores, Node ${m.node}, load ${loadStart} → ${loadEnd}\n\n`);
  process.stdout.write(`${table(legs, false)}\n\n`);
  for (const leg of legs) process.stdout.write(`${legLine(leg, ceilingMiB)}\n`);
  process.stdout.write(`\nCeiling ${ceilingMiB} MiB: ${CEILING_REASON}.\n`);

  if (values.write) {
    const file = join(ROOT, "bench", "RESULTS.md");
    const args = process.argv.slice(2).filter((a) => a !== "--write");
    const command = `npm run soak${args.length ? ` -- ${args.join(" ")}` : ""}`;
    const existing = existsSync(file) ? readFileSync(file, "utf8") : "# agentwire benchmark results\n";
    await writeFile(file, replaceSoakSection(existing, section(legs, { machine: m, load: [loadStart, loadEnd], ceilingMiB, conversations, command })));
    log(`wrote the soak section of ${file}`);
  }
  const failed = legs.some((leg) => leg.spec.checked && (leg.error !== undefined || leg.peakRssMiB > ceilingMiB));
  return failed ? 1 : 0;
}

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    void Promise.resolve(running?.close())
      .catch(() => undefined)
      .then(stopAll)
      .then(() => process.exit(130));
  });
}

main().then(
  async (code) => {
    await stopAll();
    process.exit(code);
  },
  async (error) => {
    process.stderr.write(`soak: ${error instanceof Error ? error.stack : String(error)}\n`);
    await stopAll();
    process.exit(1);
  },
);
