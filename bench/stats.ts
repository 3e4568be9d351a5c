/**
 * Small statistics for the benchmark: medians, nearest-rank percentiles and
 * the spread of a figure across server launches.
 */

export function sorted(values: readonly number[]): number[] {
  return [...values].sort((a, b) => a - b);
}

/** Nearest-rank percentile (q in 0..1) of unsorted values; NaN when empty. */
export function percentile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const s = sorted(values);
  const rank = Math.ceil(q * s.length);
  return s[Math.min(s.length - 1, Math.max(0, rank - 1))];
}

/** Median (mean of the two middle values for an even count); NaN when empty. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const s = sorted(values);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

export function mean(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  let sum = 0;
  for (const v of values) sum += v;
  return sum / values.length;
}

/** [min, max]; undefined when empty. */
export function range(values: readonly number[]): [number, number] | undefined {
  if (values.length === 0) return undefined;
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of values) {
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  return [lo, hi];
}

/**
 * One figure measured over several server launches: `perLaunch[i]` holds the
 * samples of launch i (one per measured turn, or a single value per launch).
 */
export interface Measured {
  /** Median of every sample, launches pooled. */
  median: number;
  /** Min and max of the per-launch medians (the launch-to-launch spread). */
  spread: [number, number] | undefined;
  /** launches × samples, e.g. "3×5". */
  n: string;
}

export function summarize(perLaunch: readonly (readonly number[])[]): Measured {
  const launches = perLaunch.filter((samples) => samples.length > 0);
  const all = launches.flat();
  const counts = new Set(launches.map((samples) => samples.length));
  const n = launches.length === 0 ? "0" : `${launches.length}×${counts.size === 1 ? [...counts][0] : [...counts].join("/")}`;
  return { median: median(all), spread: range(launches.map((samples) => median(samples))), n };
}

/**
 * A row's figure with its floor measured in the same launches: median and
 * spread of each, so the report can print the ratio or the difference.
 */
export function summarizeWithFloor(
  perLaunch: readonly (readonly number[])[],
  floorPerLaunch: readonly (readonly number[])[],
  note?: string,
): Measured & { floor: number; floorSpread: [number, number] | undefined; note?: string } {
  const floor = summarize(floorPerLaunch);
  return { ...summarize(perLaunch), floor: floor.median, floorSpread: floor.spread, ...(note === undefined ? {} : { note }) };
}

/** Nanoseconds (bigint difference) to milliseconds. */
export function nsToMs(ns: bigint): number {
  return Number(ns) / 1e6;
}
