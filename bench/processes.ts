/**
 * The benchmark's child processes: the fake OpenAI server and `agentwire
 * serve`, each its own process on 127.0.0.1, plus what /proc says about
 * them. Run from dist/ (compiled, `npm run bench`), children run compiled
 * too; run from bench/*.ts under tsx (the smoke test), children run from
 * source with `--import tsx`.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { cleanEnv } from "../test/harness/child-env.js";

const here = fileURLToPath(import.meta.url);
/** True when this file runs as TypeScript source (tsx), false when compiled into dist/. */
export const FROM_SOURCE = here.endsWith(".ts");
/** Repository root. */
export const ROOT = FROM_SOURCE ? resolve(here, "../..") : resolve(here, "../../..");
const CODE = FROM_SOURCE ? ROOT : join(ROOT, "dist");
const EXT = FROM_SOURCE ? "ts" : "js";
const NODE_ARGS = FROM_SOURCE ? ["--import", "tsx"] : [];

/** Compiled runs start the bundled server (dist/bundle, what `npm start` and the `agentwire` bin run). */
export const SERVER_ENTRY = FROM_SOURCE ? join(ROOT, "src", "cli.ts") : join(ROOT, "dist", "bundle", "cli.cjs");
export const FAKE_ENTRY = join(CODE, "test", "fake-openai", `main.${EXT}`);
export const RELAY_ENTRY = join(CODE, "bench", `relay.${EXT}`);
export const ATTACKER_ENTRY = join(CODE, "bench", `attacker.${EXT}`);

export interface Launched {
  child: ChildProcess;
  pid: number;
  /** The capture groups of the awaited line. */
  match: RegExpExecArray;
  /** ms from just before spawn() to the awaited line being read. */
  startMs: number;
  stderr(): string;
  /**
   * Count the stdout lines matching `pattern` from now on (e.g. the
   * `Scavenge` lines of --trace-gc); read the count with the returned function.
   */
  countLines(pattern: RegExp): () => number;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
  stop(graceMs?: number): Promise<void>;
}

const running = new Set<ChildProcess>();

/** Spawn `node [nodeArgs] args…` and resolve once stdout has a line matching `pattern`. */
export function launch(
  args: string[],
  pattern: RegExp,
  options: { env?: Record<string, string>; timeoutMs?: number; nodeArgs?: string[] } = {},
): Promise<Launched> {
  const timeoutMs = options.timeoutMs ?? 20_000;
  const t0 = process.hrtime.bigint();
  // A compiled entry (e.g. the bundle of another checkout) needs no tsx, even in a run from source.
  const loader = /\.(mjs|js)$/.test(args[0] ?? "") ? [] : NODE_ARGS;
  const child = spawn(process.execPath, [...loader, ...(options.nodeArgs ?? []), ...args], {
    cwd: ROOT,
    env: cleanEnv(options.env ?? {}),
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(child);
  let out = "";
  let err = "";
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  void exited.then(() => running.delete(child));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    err = (err + chunk).slice(-8000);
  });
  const stop = async (graceMs = 5000) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
    await exited;
    clearTimeout(timer);
  };
  // Line counters read stdout after the ready line; a partial line waits for its end.
  const counters = new Set<{ pattern: RegExp; count: number }>();
  let partial = "";
  child.stdout!.on("data", (chunk: Buffer | string) => {
    if (counters.size === 0) return;
    const lines = (partial + String(chunk)).split("\n");
    partial = lines.pop()!;
    for (const line of lines) for (const counter of counters) if (counter.pattern.test(line)) counter.count++;
  });
  const countLines = (pattern: RegExp) => {
    const counter = { pattern, count: 0 };
    counters.add(counter);
    return () => counter.count;
  };
  return new Promise<Launched>((resolveLaunch, reject) => {
    let settled = false;
    const fail = (why: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void stop(500);
      reject(new Error(`${args.join(" ")}: ${why}${err ? `; stderr: ${err.trim().slice(-2000)}` : ""}`));
    };
    const timer = setTimeout(() => fail(`no line matching ${pattern} within ${timeoutMs} ms`), timeoutMs);
    child.once("error", (error) => fail(`could not start: ${error.message}`));
    void exited.then(() => fail(`exited (code ${child.exitCode}, signal ${child.signalCode}) before its ready line`));
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      if (settled) return;
      out += chunk;
      const match = pattern.exec(out);
      if (!match) return;
      const startMs = Number(process.hrtime.bigint() - t0) / 1e6;
      settled = true;
      clearTimeout(timer);
      out = "";
      resolveLaunch({ child, pid: child.pid!, match, startMs, stderr: () => err, stop, countLines });
    });
  });
}

