/**
 * A small line-chart writer: one SVG holding one or more panels side by side
 * (each its own y axis and unit, all over the same x), with axes, ticks,
 * labels, a legend and a min–max bar at every point that has a spread.
 *
 * Hand-written rather than a plotting library: the bench needs a handful of
 * lines over three to five x values, and a dependency (with a headless
 * browser or a canvas build behind it) would cost more than these lines.
 * The output is plain SVG 1.1 with a white background, so it reads the same
 * in a browser, on GitHub (light or dark theme) and through rsvg-convert.
 */

export interface ChartPoint {
  x: number;
  y: number;
  /** Spread of y (e.g. min–max over launches), drawn as a vertical bar. */
  lo?: number;
  hi?: number;
}

export interface ChartSeries {
  name: string;
  points: ChartPoint[];
  /** A reference line (e.g. the ideal), drawn dashed and without markers. */
  reference?: boolean;
}

export interface ChartPanel {
  title: string;
  /** Unit of y, shown beside the title and on the axis, e.g. "ms". */
  unit: string;
  series: ChartSeries[];
  /** Logarithmic y (for values spanning orders of magnitude). Default linear from 0. */
  yLog?: boolean;
}

export interface Chart {
  title: string;
  /** Label of the shared x axis, e.g. "concurrent conversations". */
  xLabel: string;
  /** Logarithmic x (for x values such as 1 / 10 / 100 / 500). */
  xLog?: boolean;
  /** x values that get a tick; default every x of the data. */
  xTicks?: number[];
  panels: ChartPanel[];
  /** One line under the title (e.g. the machine and the run). */
  subtitle?: string;
}

const PANEL_W = 380;
const PANEL_H = 270;
const MARGIN = { left: 62, right: 18, top: 34, bottom: 46 };
const LEGEND_ROW = 18;
const HEADER_H = 52;
const COLUMNS_MAX = 2;
/** Okabe–Ito: distinguishable with the common colour-vision deficiencies. */
const COLOURS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9"];
const GREY = "#666666";

/** The SVG document of a chart. */
export function lineChartSvg(chart: Chart): string {
  const columns = Math.min(COLUMNS_MAX, Math.max(1, chart.panels.length));
  const rows = Math.ceil(chart.panels.length / columns);
  const legendRows = Math.max(0, ...chart.panels.map((p) => legendLines(p).length));
  const panelH = PANEL_H + legendRows * LEGEND_ROW;
  const width = columns * PANEL_W;
  const height = HEADER_H + rows * panelH;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    text(width / 2, 22, chart.title, { size: 16, weight: "bold", anchor: "middle" }),
  ];
  if (chart.subtitle) out.push(text(width / 2, 40, chart.subtitle, { size: 11, anchor: "middle", fill: GREY }));
  chart.panels.forEach((panel, i) => {
    const x0 = (i % columns) * PANEL_W;
    const y0 = HEADER_H + Math.floor(i / columns) * panelH;
    out.push(panelSvg(chart, panel, x0, y0, legendRows));
  });
  out.push("</svg>");
  return `${out.join("\n")}\n`;
}

