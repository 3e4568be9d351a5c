/**
 * Constants of commands.ts that the server's start path reads, kept apart from
 * its zod schemas: commands.ts re-exports them (`export *`), so they are imported
 * from there or from protocol/index.ts as before, and a bundle that uses only
 * these builds none of commands.ts's schemas (package.json "sideEffects" lets
 * esbuild skip the module). The schemas are built when the dispatcher first
 * loads the inventory (src/rpc/dispatcher.ts).
 */
/** Command templates read per directory; more are reported, not read. */
export const MAX_COMMAND_FILES = 200;
/** Largest template file read. */
export const MAX_COMMAND_BYTES = 64 * 1024;
