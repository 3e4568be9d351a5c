import type { BenchConfig } from "../config.js";
import type { RowResult } from "../rows.js";

export interface ScenarioContext {
  cfg: BenchConfig;
  /** Progress lines (stderr). */
  log(line: string): void;
}

export interface Scenario {
  name: string;
  /** Ids (rows.ts) of the rows this scenario fills. */
  rows: string[];
  /** What it runs, e.g. "2000 tokens, 3 launches × (1 warm-up + 5 turns)". */
  describe(cfg: BenchConfig): string;
  run(ctx: ScenarioContext): Promise<Record<string, RowResult>>;
}

/** Runs `warmup + turns` turns and returns the measured ones' results. */
export async function turns<T>(cfg: { warmup: number; turns: number }, turn: (index: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < cfg.warmup + cfg.turns; i++) {
    const result = await turn(i);
    if (i >= cfg.warmup) out.push(result);
  }
  return out;
}

export function launchesText(cfg: BenchConfig, turnsPerLaunch = cfg.turns): string {
  return `${cfg.launches} launch${cfg.launches === 1 ? "" : "es"} × (${cfg.warmup} warm-up + ${turnsPerLaunch} turns)`;
}
