/**
 * Constants of file-changes.ts that the server's start path reads, kept apart from
 * its zod schemas, which only requests need. file-changes.ts re-exports them
 * (`export *`), so its importers need not change; but start-path code imports
 * them through protocol/index.ts (or from this file), so that file-changes.ts and its
 * schemas stay out of the bundle's start chunks
 * (test/bundle/start-path-schemas.test.ts).
 */
/** Most entries one list of changes carries (one per file). */
export const MAX_FILE_CHANGES = 256;

/**
 * Most bytes of diff text one list of a generation's changes carries
 * (generation_diff_updated, conversation.diff); past it, the later files'
 * diffs are replaced by a note (each file's own diff is capped at 64 KiB).
 */
export const MAX_GENERATION_DIFF_BYTES = 1024 * 1024;