export interface FakeProcess extends Launched {
  /** Base URL including /v1. */
  url: string;
}

export async function startFake(): Promise<FakeProcess> {
  const launched = await launch([FAKE_ENTRY, "--port", "0", "--host", "127.0.0.1"], /fake-openai listening on (http:\/\/\S+)\n/);
  return { ...launched, url: launched.match[1] };
}

export interface ServerProcess extends Launched {
  /** ws://127.0.0.1:PORT */
  url: string;
  dataDir: string;
  /** Stops the server and removes its data dir (unless it was given). */
  close(): Promise<void>;
}

/** The server every launch runs unless a scenario names another; `--server` sets it (a before/after comparison). */
let serverEntry = SERVER_ENTRY;
export function setServerEntry(entry: string): void {
  serverEntry = entry;
}
export function currentServerEntry(): string {
  return serverEntry;
}
/**
 * Whether the launches run this checkout's server (no `--server`): the rows of options an older build may not
 * have (server.socketThread) are measured only then, and left without a result otherwise.
 */
export function serverIsThisBuild(): boolean {
  return serverEntry === SERVER_ENTRY;
}

/** Extra Node flags for every server launch (e.g. --cpu-prof), set by `--profile`. */
let serverNodeArgs: string[] = [];
export function setServerNodeArgs(args: string[]): void {
  serverNodeArgs = args;
}

/** Extra `agentwire serve` arguments for every server launch (e.g. --config FILE), set by `--server-config`. */
let serverExtraArgs: string[] = [];
export function setServerExtraArgs(args: string[]): void {
  serverExtraArgs = args;
}

/**
 * `agentwire serve --port 0 --data-dir <dir>` against the fake; a fresh temp data dir unless one is given.
 * `entry` runs another build of the server (e.g. the bundle of an older checkout) instead of SERVER_ENTRY.
 */
