/**
 * Constants of tools.ts that the server's start path reads, kept apart from
 * its zod schemas, which only requests need. tools.ts re-exports them
 * (`export *`), so its importers need not change; but start-path code imports
 * them through protocol/index.ts (or from this file), so that tools.ts and its
 * schemas stay out of the bundle's start chunks
 * (test/bundle/start-path-schemas.test.ts).
 */
/** Longest tool or call title, in characters (a longer one is cut and ends with …). */
export const MAX_TOOL_TITLE_CHARS = 120;
/** Most locations one call reports. */
export const MAX_TOOL_LOCATIONS = 20;
