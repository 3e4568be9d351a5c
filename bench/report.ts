/** The result table, for the terminal and for bench/RESULTS.md. */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { cpus } from "node:os";
import { ROOT } from "./processes.js";
import { met, ratio, type Row } from "./rows.js";

export interface Machine {
  /** Commit measured, with "+ uncommitted changes" when the work tree differs. */
  code: string;
  cpu: string;
  cores: number;
  node: string;
  date: string;
  os: string;
}

export function loadAverage(): string {
  try {
    return readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(", ");
  } catch {
    return "unknown";
  }
}

/** Jiffies from the aggregate cpu line of /proc/stat: [total, steal]. */
export function cpuJiffies(): [number, number] {
  try {
    const line = readFileSync("/proc/stat", "utf8").split("\n")[0];
    const fields = line.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal guest guest_nice (guest time is already in user)
    const total = fields.slice(0, 8).reduce((a, b) => a + b, 0);
    return [total, fields[7] ?? 0];
  } catch {
    return [0, 0];
  }
}

export function machine(): Machine {
  let cpu = cpus()[0]?.model ?? "unknown";
  try {
    const match = /^model name\s*:\s*(.+)$/m.exec(readFileSync("/proc/cpuinfo", "utf8"));
    if (match) cpu = match[1].trim();
  } catch {
    // not Linux: os.cpus() it is
  }
  let os = `${process.platform} ${process.arch}`;
  try {
    os = `${readFileSync("/proc/sys/kernel/ostype", "utf8").trim()} ${readFileSync("/proc/sys/kernel/osrelease", "utf8").trim()} ${process.arch}`;
  } catch {
    // keep the short form
  }
  return { code: codeVersion(), cpu, cores: cpus().length, node: process.version, date: new Date().toISOString(), os };
}

