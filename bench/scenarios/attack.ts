/**
 * Attack: do other clients still get answers while one connection sends the
 * most expensive frames the server accepts, or frames it must refuse?
 * (issue 7, item 5: 5M nested arrays stalled other clients 2.1 s; a batch of
 * 200k tools.list 7.8 s; a batch of 30,000 conversation.list 44 s.)
 *
 * One server (default limits) over a data dir of `attackConversations`
 * conversations (title + 1 KB system prompt each). Ten normal connections
 * each send `server.status` on a fixed schedule (every `attackPeriodMs`,
 * whether or not the previous one was answered); a request's latency counts
 * from when it was due, so a stall shows in every request it delays (no
 * coordinated omission). The same measurement runs with no attacker (the
 * floor) and then while one attacker process (bench/attacker.ts) sends,
 * back to back, for attackPhaseMs and until its last answer:
 *   batch      100 × conversation.list {limit: 500}  (the largest batch allowed)
 *   nested     5,000,000 nested arrays (10 MB)       (refused before parsing, -32600)
 *   overbatch  a batch of 200,000 tools.list (9 MB)  (over maxBatch 100: refused whole, -32600)
 * and what the server answered the attacker is counted; the scenario fails
 * if the attacker's connection closes, a frame goes unanswered, or an answer
 * is not the one expected. On this 2-core machine the attacker process (which
 * masks its 10 MB frames in JS) competes with the server for CPU: that is
 * part of what is measured.
 */
import { rm } from "node:fs/promises";
import { LowdbConversationStore } from "../../src/store/lowdb-store.js";
import type { AttackKind, AttackSummary } from "../attacker.js";
import { closeAll, connectMany, type AgentwireClient } from "../client.js";
import { ATTACKER_ENTRY, cpuMs, launch, rssMiB, sleep, startServer, tempDir, type Launched } from "../processes.js";
import type { RowResult } from "../rows.js";
import { percentile, summarize } from "../stats.js";
import { conversationOf } from "../store-append.js";
import type { Scenario } from "./scenario.js";

const UNUSED_MODEL_URL = "http://127.0.0.1:9/v1";
/**
 * The attacks, and how many of its frames the attacker keeps unanswered: one
 * batch of lists is already many seconds of work; the refused frames are
 * cheap for the server, so a few are kept coming to leave it no gap.
 */
const KINDS: { kind: AttackKind; row: string; text: string; window: number; before: string }[] = [
  {
    kind: "batch",
    row: "batch",
    text: "100 × conversation.list {limit: 500}",
    window: 1,
    before: "a batch of 30,000 conversation.list {limit: 100} stalled other clients 44 s, then failed with RangeError (no answer)",
  },
  { kind: "nested", row: "nested", text: "5M nested arrays", window: 4, before: "5M nested arrays (10 MB) stalled other clients 2.1 s" },
  { kind: "overbatch", row: "over", text: "batch of 200k tools.list", window: 4, before: "a batch of 200k tools.list stalled other clients 7.8 s and built a 188 MB reply" },
];
/** The normal clients. */
const CLIENTS = 10;

/** A data dir holding `count` conversations with a 1 KB system prompt each (conversation.list pages of 500 are then ~700 KB). */
async function prefill(dataDir: string, count: number): Promise<void> {
  const store = new LowdbConversationStore(dataDir);
  await store.open();
  try {
    const system = "You are a careful assistant. ".repeat(36).slice(0, 1000);
    for (let i = 0; i < count; i += 50) {
      const batch: Promise<unknown>[] = [];
      for (let j = i; j < Math.min(count, i + 50); j++) {
        const base = conversationOf(`attack-${String(j).padStart(6, "0")}`);
        batch.push(store.create({ ...base, title: `attack fixture conversation ${j}`, system, createdAt: new Date(Date.UTC(2026, 0, 1) + j * 1000).toISOString() }));
      }
      await Promise.all(batch);
    }
  } finally {
    await store.close();
  }
}

/**
 * Each client sends server.status when due (every periodMs, offsets
 * staggered) until `until` resolves, without waiting for the previous answer
 * (open loop: a slow answer does not delay the next request, so the figures
 * are what each request met, not a backlog of the client's own making).
 * Latency counts from the due time (or from the send, if the timer fired early).
 */
