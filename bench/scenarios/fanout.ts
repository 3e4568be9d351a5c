/**
 * Fan-out: many conversations streaming paced answers at once, each watched
 * by several connections (the first of them sends step), at every level of
 * cfg.fanoutLevels (100 × 3, 300 × 1, 500 × 1). Per-token latency at every
 * subscriber and delivered tokens/s against the paced ideal. Floor: the bare
 * relay (bench/relay.ts) reading the same C streams from the fake and writing
 * each delta as one WebSocket frame to each of its S subscribers, measured in
 * the same launch just before — the best a Node process in the middle does
 * on this machine.
 */
import { readFileSync } from "node:fs";
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { WebSocket } from "ws";
import { closeAll, connectMany, watchGeneration, type AgentwireClient } from "../client.js";
import { USER_TEXT } from "../client.js";
import { FANOUT_LEVEL_IDS, type FanoutLevel } from "../config.js";
import { joinRelayGroup, openRelaySocket, relayFanoutTurn } from "../floor.js";
import { cpuMs, serverIsThisBuild, startFake, startRelay, startServer, tempDir, type FakeProcess } from "../processes.js";
import type { RowResult } from "../rows.js";
import { percentile, summarizeWithFloor } from "../stats.js";
import { WARMUP_TOKENS } from "./paced.js";
import { type Scenario } from "./scenario.js";

const TURN_TIMEOUT_MS = 120_000;

export const fanoutRowId = (level: string, figure: "p50" | "p99" | "tps" | "thread_p50" | "thread_p99") =>
  level === "100x3" ? `fanout.${figure}` : `fanout.${level}.${figure}`;

/**
 * The levels also run against a server with server.socketThread (its sockets in a thread of their own), as rows
 * of their own beside the default's: the option's trade (the main thread's time per token against a thread hop
 * per frame) measured where the targets are.
 */
const THREAD_LEVELS: ReadonlySet<string> = new Set(["100x3", "300x1"]);

/** What one side (agentwire or the relay) delivered over the measured turns of one launch. */
interface Side {
  latencies: number[];
  /** Per turn: delivered tokens/s ÷ the paced ideal, %. */
  idealShare: number[];
  /** Latencies by token index (position in each subscriber's stream). */
  byIndex: number[][];
  /** Per turn: the p99 of every token, and of each stream's first 20 (a launch's turns differ: the relay's first is its slowest). */
  turnP99: number[];
  turnFirstP99: number[];
  cpuMs: number;
  /** The main thread alone: ms on a CPU, and ms it was ready to run but waited for one (a loaded machine). */
  mainMs: number;
  mainWaitMs: number;
  /** This driver's own CPU over the same turns, ms: it shares the two cores with the server (or relay) and the fake. */
  driverMs: number;
  tokens: number;
}

const emptySide = (): Side => ({ latencies: [], idealShare: [], byIndex: [], turnP99: [], turnFirstP99: [], cpuMs: 0, mainMs: 0, mainWaitMs: 0, driverMs: 0, tokens: 0 });

/**
 * The main thread's time on a CPU and waiting for one, ms (/proc/<pid>/task/<pid>/schedstat, ns): unlike the
 * process's CPU, it leaves out other threads (the thread pool, a store writer), and unlike latency it is
 * about the same on a loaded machine; zeros where the kernel keeps no schedstat.
 */
function mainThread(pid: number): { runMs: number; waitMs: number } {
  try {
    const [run, wait] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, "utf8").trim().split(" ").map(Number);
    return { runMs: run / 1e6, waitMs: wait / 1e6 };
  } catch {
    return { runMs: 0, waitMs: 0 };
  }
}

/** The process's CPU and its main thread's time over the measured turns: `start()` after the warm-up, `end(side)` after the last turn. */
function usageWindow(pid: number): { start(): void; end(side: Side): void } {
  let cpu0 = 0;
  let main0 = mainThread(pid);
  let driver0 = process.cpuUsage();
  return {
    start() {
      cpu0 = cpuMs(pid);
      main0 = mainThread(pid);
      driver0 = process.cpuUsage();
    },
    end(side) {
      side.cpuMs = cpuMs(pid) - cpu0;
      const driver = process.cpuUsage(driver0);
      side.driverMs = (driver.user + driver.system) / 1000;
      const main1 = mainThread(pid);
      side.mainMs = main1.runMs - main0.runMs;
      side.mainWaitMs = main1.waitMs - main0.waitMs;
    },
  };
}

