/** Bounds of a plan (plan-entries.ts, which re-exports them), kept apart from its zod schemas for code that reads only them. */
/** Most entries one plan holds. */
export const MAX_PLAN_ENTRIES = 50;
/** Longest entry text, in characters. */
export const MAX_PLAN_ENTRY_CHARS = 500;
