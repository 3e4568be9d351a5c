/**
 * Bounds of the configuration's modes: plain data, no zod, for the named rule
 * that checks their count (schema-rules.ts). modes.ts re-exports them.
 */

/** Most modes one configuration may declare (built-ins included): modes.list carries them all. */
export const MAX_MODES = 50;
/** Most names one mode's `allow` or `deny` may hold. */
export const MAX_MODE_TOOL_NAMES = 200;
/** Longest system prompt addendum of one mode, in characters. */
export const MAX_MODE_PROMPT_CHARS = 20_000;