function addStream(side: Side, latencies: readonly number[]): void {
  side.tokens += latencies.length;
  latencies.forEach((l, i) => {
    side.latencies.push(l);
    (side.byIndex[i] ??= []).push(l);
  });
}

/** One measured turn's streams (each subscriber's latencies, in token order). */
function addTurn(side: Side, streams: readonly { latencies: readonly number[] }[]): void {
  for (const s of streams) addStream(side, s.latencies);
  side.turnP99.push(percentile(streams.flatMap((s) => s.latencies), 0.99));
  side.turnFirstP99.push(percentile(streams.flatMap((s) => s.latencies.slice(0, 20)), 0.99));
}

/** p99 and p50 of the first 20 tokens of each stream, of those in between, and of the last 20; the p99 of each turn. */
function byIndexText(side: Side): string {
  const n = side.byIndex.length;
  const pick = (from: number, to: number) => side.byIndex.slice(from, to).flat();
  const p = (q: number, values: number[]) => (values.length ? percentile(values, q).toFixed(q < 0.9 ? 2 : 1) : "–");
  const parts = (q: number) => `first 20 ${p(q, pick(0, 20))} / middle ${p(q, pick(20, n - 20))} / last 20 ${p(q, pick(Math.max(20, n - 20), n))}`;
  const turns = (values: number[]) => values.map((v) => v.toFixed(1)).join("/");
  return `p99 ${parts(0.99)} ms, p50 ${parts(0.5)} ms, p99 by turn ${turns(side.turnP99)} ms (first 20: ${turns(side.turnFirstP99)})`;
}

export const fanout: Scenario = {
  name: "fan-out",
  rows: FANOUT_LEVEL_IDS.flatMap((level) =>
    (THREAD_LEVELS.has(level) ? (["p50", "p99", "tps", "thread_p50", "thread_p99"] as const) : (["p50", "p99", "tps"] as const)).map((figure) =>
      fanoutRowId(level, figure),
    ),
  ),
  describe: (cfg) =>
    `${cfg.fanoutLevels.map((l) => `${l.conversations} conversations × ${l.subscribers}`).join(", ")} subscriber connections, ` +
    `${cfg.fanoutTokens} tokens at ${cfg.fanoutDelayMs} ms, all steps released together; floor: the bare relay (bench/relay.ts) with the same streams and subscribers, same launch; ` +
    `${cfg.launches} launch${cfg.launches === 1 ? "" : "es"} × (1 warm-up of ${WARMUP_TOKENS} tokens + ${cfg.fanoutTurns} turns) per level and side; ` +
    `at ${[...THREAD_LEVELS].map((id) => id.replace("x", " × ")).join(" and ")} also a server with server.socketThread, same launch`,
  async run({ cfg, log }) {
    const out: Record<string, RowResult> = {};
    const fake = await startFake();
    const configDir = await tempDir("socket-thread-config");
    const threadConfig = join(configDir, "agentwire.json");
    await writeFile(threadConfig, JSON.stringify({ server: { socketThread: true } }));
    try {
      for (const level of cfg.fanoutLevels) Object.assign(out, await runLevel(cfg, level, fake, log, threadConfig));
    } finally {
      await fake.stop();
      await rm(configDir, { recursive: true, force: true });
    }
    return out;
  },
};

