/**
 * Every row the benchmark prints, in order. Scenarios fill in the figures;
 * a row whose scenario failed still prints, with the error. The smoke test
 * checks that every label here appears in the output.
 */
import { CURVE_ROW_SPECS } from "./curve-rows.js";
import type { RowSpec, Target } from "./row-spec.js";

export type { RowSpec, Target } from "./row-spec.js";

export interface RowResult {
  median: number;
  /** Min–max of the per-launch figures. */
  spread?: [number, number];
  /** launches × samples. */
  n?: string;
  floor?: number;
  floorSpread?: [number, number];
  note?: string;
}

export interface Row extends RowSpec, Partial<RowResult> {
  error?: string;
}

const le = (value: number, text: string): Target => ({ op: "<=", value, text });
const ge = (value: number, text: string): Target => ({ op: ">=", value, text });
const ratioLe = (value: number, text: string): Target => ({ op: "<=", value, text, of: "ratio" });
const ratioGe = (value: number, text: string): Target => ({ op: ">=", value, text, of: "ratio" });
const addedLe = (value: number, text: string): Target => ({ op: "<=", value, text, of: "added" });

export const ROW_SPECS: RowSpec[] = [
  { id: "cold.start", scenario: "cold start", label: "spawn → listening line", unit: "ms", target: ratioLe(1.6, "≤ 1.6× bare node") },
  { id: "cold.bare_ws", scenario: "cold start", label: "bare ws server: spawn → listening line (floor: bare node)", unit: "ms" },
  { id: "cold.ws_config", scenario: "cold start", label: "ws server + agentwire's configuration schemas: spawn → listening line (floor: bare node)", unit: "ms" },
  {
    id: "cold.start_no_extra_ca",
    scenario: "cold start",
    label: "spawn → listening line, NODE_EXTRA_CA_CERTS unset (floor: bare node, also unset)",
    unit: "ms",
  },
  { id: "cold.oneshot", scenario: "cold start", label: "one-shot agentwire chat \"hello\" --json, embedded server: spawn → exit (floor: node -e 0)", unit: "ms", target: addedLe(80, "≤ bare node + 80 ms") },

  { id: "burst.tps", scenario: "burst", label: "tokens/s delivered (step sent → last token)", unit: "tok/s", target: ratioGe(0.8, "≥ 0.8× floor"), lowerIsBetter: false },
  { id: "burst.ttft", scenario: "burst", label: "TTFT (step sent → first generation_progress)", unit: "ms", target: addedLe(3, "≤ floor + 3 ms") },
  {
    id: "burst.ttft_before",
    scenario: "burst",
    label: "TTFT's part before the model's first token (step sent → the fake stamps its first token; floor: the request sent → stamped)",
    unit: "ms",
  },
  {
    id: "burst.ttft_after",
    scenario: "burst",
    label: "TTFT's part after the model's first token (the fake stamps it → its frame arrives at the driver)",
    unit: "ms",
  },
  { id: "burst.frames", scenario: "burst", label: "WebSocket frames per token", unit: "frames/tok" },
  { id: "burst.scavenges", scenario: "burst", label: "server scavenges (young-generation GCs) per 1000 tokens", unit: "/1k tok" },

  { id: "cost.cpu", scenario: "server cost", label: "server CPU per 2000-token turn (utime+stime)", unit: "ms", target: le(25, "≤ 25 ms") },
  { id: "cost.rss_idle", scenario: "server cost", label: "server RSS idle (after start)", unit: "MiB", target: addedLe(12, "≤ bare node + 12 MiB") },
  { id: "cost.rss_bare_ws", scenario: "server cost", label: "bare ws server RSS idle, listening (floor: bare node)", unit: "MiB" },
  { id: "cost.rss_ws_config", scenario: "server cost", label: "ws server + agentwire's configuration schemas: RSS idle, listening (floor: bare node)", unit: "MiB" },
  { id: "cost.rss_after", scenario: "server cost", label: "server RSS after the turns", unit: "MiB" },

  { id: "paced.p50", scenario: "paced", label: "per-token latency p50 (frame arrival at the driver − stamp)", unit: "ms" },
  { id: "paced.p99", scenario: "paced", label: "per-token latency p99 (frame arrival at the driver − stamp)", unit: "ms" },
  { id: "paced.relay_p50", scenario: "paced", label: "two-hop floor p50 (fake → bare relay → driver)", unit: "ms" },
  { id: "paced.relay_p99", scenario: "paced", label: "two-hop floor p99 (fake → bare relay → driver)", unit: "ms" },
  { id: "paced.added_p50", scenario: "paced", label: "p50 added over the bare relay (agentwire − relay, per launch)", unit: "ms", target: le(0.15, "≤ 0.15 ms") },
  { id: "paced.added_p99", scenario: "paced", label: "p99 added over the bare relay (agentwire − relay, per launch)", unit: "ms", target: le(0.5, "≤ 0.5 ms") },
  { id: "paced.thread_added_p50", scenario: "paced", label: "with server.socketThread: p50 added over the bare relay (per launch)", unit: "ms" },
  { id: "paced.thread_added_p99", scenario: "paced", label: "with server.socketThread: p99 added over the bare relay (per launch)", unit: "ms" },
  { id: "paced.scavenges", scenario: "paced", label: "server scavenges (young-generation GCs) per 1000 tokens", unit: "/1k tok" },
  { id: "paced.dispatch_p50", scenario: "paced", label: "the driver's own part, not in the latencies: a frame's arrival → the generated client's handler, p50", unit: "ms" },

  { id: "features.p50", scenario: "features", label: "per-token latency p50 after a plan and an approved edit with its diff (floor: the plain turn)", unit: "ms", target: addedLe(0.15, "≤ plain turn + 0.15 ms") },
  { id: "features.p99", scenario: "features", label: "per-token latency p99 after a plan and an approved edit with its diff (floor: the plain turn)", unit: "ms", target: addedLe(0.5, "≤ plain turn + 0.5 ms") },
  { id: "features.cpu", scenario: "features", label: "server CPU per paced turn after a plan and an edit (floor: the plain turn)", unit: "ms" },
  { id: "features.edit_done", scenario: "features", label: "edit_file with its diff shown: approve → tool_completed", unit: "ms" },

  { id: "tool.ack", scenario: "tool round trip", label: "approve → tool.confirm answer", unit: "ms", target: le(1, "≤ 1 ms") },
  { id: "tool.done", scenario: "tool round trip", label: "approve → tool_completed", unit: "ms", target: addedLe(2, "≤ floor + 2 ms (a bare spawn of the same command)") },
  { id: "tool.next", scenario: "tool round trip", label: "approve → next generation_progress", unit: "ms" },
  { id: "turns.cpu", scenario: "turn burst", label: "server CPU per turn, 300 one-token turns stepped together", unit: "ms" },
  { id: "turns.wall", scenario: "turn burst", label: "300 one-token turns: first step sent → last generation_complete", unit: "ms" },

  { id: "fanout.p50", scenario: "fan-out", label: "100 × 3: per-token latency p50, every subscriber (floor: bare relay)", unit: "ms", target: ratioLe(1.5, "≤ 1.5× bare relay") },
  { id: "fanout.p99", scenario: "fan-out", label: "100 × 3: per-token latency p99, every subscriber (floor: bare relay)", unit: "ms", target: ratioLe(1.5, "≤ 1.5× bare relay") },
  { id: "fanout.thread_p50", scenario: "fan-out", label: "100 × 3 with server.socketThread: per-token latency p50, every subscriber (floor: bare relay)", unit: "ms" },
  { id: "fanout.thread_p99", scenario: "fan-out", label: "100 × 3 with server.socketThread: per-token latency p99, every subscriber (floor: bare relay)", unit: "ms" },
  { id: "fanout.tps", scenario: "fan-out", label: "100 × 3: delivered tokens/s, % of the paced ideal (floor: bare relay)", unit: "%", lowerIsBetter: false },
  { id: "fanout.300x1.p50", scenario: "fan-out", label: "300 × 1: per-token latency p50 (floor: bare relay)", unit: "ms", target: ratioLe(1.5, "≤ 1.5× bare relay") },
  { id: "fanout.300x1.p99", scenario: "fan-out", label: "300 × 1: per-token latency p99 (floor: bare relay)", unit: "ms", target: ratioLe(1.5, "≤ 1.5× bare relay") },
  { id: "fanout.300x1.thread_p50", scenario: "fan-out", label: "300 × 1 with server.socketThread: per-token latency p50 (floor: bare relay)", unit: "ms" },
  { id: "fanout.300x1.thread_p99", scenario: "fan-out", label: "300 × 1 with server.socketThread: per-token latency p99 (floor: bare relay)", unit: "ms" },
  { id: "fanout.300x1.tps", scenario: "fan-out", label: "300 × 1: delivered tokens/s, % of the paced ideal (floor: bare relay)", unit: "%", lowerIsBetter: false },
  { id: "fanout.500x1.p50", scenario: "fan-out", label: "500 × 1: per-token latency p50 (floor: bare relay)", unit: "ms" },
  { id: "fanout.500x1.p99", scenario: "fan-out", label: "500 × 1: per-token latency p99 (floor: bare relay)", unit: "ms" },
  { id: "fanout.500x1.tps", scenario: "fan-out", label: "500 × 1: delivered tokens/s, % of the paced ideal (floor: bare relay)", unit: "%", target: ge(90, "≥ 90 % of the paced ideal"), lowerIsBetter: false },
  { id: "worker.main_p99", scenario: "worker writes", label: "bare fan-out host, writes on the main thread: delivery p99", unit: "ms" },
  { id: "worker.worker_p99", scenario: "worker writes", label: "bare fan-out host, writes in a worker thread: delivery p99", unit: "ms" },
  { id: "worker.main_elu", scenario: "worker writes", label: "main thread busy, writes on the main thread (event-loop utilization)", unit: "%" },
  { id: "worker.worker_elu", scenario: "worker writes", label: "main thread busy, writes in a worker thread (event-loop utilization)", unit: "%" },

  { id: "cluster.fanout_p50", scenario: "cluster fan-out", label: "per-token latency p50, subscribers on A, generation on B (floor: one instance)", unit: "ms" },
  { id: "cluster.fanout_p99", scenario: "cluster fan-out", label: "per-token latency p99, subscribers on A, generation on B (floor: one instance)", unit: "ms" },

  { id: "idle.rss", scenario: "idle sockets", label: "server RSS with the connections open", unit: "MiB", target: le(300, "≤ 300 MiB") },
  { id: "idle.per_conn", scenario: "idle sockets", label: "server RSS per connection", unit: "KiB" },

  { id: "attack.base_p50", scenario: "attack", label: "server.status p50, 10 clients, no attacker", unit: "ms" },
  { id: "attack.base_p99", scenario: "attack", label: "server.status p99, 10 clients, no attacker", unit: "ms" },
  { id: "attack.batch_p50", scenario: "attack", label: "p50 while one client sends batches of 100 × conversation.list {limit: 500}", unit: "ms" },
  { id: "attack.batch_p99", scenario: "attack", label: "p99 while one client sends batches of 100 × conversation.list {limit: 500}", unit: "ms" },
  { id: "attack.nested_p50", scenario: "attack", label: "p50 while one client sends frames of 5M nested arrays", unit: "ms" },
  { id: "attack.nested_p99", scenario: "attack", label: "p99 while one client sends frames of 5M nested arrays", unit: "ms" },
  { id: "attack.over_p50", scenario: "attack", label: "p50 while one client sends batches of 200k tools.list (over maxBatch)", unit: "ms" },
  { id: "attack.over_p99", scenario: "attack", label: "p99 while one client sends batches of 200k tools.list (over maxBatch)", unit: "ms" },

  { id: "storage.100", scenario: "storage", label: "message.append over the socket at 100 records", unit: "ms" },
  { id: "storage.1k", scenario: "storage", label: "message.append over the socket at 1k records", unit: "ms" },
  { id: "storage.10k", scenario: "storage", label: "message.append over the socket at 10k records", unit: "ms" },
  { id: "storage.100k", scenario: "storage", label: "message.append over the socket at 100k records", unit: "ms" },
  { id: "storage.99k9", scenario: "storage", label: "message.append over the socket at ~99.9k records, last segment nearly full", unit: "ms" },
  { id: "storage.ratio", scenario: "storage", label: "#100k ÷ #100 (socket)", unit: "×", target: le(2, "#100k ≤ 2× #100") },
  { id: "storage.ratio_worst", scenario: "storage", label: "#~99.9k (last segment nearly full) ÷ #100 (socket)", unit: "×", target: le(2, "≤ 2× #100 (same aim)") },
  { id: "storage.direct.100", scenario: "storage", label: "store direct append at 100 records", unit: "ms" },
  { id: "storage.direct.100k", scenario: "storage", label: "store direct append at 100k records", unit: "ms" },
  { id: "storage.direct.99k9", scenario: "storage", label: "store direct append at ~99.9k records, last segment nearly full", unit: "ms" },
  ...CURVE_ROW_SPECS,
  {
    id: "cold.first_status",
    scenario: "cold start",
    label: "spawn → first server.status answered (connect + initialize + server.status after the listening line; floor: bare node)",
    unit: "ms",
  },
];

export function met(row: Row): boolean | undefined {
  if (!row.target || row.median === undefined || Number.isNaN(row.median) || row.error) return undefined;
  const of = row.target.of ?? "value";
  if (of !== "value" && (row.floor === undefined || Number.isNaN(row.floor))) return undefined;
  const compared = of === "ratio" ? ratio(row) : of === "added" ? row.median - row.floor! : row.median;
  if (compared === undefined) return undefined;
  return row.target.op === "<=" ? compared <= row.target.value : compared >= row.target.value;
}

/** value ÷ floor, when both exist. */
export function ratio(row: Row): number | undefined {
  if (row.median === undefined || row.floor === undefined || !row.floor || Number.isNaN(row.median)) return undefined;
  return row.median / row.floor;
}