async function probe(clients: AgentwireClient[], periodMs: number, until: Promise<unknown>): Promise<number[]> {
  let over = false;
  void until.then(() => (over = true));
  const start = performance.now() + 5;
  const latencies: number[] = [];
  await Promise.all(
    clients.map(async (client, c) => {
      const answers: Promise<void>[] = [];
      for (let due = start + (c * periodMs) / clients.length; !over; due += periodMs) {
        const wait = due - performance.now();
        if (wait > 0) await sleep(wait);
        if (over) break;
        // Timers may fire up to a millisecond early (libuv's clock is whole ms): then count from the actual send.
        const at = Math.min(due, performance.now());
        answers.push(client.server.status().then(() => void latencies.push(performance.now() - at)));
      }
      await Promise.all(answers);
    }),
  );
  return latencies;
}

function waitExit(launched: Launched, timeoutMs: number): Promise<void> {
  const { child } = launched;
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`attacker did not finish within ${timeoutMs} ms`)), timeoutMs);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

function summaryOf(launched: Launched): AttackSummary {
  const match = /attacker summary (\{.*\})\n/.exec(launched.stderr());
  if (!match) throw new Error(`attacker gave no summary (exit ${launched.child.exitCode}); stderr: ${launched.stderr().slice(-1500)}`);
  return JSON.parse(match[1]) as AttackSummary;
}

const ERROR_NAMES: Record<string, string> = { "-32600": "-32600 invalid request", "-32050": "-32050 LIMIT_EXCEEDED", "-32603": "-32603 internal error" };

function answersText(s: AttackSummary): string {
  const errors = Object.entries(s.errors).map(([code, n]) => `${n} × ${ERROR_NAMES[code] ?? code}`);
  const parts = [...(s.results ? [`${s.results} members with a result`] : []), ...errors];
  return (
    `${s.sent} frame${s.sent === 1 ? "" : "s"} of ${s.frameBytes < 1e5 ? `${(s.frameBytes / 1e3).toFixed(1)} KB` : `${(s.frameBytes / 1e6).toFixed(1)} MB`} sent, ${s.answered} answered (${parts.join(", ") || "nothing"}); ` +
    `answer time median ${s.answerMsMedian.toFixed(0)} ms, max ${s.answerMsMax.toFixed(0)} ms${s.closed ? `; connection closed ${s.closed}` : ""}`
  );
}

/** What the attacker must have been answered for the run to count. */
function checkAnswers(s: AttackSummary): void {
  if (s.closed) throw new Error(`attacker (${s.kind}) connection closed: ${s.closed}`);
  if (s.answered !== s.sent) throw new Error(`attacker (${s.kind}): ${s.answered} of ${s.sent} frames answered`);
  if (s.kind !== "batch" && (s.errors["-32600"] ?? 0) !== s.sent) throw new Error(`attacker (${s.kind}): expected -32600 for every frame, got ${JSON.stringify(s.errors)}`);
  if (s.kind === "batch" && s.results + (s.errors["-32050"] ?? 0) !== s.sent * 100) {
    throw new Error(`attacker (batch): expected 100 answers per frame (results or LIMIT_EXCEEDED), got ${s.results} results and ${JSON.stringify(s.errors)}`);
  }
}

