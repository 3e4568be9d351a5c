/** The SVG line-chart writer: geometry of the log axis, spread bars, empty panels, escaping. */
import { expect, it } from "vitest";
import { lineChartSvg, type Chart } from "./chart-svg.js";

const circles = (svg: string) => [...svg.matchAll(/<circle cx="([\d.]+)" cy="([\d.]+)"/g)].map((m) => ({ x: Number(m[1]), y: Number(m[2]) }));

function chart(points: { x: number; y: number; lo?: number; hi?: number }[], extra: Partial<Chart> = {}): Chart {
  return { title: "T", xLabel: "n", xLog: true, panels: [{ title: "p99", unit: "ms", series: [{ name: "measured", points }] }], ...extra };
}

it("places 1 / 10 / 100 evenly on a log x axis and 500 between 100 and the edge", () => {
  const svg = lineChartSvg(chart([1, 10, 100, 500].map((x) => ({ x, y: x }))));
  const [a, b, c, d] = circles(svg).map((p) => p.x);
  expect(b - a).toBeCloseTo(c - b, 1);
  expect(d - c).toBeCloseTo((c - b) * Math.log10(5), 1);
  // Tick labels at the data's x values.
  for (const label of [">1<", ">10<", ">100<", ">500<"]) expect(svg).toContain(label);
});

it("draws higher values higher, from 0 on a linear y axis, with round ticks", () => {
  const svg = lineChartSvg(chart([{ x: 1, y: 2 }, { x: 10, y: 9 }], { xLog: false }));
  const [low, high] = circles(svg);
  expect(high.y).toBeLessThan(low.y);
  expect(svg).toMatch(/>0<\/text>/);
  expect(svg).toMatch(/>10<\/text>/);
});

it("draws a min–max bar only where a point has a spread", () => {
  // Lines in the series' colour (the first of the palette): the bar and its two caps.
  const lines = (svg: string) => (svg.match(/<line [^>]*stroke="#0072B2"/g) ?? []).length;
  const plain = lineChartSvg(chart([{ x: 1, y: 5 }, { x: 10, y: 6 }]));
  const spread = lineChartSvg(chart([{ x: 1, y: 5, lo: 4, hi: 7 }, { x: 10, y: 6 }]));
  expect(lines(spread) - lines(plain)).toBe(3);
});

it("says so when a panel has no data, and escapes text", () => {
  const svg = lineChartSvg(chart([], { title: "a < b & c" }));
  expect(svg).toContain("no data in this run");
  expect(svg).toContain("a &lt; b &amp; c");
  expect(svg.startsWith("<svg ")).toBe(true);
  expect(svg.trim().endsWith("</svg>")).toBe(true);
  expect((svg.match(/<g>/g) ?? []).length).toBe((svg.match(/<\/g>/g) ?? []).length);
});