/** One panel at (x0, y0); every panel keeps room for `legendRows` legend rows, so the plots of a row of panels line up. */
function panelSvg(chart: Chart, panel: ChartPanel, x0: number, y0: number, legendRows: number): string {
  const legend = legendLines(panel);
  const left = x0 + MARGIN.left;
  const right = x0 + PANEL_W - MARGIN.right;
  const top = y0 + MARGIN.top;
  const bottom = y0 + PANEL_H - MARGIN.bottom;
  const points = panel.series.flatMap((s) => s.points).filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y));
  const out: string[] = [text((left + right) / 2, y0 + 20, `${panel.title} (${panel.unit})`, { size: 13, weight: "bold", anchor: "middle" })];
  if (points.length === 0) {
    out.push(text((left + right) / 2, (top + bottom) / 2, "no data in this run", { anchor: "middle", fill: GREY }));
    return `<g>${out.join("\n")}</g>`;
  }

  const xs = chart.xTicks ?? [...new Set(points.map((p) => p.x))].sort((a, b) => a - b);
  const xScale = scale(xs.concat(points.map((p) => p.x)), left, right, chart.xLog ?? false, true);
  const ys = points.flatMap((p) => [p.y, p.lo ?? p.y, p.hi ?? p.y]);
  const yScale = scale(ys, bottom, top, panel.yLog ?? false, false);

  // Grid and y ticks.
  for (const tick of yScale.ticks) {
    const y = yScale.at(tick);
    out.push(line(left, y, right, y, "#e4e4e4"));
    out.push(text(left - 6, y + 4, compact(tick), { anchor: "end" }));
  }
  // x ticks at the given values.
  for (const tick of xs) {
    const x = xScale.at(tick);
    out.push(line(x, bottom, x, bottom + 5, "#000000"));
    out.push(text(x, bottom + 18, compact(tick), { anchor: "middle" }));
  }
  out.push(line(left, top, left, bottom, "#000000"), line(left, bottom, right, bottom, "#000000"));
  out.push(text((left + right) / 2, bottom + 36, `${chart.xLabel}${chart.xLog ? " (log scale)" : ""}`, { anchor: "middle", fill: GREY }));
  out.push(
    text(x0 + 14, (top + bottom) / 2, `${panel.unit}${panel.yLog ? " (log scale)" : ""}`, {
      anchor: "middle",
      fill: GREY,
      rotate: true,
    }),
  );

  panel.series.forEach((series, i) => {
    const colour = series.reference ? GREY : COLOURS[i % COLOURS.length];
    const drawn = series.points.filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y)).sort((a, b) => a.x - b.x);
    if (drawn.length === 0) return;
    const path = drawn.map((p, j) => `${j ? "L" : "M"}${fmt(xScale.at(p.x))},${fmt(yScale.at(p.y))}`).join(" ");
    out.push(`<path d="${path}" fill="none" stroke="${colour}" stroke-width="2"${series.reference ? ' stroke-dasharray="5,4"' : ""}/>`);
    if (series.reference) return;
    for (const p of drawn) {
      const cx = xScale.at(p.x);
      if (p.lo !== undefined && p.hi !== undefined && Number.isFinite(p.lo) && Number.isFinite(p.hi) && p.hi > p.lo) {
        const [ylo, yhi] = [yScale.at(p.lo), yScale.at(p.hi)];
        out.push(line(cx, ylo, cx, yhi, colour), line(cx - 4, ylo, cx + 4, ylo, colour), line(cx - 4, yhi, cx + 4, yhi, colour));
      }
      out.push(`<circle cx="${fmt(cx)}" cy="${fmt(yScale.at(p.y))}" r="3.5" fill="${colour}"/>`);
    }
  });

  legend.forEach((entries, row) => {
    let x = left;
    const y = bottom + 56 + row * LEGEND_ROW;
    for (const { series, index } of entries) {
      const colour = series.reference ? GREY : COLOURS[index % COLOURS.length];
      out.push(`<line x1="${fmt(x)}" y1="${fmt(y - 4)}" x2="${fmt(x + 18)}" y2="${fmt(y - 4)}" stroke="${colour}" stroke-width="2"${series.reference ? ' stroke-dasharray="5,4"' : ""}/>`);
      out.push(text(x + 23, y, series.name, { size: 11 }));
      x += legendWidth(series.name);
    }
  });
  return `<g>\n${out.join("\n")}\n</g>`;
}

/** The legend of a panel split into rows that fit its width; none for a single series. */
function legendLines(panel: ChartPanel): { series: ChartSeries; index: number }[][] {
  if (panel.series.length < 2) return [];
  const rows: { series: ChartSeries; index: number }[][] = [[]];
  let used = 0;
  panel.series.forEach((series, index) => {
    const w = legendWidth(series.name);
    if (used + w > PANEL_W - MARGIN.left - MARGIN.right && rows.at(-1)!.length > 0) {
      rows.push([]);
      used = 0;
    }
    rows.at(-1)!.push({ series, index });
    used += w;
  });
  return rows;
}