export const attack: Scenario = {
  name: "attack",
  rows: ["attack.base_p50", "attack.base_p99", ...KINDS.flatMap((k) => [`attack.${k.row}_p50`, `attack.${k.row}_p99`])],
  describe: (cfg) =>
    `${CLIENTS} connections each sending server.status every ${cfg.attackPeriodMs} ms, open loop (latency from when it was due) for ${cfg.attackPhaseMs / 1000} s ` +
    `with no attacker (the floor), then while one attacker connection sends back to back for ${cfg.attackPhaseMs / 1000} s and until its last answer: ` +
    `${KINDS.map((k) => `${k.text} (${k.window} unanswered at most)`).join("; ")}; ${cfg.attackConversations} stored conversations with a 1 KB system prompt; default limits; ` +
    `${cfg.launches} launch${cfg.launches === 1 ? "" : "es"}`,
  async run({ cfg, log }) {
    const template = await tempDir("attack-template");
    const base: number[][] = [];
    const under = new Map<string, number[][]>(KINDS.map((k) => [k.row, []]));
    const maxes = new Map<string, number[]>([["base", []], ...KINDS.map((k): [string, number[]] => [k.row, []])]);
    const answers = new Map<string, string[]>(KINDS.map((k) => [k.row, []]));
    const rss: number[] = [];
    try {
      const t0 = performance.now();
      await prefill(template, cfg.attackConversations);
      log(`attack: prefilled ${cfg.attackConversations} conversations in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
      for (let launchNo = 0; launchNo < cfg.launches; launchNo++) {
        // Frames up to 16 MiB (the default is 4 MiB, which closes the socket at a 10 MB frame's
        // header): the issue's 10 MB nested-array frame must reach the depth check to be measured.
        const server = await startServer(UNUSED_MODEL_URL, { dataDir: template, extraArgs: ["--max-payload", String(16 << 20)] });
        let clients: AgentwireClient[] = [];
        try {
          clients = await connectMany(server.url, CLIENTS, CLIENTS);
          await probe(clients, cfg.attackPeriodMs, sleep(Math.min(500, cfg.attackPhaseMs))); // warm-up
          const baseline = await probe(clients, cfg.attackPeriodMs, sleep(cfg.attackPhaseMs));
          base.push(baseline);
          maxes.get("base")!.push(Math.max(...baseline));
          log(`attack launch ${launchNo + 1}, no attacker: p50 ${percentile(baseline, 0.5).toFixed(2)} ms, p99 ${percentile(baseline, 0.99).toFixed(2)} ms, max ${Math.max(...baseline).toFixed(1)} ms`);
          for (const { kind, row, window } of KINDS) {
            const attacker = await launch(
              [ATTACKER_ENTRY, "--url", server.url, "--kind", kind, "--ms", String(cfg.attackPhaseMs), "--window", String(window)],
              /attacker ready\n/,
              { timeoutMs: 30_000 },
            );
            const cpuBefore = cpuMs(server.pid);
            let latencies: number[];
            try {
              // Measured from the attacker's first frame until its last answer (at least attackPhaseMs).
              const exited = waitExit(attacker, 120_000);
              latencies = await probe(clients, cfg.attackPeriodMs, exited.catch(() => undefined));
              await exited;
            } finally {
              await attacker.stop(500);
            }
            const cpu = cpuMs(server.pid) - cpuBefore;
            const summary = summaryOf(attacker);
            checkAnswers(summary);
            const cpuPerFrame = cpu / Math.max(1, summary.answered);
            under.get(row)!.push(latencies);
            maxes.get(row)!.push(Math.max(...latencies));
            answers.get(row)!.push(`${answersText(summary)}; server CPU ${cpuPerFrame.toFixed(0)} ms per frame (the probes' included)`);
            log(
              `attack launch ${launchNo + 1}, ${kind}: p50 ${percentile(latencies, 0.5).toFixed(2)} ms, p99 ${percentile(latencies, 0.99).toFixed(2)} ms, ` +
                `max ${Math.max(...latencies).toFixed(1)} ms; attacker: ${answers.get(row)!.at(-1)}`,
            );
            await sleep(200);
          }
          rss.push(rssMiB(server.pid));
          if (server.child.exitCode !== null || server.child.signalCode !== null) throw new Error("the server exited during the attacks");
        } finally {
          await closeAll(clients);
          await server.close();
        }
      }
    } finally {
      await rm(template, { recursive: true, force: true });
    }

    const p = (q: number) => (samples: number[][]) => summarize(samples.map((s) => [percentile(s, q)]));
    const p50 = p(0.5);
    const p99 = p(0.99);
    const maxText = (key: string) => `max ${maxes.get(key)!.map((v) => v.toFixed(1)).join(" / ")} ms`;
    const out: Record<string, RowResult> = {
      "attack.base_p50": { ...p50(base), note: `per launch: percentile over every request of the ${CLIENTS} clients; ${maxText("base")}` },
      "attack.base_p99": { ...p99(base), note: `per launch: percentile over every request of the ${CLIENTS} clients; ${maxText("base")}` },
    };
    const floor50 = p50(base);
    const floor99 = p99(base);
    for (const { row, before } of KINDS) {
      const samples = under.get(row)!;
      const note = `before the fix (issue 7): ${before}. Now: ${maxText(row)}; the attacker, per launch: ${answers.get(row)!.join(" | ")}; server RSS after all attacks ${rss.map((v) => v.toFixed(0)).join(" / ")} MiB`;
      out[`attack.${row}_p50`] = { ...p50(samples), floor: floor50.median, floorSpread: floor50.spread, note };
      out[`attack.${row}_p99`] = { ...p99(samples), floor: floor99.median, floorSpread: floor99.spread, note };
    }
    return out;
  },
};
