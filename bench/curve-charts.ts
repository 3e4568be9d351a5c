/**
 * The curves' rows drawn as charts (bench/chart-svg.ts), one SVG per curve
 * in bench/charts/, linked from RESULTS.md. Each point is a row's median;
 * its bar is the row's spread (min–max over launches).
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { lineChartSvg, type Chart, type ChartPoint, type ChartSeries } from "./chart-svg.js";
import {
  CONVERSATION_FIGURES,
  CONVERSATION_POINTS,
  STORED_FIGURES,
  STORED_POINTS,
  SUBSCRIBER_FIGURES,
  SUBSCRIBER_POINTS,
  curveRowId,
  pointValue,
} from "./curve-rows.js";
import type { Row } from "./rows.js";

export interface WrittenChart {
  title: string;
  /** Relative to bench/ (where RESULTS.md is). */
  path: string;
}

function seriesOf(rows: Row[], name: string, points: readonly string[], idOf: (point: string) => string): ChartSeries {
  const byId = new Map(rows.map((row) => [row.id, row]));
  const out: ChartPoint[] = [];
  for (const point of points) {
    const row = byId.get(idOf(point));
    if (!row || row.error || row.median === undefined || Number.isNaN(row.median)) continue;
    out.push({ x: pointValue(point), y: row.median, lo: row.spread?.[0], hi: row.spread?.[1] });
  }
  return { name, points: out };
}

/** The three charts, from whatever rows the run filled (a curve not run draws "no data"). */
export function curveCharts(rows: Row[], subtitle: string, tokensPerSecondPerConversation: number): { file: string; chart: Chart }[] {
  const fig = <T extends { key: string; label: string; unit: string }>(figures: readonly T[], key: T["key"]) => figures.find((f) => f.key === key)!;
  const conv = (key: (typeof CONVERSATION_FIGURES)[number]["key"]) => seriesOf(rows, "measured", CONVERSATION_POINTS, (p) => curveRowId.conversations(p, key));
  const measuredTps = conv("tps");
  const ideal: ChartSeries = {
    name: `paced ideal (${tokensPerSecondPerConversation} tok/s per conversation)`,
    reference: true,
    points: measuredTps.points.length ? CONVERSATION_POINTS.map((p) => ({ x: pointValue(p), y: pointValue(p) * tokensPerSecondPerConversation })) : [],
  };
  const cpu = conv("cpu");
  const oneCore: ChartSeries = { name: "one core (100 %)", reference: true, points: cpu.points.length ? CONVERSATION_POINTS.map((p) => ({ x: pointValue(p), y: 100 })) : [] };
  const stored = (key: (typeof STORED_FIGURES)[number]["key"], name = "measured") => seriesOf(rows, name, STORED_POINTS, (p) => curveRowId.stored(p, key));
  const subs = (key: (typeof SUBSCRIBER_FIGURES)[number]["key"]) => seriesOf(rows, "measured", SUBSCRIBER_POINTS, (p) => curveRowId.subscribers(p, key));
  return [
    {
      file: "curve-conversations.svg",
      chart: {
        title: "Concurrent streaming conversations (one subscriber each, paced tokens)",
        subtitle,
        xLabel: "conversations streaming at once",
        xLog: true,
        panels: [
          { title: "Delivered tokens/s", unit: "tok/s", yLog: true, series: [{ ...measuredTps, name: "delivered" }, ideal] },
          { title: "Per-token latency p99", unit: "ms", yLog: true, series: [conv("p99")] },
          { title: "CPU", unit: "% of one core", series: [{ ...cpu, name: "server" }, { ...conv("machine"), name: "whole machine" }, oneCore] },
          { title: "Server RSS, peak", unit: fig(CONVERSATION_FIGURES, "rss").unit, series: [conv("rss")] },
        ],
      },
    },
    {
      file: "curve-subscribers.svg",
      chart: {
        title: "Subscribers of one streaming conversation (paced tokens)",
        subtitle,
        xLabel: "subscriber connections",
        xLog: true,
        panels: [
          { title: "Per-token latency p99, every subscriber", unit: "ms", series: [subs("p99")] },
          { title: "Server CPU per turn", unit: "ms", series: [subs("cpu")] },
        ],
      },
    },
    {
      file: "curve-stored.svg",
      chart: {
        title: "Stored conversations",
        subtitle,
        xLabel: "conversations in the data dir",
        xLog: true,
        panels: [
          { title: "Server start", unit: "ms", series: [stored("start")] },
          { title: "conversation.list, first page", unit: "ms", series: [stored("list_first", "first call after start"), stored("list_again", "repeated")] },
          { title: "conversation.create", unit: "ms", series: [stored("create", "answered"), stored("create_wait", "another client's longest wait")] },
          { title: "Data dir size", unit: "MiB", yLog: true, series: [stored("du")] },
          { title: "Prefill (store API)", unit: "s", yLog: true, series: [stored("prefill")] },
        ],
      },
    },
  ];
}

/** Writes the charts of the curves this run measured into `<benchDir>/charts/`; returns those written. */
export async function writeCurveCharts(
  rows: Row[],
  benchDir: string,
  subtitle: string,
  tokensPerSecondPerConversation: number,
): Promise<WrittenChart[]> {
  const dir = join(benchDir, "charts");
  await mkdir(dir, { recursive: true });
  const written: WrittenChart[] = [];
  for (const { file, chart } of curveCharts(rows, subtitle, tokensPerSecondPerConversation)) {
    // A curve this run did not measure (--only) keeps its old chart file and goes unlinked.
    if (!chart.panels.some((panel) => panel.series.some((series) => !series.reference && series.points.length > 0))) continue;
    await writeFile(join(dir, file), lineChartSvg(chart));
    written.push({ title: chart.title, path: `charts/${file}` });
  }
  return written;
}