/** Rough width of a legend entry: the line sample and about 6 px per character of 11 px text. */
function legendWidth(name: string): number {
  return 23 + name.length * 6 + 14;
}

interface Scale {
  at(value: number): number;
  ticks: number[];
}

/**
 * Maps values onto [from, to] (pixels). Linear y starts at 0 and ends on a
 * round tick; log axes are padded by a fraction of a decade so no point sits
 * on the frame. `isX` skips tick generation (x ticks are the data's).
 */
function scale(values: number[], from: number, to: number, log: boolean, isX: boolean): Scale {
  const finite = values.filter((v) => Number.isFinite(v) && (!log || v > 0));
  let lo = Math.min(...finite);
  let hi = Math.max(...finite);
  if (log) {
    let a = Math.log10(lo);
    let b = Math.log10(hi);
    if (b - a < 1e-9) [a, b] = [a - 0.5, b + 0.5];
    const pad = (b - a) * 0.08;
    [a, b] = [a - pad, b + pad];
    const ticks = isX ? [] : logTicks(10 ** a, 10 ** b);
    return { at: (v) => from + ((Math.log10(Math.max(v, 10 ** a)) - a) / (b - a)) * (to - from), ticks };
  }
  if (isX) {
    const pad = (hi - lo || 1) * 0.05;
    [lo, hi] = [lo - pad, hi + pad];
    return { at: (v) => from + ((v - lo) / (hi - lo)) * (to - from), ticks: [] };
  }
  lo = Math.min(0, lo);
  if (hi <= lo) hi = lo + 1;
  const step = niceStep((hi - lo) / 5);
  hi = Math.ceil(hi / step - 1e-9) * step;
  const ticks: number[] = [];
  for (let v = lo; v <= hi + step / 2; v += step) ticks.push(Number(v.toPrecision(12)));
  return { at: (v) => from + ((v - lo) / (hi - lo)) * (to - from), ticks };
}

/** 1, 2, 2.5 or 5 times a power of ten, at least `raw`. */
function niceStep(raw: number): number {
  const power = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * power >= raw) return m * power;
  return 10 * power;
}

/** Powers of ten inside [lo, hi]; with 2 and 5 between them when there are fewer than three. */
function logTicks(lo: number, hi: number): number[] {
  const out: number[] = [];
  for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) {
    for (const m of [1, 2, 5]) {
      const v = m * 10 ** e;
      if (v >= lo && v <= hi) out.push(Number(v.toPrecision(12)));
    }
  }
  const decades = out.filter((v) => Number.isInteger(Math.log10(v)));
  return decades.length >= 3 ? decades : out;
}

/** 1500 → "1.5k", 0.25 → "0.25", 100000 → "100k". */
export function compact(value: number): string {
  const abs = Math.abs(value);
  const trim = (v: number) => String(Number(v.toPrecision(3)));
  if (abs >= 1e6) return `${trim(value / 1e6)}M`;
  if (abs >= 1e3) return `${trim(value / 1e3)}k`;
  return trim(value);
}

function fmt(n: number): string {
  return n.toFixed(1);
}

function line(x1: number, y1: number, x2: number, y2: number, colour: string): string {
  return `<line x1="${fmt(x1)}" y1="${fmt(y1)}" x2="${fmt(x2)}" y2="${fmt(y2)}" stroke="${colour}" stroke-width="1"/>`;
}

function text(
  x: number,
  y: number,
  content: string,
  o: { size?: number; weight?: string; anchor?: "start" | "middle" | "end"; fill?: string; rotate?: boolean } = {},
): string {
  const attrs = [
    `x="${fmt(x)}"`,
    `y="${fmt(y)}"`,
    o.size ? `font-size="${o.size}"` : "",
    o.weight ? `font-weight="${o.weight}"` : "",
    o.anchor && o.anchor !== "start" ? `text-anchor="${o.anchor}"` : "",
    o.fill ? `fill="${o.fill}"` : "",
    o.rotate ? `transform="rotate(-90 ${fmt(x)} ${fmt(y)})"` : "",
  ].filter(Boolean);
  return `<text ${attrs.join(" ")}>${escapeXml(content)}</text>`;
}

function escapeXml(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}
