/** What a benchmark row is and what it aims at: shared by rows.ts and curve-rows.ts. */
export interface Target {
  op: "<=" | ">=";
  value: number;
  /**
   * What is compared with `value`: the median itself (default), the median ÷
   * the floor measured in the same run ("ratio"), or the median − the floor
   * ("added"). Absolute times move from run to run on shared machines; a
   * ratio or a difference to a floor measured alongside does not, much.
   */
  of?: "value" | "ratio" | "added";
  /** How the issue states it, e.g. "≥ 60k tok/s". */
  text: string;
}

export interface RowSpec {
  id: string;
  scenario: string;
  label: string;
  unit: string;
  target?: Target;
  /** Lower is better (for the ×floor column); default true. */
  lowerIsBetter?: boolean;
}
