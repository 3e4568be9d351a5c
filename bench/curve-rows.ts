/**
 * The rows of the three curves (how cost grows with load), one row per
 * point and figure. The points are the full run's; the smoke run measures
 * smaller stand-ins under the same labels (config.ts, and a note per row).
 * bench/curve-charts.ts draws the same rows.
 */
import type { RowSpec } from "./row-spec.js";

export const CONVERSATION_POINTS = ["1", "10", "100", "500"] as const;
export const SUBSCRIBER_POINTS = ["1", "10", "100"] as const;
export const STORED_POINTS = ["1k", "10k", "100k"] as const;

/** Figures per point of each curve: id suffix, label (after the point), unit, lower is better. */
export const CONVERSATION_FIGURES = [
  { key: "tps", label: "delivered tokens/s, all conversations", unit: "tok/s", lowerIsBetter: false },
  { key: "p99", label: "per-token latency p99", unit: "ms" },
  { key: "cpu", label: "server CPU (utime+stime ÷ wall time of the turns)", unit: "%" },
  { key: "machine", label: "whole machine CPU, every process (same window)", unit: "%" },
  { key: "rss", label: "server RSS, peak during the turns", unit: "MiB" },
] as const;

export const SUBSCRIBER_FIGURES = [
  { key: "p99", label: "per-token latency p99, every subscriber", unit: "ms" },
  { key: "cpu", label: "server CPU per 200-token turn", unit: "ms" },
] as const;

export const STORED_FIGURES = [
  { key: "start", label: "server start (spawn → listening line)", unit: "ms" },
  { key: "list_first", label: "conversation.list first page (50), first call after start", unit: "ms" },
  { key: "list_again", label: "conversation.list first page (50), repeated", unit: "ms" },
  { key: "create", label: "conversation.create (then deleted), repeated", unit: "ms" },
  { key: "create_wait", label: "longest wait of another client's server.status while a create runs", unit: "ms" },
  { key: "du", label: "data dir size (du)", unit: "MiB" },
  { key: "prefill", label: "prefill through the store API (cumulative)", unit: "s" },
] as const;

export const LONG_FIGURES = [
  { key: "get_first", label: "conversation.get records 0–99, first call after start (loads it)", unit: "ms" },
  { key: "get_first_again", label: "conversation.get records 0–99, repeated", unit: "ms" },
  { key: "get_middle", label: "conversation.get 100 records from the middle, first call", unit: "ms" },
  { key: "get_middle_again", label: "conversation.get 100 records from the middle, repeated", unit: "ms" },
  { key: "replay", label: "conversation.subscribe with afterSeq replaying the whole replay log", unit: "ms" },
] as const;

export const curveRowId = {
  conversations: (point: string, key: string) => `curve.conversations.${point}.${key}`,
  subscribers: (point: string, key: string) => `curve.subscribers.${point}.${key}`,
  stored: (point: string, key: string) => `curve.stored.${point}.${key}`,
  long: (key: string) => `curve.long.${key}`,
};

const spec = (id: string, scenario: string, label: string, figure: { unit: string; lowerIsBetter?: boolean }): RowSpec => ({
  id,
  scenario,
  label,
  unit: figure.unit,
  ...(figure.lowerIsBetter === false ? { lowerIsBetter: false } : {}),
});

export const CURVE_ROW_SPECS: RowSpec[] = [
  ...CONVERSATION_POINTS.flatMap((point) =>
    CONVERSATION_FIGURES.map((f) =>
      spec(curveRowId.conversations(point, f.key), "curve: conversations", `${point} conversation${point === "1" ? "" : "s"}: ${f.label}`, f),
    ),
  ),
  ...SUBSCRIBER_POINTS.flatMap((point) =>
    SUBSCRIBER_FIGURES.map((f) =>
      spec(curveRowId.subscribers(point, f.key), "curve: subscribers", `${point} subscriber${point === "1" ? "" : "s"}: ${f.label}`, f),
    ),
  ),
  ...STORED_POINTS.flatMap((point) =>
    STORED_FIGURES.map((f) => spec(curveRowId.stored(point, f.key), "curve: stored", `${point} stored conversations: ${f.label}`, f)),
  ),
  ...LONG_FIGURES.map((f) => spec(curveRowId.long(f.key), "curve: stored", `one conversation of 100k records: ${f.label}`, f)),
];

/** Ids of the rows whose id starts with `curve.<curve>.` (a scenario's `rows`). */
export function curveRowIds(curve: "conversations" | "subscribers" | "stored" | "long"): string[] {
  return CURVE_ROW_SPECS.filter((row) => row.id.startsWith(`curve.${curve}.`)).map((row) => row.id);
}

/** "1k" → 1000, "100" → 100: the size a point's label names. */
export function pointValue(point: string): number {
  const match = /^(\d+(?:\.\d+)?)(k?)$/.exec(point);
  if (!match) throw new Error(`not a curve point: ${point}`);
  return Number(match[1]) * (match[2] ? 1000 : 1);
}

/** "" when a point runs the size its label names, else a note that a smaller one stands in (smoke, quick). */
export function standInNote(point: { id: string; count: number }, what: string): string {
  return pointValue(point.id) === point.count ? "" : `this run: ${point.count} ${what} stand in. `;
}