function codeVersion(): string {
  try {
    const git = (...args: string[]) => execFileSync("git", args, { cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
    const head = git("rev-parse", "--short", "HEAD");
    // RESULTS.md and the charts are what the runs write (the bench and the soak each keep the other's part): not code.
    const dirty = git("status", "--porcelain", "--", "src", "protocol", "clients", "test/fake-openai", "bench", ":(exclude)bench/RESULTS.md", ":(exclude)bench/charts") !== "";
    return `${head}${dirty ? " + uncommitted changes" : ""}`;
  } catch {
    return "unknown (not a git checkout)";
  }
}

export function formatValue(value: number | undefined, unit: string): string {
  if (value === undefined || Number.isNaN(value)) return "—";
  if (unit === "tok/s") return Math.round(value).toLocaleString("en-US");
  if (unit === "×") return value.toFixed(2);
  if (unit === "frames/tok") return value.toFixed(3);
  if (unit === "MiB" || unit === "KiB") return value.toFixed(1);
  const abs = Math.abs(value);
  if (abs < 1) return value.toFixed(3);
  if (abs < 10) return value.toFixed(2);
  if (abs < 100) return value.toFixed(1);
  return value.toFixed(0);
}

function withUnit(value: number | undefined, unit: string): string {
  return unit === "×" ? `${formatValue(value, unit)}×` : `${formatValue(value, unit)} ${unit}`;
}

function spreadText(spread: [number, number] | undefined, unit: string): string {
  if (!spread) return "—";
  return `${formatValue(spread[0], unit)}–${formatValue(spread[1], unit)}`;
}

function statusText(row: Row): string {
  if (row.error) return "ERROR";
  const ok = met(row);
  if (ok === undefined) return row.target ? "—" : "";
  return ok ? "met" : "MISSED";
}

interface Cells {
  scenario: string;
  figure: string;
  median: string;
  spread: string;
  n: string;
  floor: string;
  ratio: string;
  target: string;
  status: string;
}

function cells(row: Row): Cells {
  const r = ratio(row);
  return {
    scenario: row.scenario,
    figure: row.label,
    median: row.error ? `error: ${row.error}` : withUnit(row.median, row.unit),
    spread: row.error ? "" : spreadText(row.spread, row.unit),
    n: row.n ?? "",
    floor: row.floor === undefined ? "" : withUnit(row.floor, row.unit),
    ratio: r === undefined ? "" : `${r.toFixed(2)}×`,
    target: row.target?.text ?? "",
    status: statusText(row),
  };
}

const HEADERS: Cells = {
  scenario: "scenario",
  figure: "figure",
  median: "median",
  spread: "spread (launches)",
  n: "n",
  floor: "floor",
  ratio: "÷ floor",
  target: "target",
  status: "status",
};

const COLUMNS = Object.keys(HEADERS) as (keyof Cells)[];

/** One aligned text line per row (the smoke test looks for each label). */
export function textTable(rows: Row[]): string {
  const all = [HEADERS, ...rows.map(cells)];
  const widths = COLUMNS.map((c) => Math.max(...all.map((line) => line[c].length)));
  const line = (cellsOf: Cells) => COLUMNS.map((c, i) => cellsOf[c].padEnd(widths[i])).join(" | ").trimEnd();
  const rule = widths.map((w) => "-".repeat(w)).join("-+-");
  return [line(HEADERS), rule, ...all.slice(1).map(line)].join("\n");
}

export function textRow(row: Row): string {
  const c = cells(row);
  const extra = [c.spread && c.spread !== "—" ? `spread ${c.spread}` : "", c.n ? `n ${c.n}` : "", c.floor ? `floor ${c.floor} (${c.ratio})` : "", c.target ? `target ${c.target}: ${c.status}` : ""]
    .filter(Boolean)
    .join(", ");
  return `  ${row.scenario}: ${row.label}: ${c.median}${extra ? ` (${extra})` : ""}`;
}

function escapeCell(text: string): string {
  return text.replace(/\|/g, "\\|");
}

export function markdown(
  rows: Row[],
  info: {
    machine: Machine;
    mode: string;
    durationS: number;
    scenarios: { name: string; text: string }[];
    command: string;
    /** /proc/loadavg at the start and the end of the run. */
    load: [string, string];
    /** Share of CPU time stolen by the hypervisor during the run, %. */
    stealPercent: number;
    /** The curves' charts (bench/curve-charts.ts), paths relative to bench/. */
    charts?: { title: string; path: string }[];
  },
): string {
  const m = info.machine;
  const body = rows.map((row) => `| ${COLUMNS.map((c) => escapeCell(cells(row)[c])).join(" | ")} |`);
  const byNote = new Map<string, Row[]>();
  for (const row of rows) if (row.note) byNote.set(row.note, [...(byNote.get(row.note) ?? []), row]);
  const notes = [...byNote].map(([note, of]) => `- **${of.map((row) => `${row.scenario} — ${row.label}`).join("; ")}**: ${note}`);
  const missed = rows.filter((row) => met(row) === false);
  return [
    "# agentwire benchmark results",
    "",
    `Written by \`${info.command}\` (${info.mode} run, ${info.durationS.toFixed(0)} s). Do not edit by hand: run \`npm run bench\` again.`,
    "",
    "## Machine",
    "",
    `- Code: ${m.code}`,
    `- CPU: ${m.cpu}, ${m.cores} cores`,
    `- OS: ${m.os}`,
    `- Node: ${m.node}`,
    `- Date: ${m.date}`,
    `- Load average (1, 5, 15 min) at start: ${info.load[0]}; at end: ${info.load[1]} (the benchmark itself adds up to ~2)`,
    `- CPU time stolen by the hypervisor during the run: ${info.stealPercent.toFixed(1)} %`,
    "",
    "## How it is measured",
    "",
    "Three processes on 127.0.0.1: the fake OpenAI server (`dist/test/fake-openai/main.js`), `agentwire serve --port 0 --data-dir <tmp>`",
    "(`dist/bundle/cli.cjs`, the bundle `npm start` runs, a new process per launch), and the driver (this benchmark, with the generated TypeScript client over `ws`).",
    "The fake stamps every token with `process.hrtime.bigint()` when it writes it; the driver takes the same clock when a frame arrives (ws's `message` event, before anything parses it: agentwire's frames as the floors'; what the generated client then spends parsing and dispatching a frame is the driver's, shown in its own `paced` row).",
    "The **floor** is the same driver reading the fake directly (POST /v1/chat/completions with the body agentwire sends, SSE parsed),",
    "measured in the same launches (in the burst rows each of its turns, like each of agentwire's, starts after a 50 ms idle pause), unless the row names another: the fan-out rows' floor is the **bare relay** (`bench/relay.ts`: a Node process",
    "reading the same streams from the fake with node:http and writing each delta as one ws text frame to each subscriber, no protocol, no storage),",
    "the start rows' floor is bare node. `÷ floor` is the median divided by the floor's median.",
    "",
    "**median** pools every measured sample of every launch; **spread** is the min–max of the per-launch figures; **n** is launches × samples per launch.",
    "",
    ...info.scenarios.map((s) => `- **${s.name}**: ${s.text}`),
    "",
    "## Results",
    "",
    `| ${COLUMNS.map((c) => HEADERS[c]).join(" | ")} |`,
    `| ${COLUMNS.map(() => "---").join(" | ")} |`,
    ...body,
    "",
    `Targets met: ${rows.filter((row) => met(row) === true).length} of ${rows.filter((row) => row.target).length}.` +
      (missed.length ? ` Missed: ${missed.map((row) => `${row.scenario} — ${row.label}`).join("; ")}.` : ""),
    "",
    ...(info.charts?.length ? ["## Curves", "", ...info.charts.flatMap((c) => [`![${c.title}](${c.path})`, ""])] : []),
    ...(notes.length ? ["## Notes", "", ...notes, ""] : []),
  ].join("\n");
}

/** Marks around the memory soak's section of RESULTS.md (bench/soak-memory.ts writes it; the bench keeps it). */
const SOAK_BEGIN = "<!-- soak:begin (written by npm run soak -- --write; kept by npm run bench) -->";
const SOAK_END = "<!-- soak:end -->";

/** The soak section of a RESULTS.md text, marks included, or "" when it has none. */
export function soakSection(text: string): string {
  const begin = text.indexOf(SOAK_BEGIN);
  const end = text.indexOf(SOAK_END, begin);
  return begin < 0 || end < 0 ? "" : text.slice(begin, end + SOAK_END.length);
}

/** `text` with its soak section replaced by (or, when it has none, followed by) `section` between the marks. */
export function replaceSoakSection(text: string, section: string): string {
  const marked = `${SOAK_BEGIN}\n${section.trimEnd()}\n${SOAK_END}`;
  const old = soakSection(text);
  return old ? text.replace(old, () => marked) : `${text.trimEnd()}\n\n${marked}\n`;
}