async function runLevel(
  cfg: Parameters<Scenario["describe"]>[0],
  level: FanoutLevel,
  fake: FakeProcess,
  log: (line: string) => void,
  threadConfig: string,
): Promise<Record<string, RowResult>> {
  const model = `bench-paced-${cfg.fanoutTokens}-${cfg.fanoutDelayMs}`;
  const warmModel = `bench-paced-${WARMUP_TOKENS}-${cfg.fanoutDelayMs}`;
  const schedule = { warmup: 1, turns: cfg.fanoutTurns };
  const modelOf = (turn: number) => (turn < schedule.warmup ? warmModel : model);
  const expectedOf = (turn: number) => (turn < schedule.warmup ? WARMUP_TOKENS : cfg.fanoutTokens);
  // Every stream at its pace: C × S tokens every delay.
  const ideal = (level.conversations * level.subscribers * 1000) / cfg.fanoutDelayMs;
  const perLaunch = { p50: [] as number[][], p99: [] as number[][], tps: [] as number[][] };
  const floors = { p50: [] as number[][], p99: [] as number[][], tps: [] as number[][] };
  const notes: string[] = [];
  const threadedLaunches = { p50: [] as number[][], p99: [] as number[][] };
  /** One launch of agentwire (`serve` with `extraArgs`) through the level's turns. */
  const agentwireSide = async (extraArgs: string[]): Promise<Side> => {
    const server = await startServer(fake.url, { extraArgs });
    const measured = emptySide();
    let clients: AgentwireClient[] = [];
    try {
      clients = await connectMany(server.url, level.conversations * level.subscribers, 50);
      const groups: { id: string; subscribers: AgentwireClient[] }[] = [];
      for (let i = 0; i < level.conversations; i++) {
        const subscribers = clients.slice(i * level.subscribers, (i + 1) * level.subscribers);
        const { id } = await subscribers[0].conversation.create({ title: `fan-out ${i}` });
        for (const client of subscribers) await client.conversation.subscribe({ conversationId: id });
        groups.push({ id, subscribers });
      }
      const usage = usageWindow(server.pid);
      for (let t = 0; t < schedule.warmup + schedule.turns; t++) {
        if (t === schedule.warmup) usage.start();
        await Promise.all(groups.map((g) => g.subscribers[0].message.append({ conversationId: g.id, role: "user", content: USER_TEXT })));
        const watches = groups.flatMap((g) => g.subscribers.map((client) => watchGeneration(client, g.id, TURN_TIMEOUT_MS)));
        const t0 = performance.now();
        await Promise.all(groups.map((g) => g.subscribers[0].step({ conversationId: g.id, model: modelOf(t) })));
        const seen = await Promise.all(watches.map((w) => w.done));
        const wallMs = performance.now() - t0;
        const short = seen.find((s) => s.tokens !== expectedOf(t));
        if (short) throw new Error(`a subscriber got ${short.tokens} of ${expectedOf(t)} tokens`);
        if (t < schedule.warmup) continue;
        addTurn(measured, seen);
        measured.idealShare.push((100 * (seen.length * expectedOf(t))) / (wallMs / 1000) / ideal);
      }
      usage.end(measured);
    } finally {
      await closeAll(clients);
      await server.close();
    }
    return measured;
  };
  for (let launch = 0; launch < cfg.launches; launch++) {
    // The relay: its own process per launch, like the server.
    const relay = await startRelay(fake.url);
    const relayed = emptySide();
    let sockets: WebSocket[] = [];
    try {
      sockets = await Promise.all(Array.from({ length: level.conversations * level.subscribers }, () => openRelaySocket(relay.url)));
      const groups = Array.from({ length: level.conversations }, (_, i) => sockets.slice(i * level.subscribers, (i + 1) * level.subscribers));
      for (const [i, group] of groups.entries()) for (const socket of group) await joinRelayGroup(socket, `g${i}`);
      const usage = usageWindow(relay.pid);
      for (let t = 0; t < schedule.warmup + schedule.turns; t++) {
        if (t === schedule.warmup) usage.start();
        const t0 = performance.now();
        const results = await Promise.all(groups.map((group, i) => relayFanoutTurn(group, `g${i}`, modelOf(t), TURN_TIMEOUT_MS)));
        const wallMs = performance.now() - t0;
        const streams = results.flat();
        const short = streams.find((s) => s.tokens !== expectedOf(t));
        if (short) throw new Error(`a relay subscriber got ${short.tokens} of ${expectedOf(t)} tokens`);
        if (t < schedule.warmup) continue;
        addTurn(relayed, streams);
        relayed.idealShare.push((100 * (streams.length * expectedOf(t))) / (wallMs / 1000) / ideal);
      }
      usage.end(relayed);
    } finally {
      for (const socket of sockets) socket.close();
      await relay.stop();
    }

    const measured = await agentwireSide([]);
    const threaded = THREAD_LEVELS.has(level.id) && serverIsThisBuild() ? await agentwireSide(["--config", threadConfig]) : undefined;

    const p = (side: Side, q: number) => percentile(side.latencies, q);
    perLaunch.p50.push([p(measured, 0.5)]);
    perLaunch.p99.push([p(measured, 0.99)]);
    perLaunch.tps.push(measured.idealShare);
    floors.p50.push([p(relayed, 0.5)]);
    floors.p99.push([p(relayed, 0.99)]);
    floors.tps.push(relayed.idealShare);
    if (threaded) {
      threadedLaunches.p50.push([p(threaded, 0.5)]);
      threadedLaunches.p99.push([p(threaded, 0.99)]);
    }
    const perK = (side: Side) => ((side.cpuMs * 1000) / side.tokens).toFixed(1);
    const mainPerK = (side: Side) =>
      `main thread ${((side.mainMs * 1000) / side.tokens).toFixed(1)} ms (waited ${((side.mainWaitMs * 1000) / side.tokens).toFixed(1)} ms for a CPU), ` +
      // The process's other threads (GC helpers, the thread pool, a store writer): cores the main thread and the clients also need.
      `other threads ${((Math.max(0, side.cpuMs - side.mainMs) * 1000) / side.tokens).toFixed(1)} ms, ` +
      `the driver ${((side.driverMs * 1000) / side.tokens).toFixed(1)} ms`;
    notes.push(
      `launch ${launch + 1}: agentwire ${byIndexText(measured)}, CPU ${perK(measured)} ms per 1000 delivered tokens, ${mainPerK(measured)}; ` +
        `relay ${byIndexText(relayed)}, CPU ${perK(relayed)} ms per 1000, ${mainPerK(relayed)}` +
        (threaded
          ? `; with server.socketThread p50 ${p(threaded, 0.5).toFixed(3)} p99 ${p(threaded, 0.99).toFixed(3)} ms, ${byIndexText(threaded)}, CPU ${perK(threaded)} ms per 1000, ${mainPerK(threaded)}`
          : ""),
    );
    log(
      `fan-out ${level.id} launch ${launch + 1}: p50 ${p(measured, 0.5).toFixed(3)} p99 ${p(measured, 0.99).toFixed(3)} ms, ` +
        `${measured.idealShare.map((v) => v.toFixed(0)).join("/")} % of ideal | relay p50 ${p(relayed, 0.5).toFixed(3)} p99 ${p(relayed, 0.99).toFixed(3)} ms, ` +
        `${relayed.idealShare.map((v) => v.toFixed(0)).join("/")} % | ${notes.at(-1)}`,
    );
  }
  const note = `per launch: percentile over every token at every subscriber; floor: the bare relay, same launch. ${notes.join("; ")}`;
  return {
    ...(threadedLaunches.p50.length > 0
      ? {
          [fanoutRowId(level.id, "thread_p50")]: summarizeWithFloor(threadedLaunches.p50, floors.p50, note),
          [fanoutRowId(level.id, "thread_p99")]: summarizeWithFloor(threadedLaunches.p99, floors.p99, note),
        }
      : {}),
    [fanoutRowId(level.id, "p50")]: summarizeWithFloor(perLaunch.p50, floors.p50, note),
    [fanoutRowId(level.id, "p99")]: summarizeWithFloor(perLaunch.p99, floors.p99, note),
    [fanoutRowId(level.id, "tps")]: summarizeWithFloor(
      perLaunch.tps,
      floors.tps,
      `per turn: tokens received by all subscribers ÷ (first step sent → last generation_complete), as % of the paced ideal ${ideal.toLocaleString("en-US")} tok/s; floor: the bare relay's, same launch`,
    ),
  };
}