export async function startServer(
  fakeUrl: string,
  options: { dataDir?: string; nodeArgs?: string[]; extraArgs?: string[]; entry?: string; env?: Record<string, string> } = {},
): Promise<ServerProcess> {
  const ownDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? (await tempDir("data"));
  try {
    const launched = await launch(
      [options.entry ?? serverEntry, "serve", "--host", "127.0.0.1", "--port", "0", "--data-dir", dataDir, ...serverExtraArgs, ...(options.extraArgs ?? [])],
      /agentwire listening on (ws:\/\/\S+)\n/,
      { env: { OPENAI_BASE_URL: fakeUrl, OPENAI_API_KEY: "bench", ...options.env }, nodeArgs: [...serverNodeArgs, ...(options.nodeArgs ?? [])] },
    );
    return {
      ...launched,
      url: launched.match[1],
      dataDir,
      close: async () => {
        await launched.stop();
        if (ownDir) await rm(dataDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    if (ownDir) await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
}

export interface RelayProcess extends Launched {
  url: string;
}

/** The two-hop floor (bench/relay.ts) in front of the fake. */
export async function startRelay(fakeUrl: string): Promise<RelayProcess> {
  const launched = await launch([RELAY_ENTRY, "--fake", fakeUrl], /relay listening on (ws:\/\/\S+)\n/);
  return { ...launched, url: launched.match[1] };
}

/** A bare Node process that prints a line and idles: the floor for cold start and idle RSS. */
export function startBareNode(env: Record<string, string> = {}): Promise<Launched> {
  return launch(["-e", "console.log('ready'); setInterval(() => {}, 1 << 30);"], /ready\n/, { env });
}

/** A bare ws server (no agentwire) that prints its listening line: the start floor of a Node WebSocket server. */
export function startBareWsServer(): Promise<Launched> {
  return launch(
    [
      "-e",
      "const { WebSocketServer } = require('ws'); const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 }); " +
        "wss.on('listening', () => console.log('listening on ' + wss.address().port));",
    ],
    /listening on \d+\n/,
  );
}

/** The bundle of bench/ws-config-floor.ts, built once per run (see startWsConfigFloor). */
let wsConfigFloorBundle: string | undefined;

/**
 * A ws server that builds agentwire's configuration schemas and parses an
 * empty configuration with them before it listens (bench/ws-config-floor.ts):
 * the start and idle RSS of that much of agentwire on top of a bare ws server.
 * Bundled like the shipped bundle (esbuild, ESM, node20, whitespace and syntax
 * minified, the same createRequire banner), so it loads one file as the bin does.
 */
export async function startWsConfigFloor(): Promise<Launched> {
  if (!wsConfigFloorBundle) {
    const { build } = await import("esbuild");
    const dir = await tempDir("ws-config-floor");
    process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
    const out = join(dir, "ws-config-floor.mjs");
    await build({
      entryPoints: [join(ROOT, "bench", "ws-config-floor.ts")],
      outfile: out,
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      mainFields: ["module", "main"],
      external: ["bufferutil", "utf-8-validate"],
      minifyWhitespace: true,
      minifySyntax: true,
      banner: { js: "import { createRequire as __agentwireRequire } from 'node:module'; const require = __agentwireRequire(import.meta.url);" },
      logLevel: "warning",
    });
    wsConfigFloorBundle = out;
  }
  return launch([wsConfigFloorBundle], /listening on \d+\n/);
}

/**
 * Run `node args…` to its exit, ms from just before spawn() to the exit;
 * rejects when it exits non-zero.
 */
export function runToExit(args: string[], env: Record<string, string> = {}, cwd = ROOT): Promise<{ ms: number; stdout: string }> {
  // tsx by path: `cwd` may be outside the repository; `node -e` (the floor) runs bare.
  const loader = /\.(mjs|js)$/.test(args[0] ?? "") || args[0] === "-e" || !FROM_SOURCE ? [] : ["--import", pathToFileURL(join(ROOT, "node_modules", "tsx", "dist", "loader.mjs")).href];
  const t0 = process.hrtime.bigint();
  const child = spawn(process.execPath, [...loader, ...args], { cwd, env: cleanEnv(env), stdio: ["ignore", "pipe", "pipe"] });
  running.add(child);
  let stdout = "";
  let stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr = (stderr + chunk).slice(-4000)));
  return new Promise((resolveRun, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => {
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      running.delete(child);
      if (code === 0) resolveRun({ ms, stdout });
      else reject(new Error(`node ${args.join(" ")} exited ${code}: ${stderr.slice(-1500)}`));
    });
  });
}

/** Stop every child still running (each by its own pid). */
export async function stopAll(): Promise<void> {
  await Promise.all(
    [...running].map(
      (child) =>
        new Promise<void>((done) => {
          if (child.exitCode !== null || child.signalCode !== null) return done();
          child.once("exit", () => done());
          child.kill("SIGKILL");
        }),
    ),
  );
}

export function tempDir(what: string): Promise<string> {
  return mkdtemp(join(tmpdir(), `agentwire-bench-${what}-`));
}

let clockTicks: number | undefined;
function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

/** CPU time (user + system, all threads) of a process so far, in ms, from /proc/<pid>/stat. */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the command name (which may hold spaces), from field 3 (state) on.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return ((utime + stime) * 1000) / ticksPerSecond();
}

/** Resident set size in MiB, from /proc/<pid>/status VmRSS. */
export function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
  if (!match) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(match[1]) / 1024;
}

/** The soft limit on open files of this process. */
export function openFileLimit(): number {
  try {
    const limits = readFileSync("/proc/self/limits", "utf8");
    const match = /^Max open files\s+(\d+|unlimited)/m.exec(limits);
    if (match) return match[1] === "unlimited" ? Number.MAX_SAFE_INTEGER : Number(match[1]);
  } catch {
    // not Linux: fall through
  }
  return 1024;
}

export const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));
