/**
 * Constants of commands.ts that the server's start path reads, kept apart from
 * its zod schemas, which only requests need (they are built when the
 * dispatcher first loads the inventory, src/rpc/dispatcher.ts). commands.ts
 * re-exports them (`export *`), so its importers need not change; but server
 * code imports them through protocol/index.ts (or from this file):
 * package.json "sideEffects" lets esbuild skip commands.ts, and its schemas,
 * for a name re-exported through index.ts, whereas importing the name from
 * commands.ts itself brings that module into the bundle's start chunks
 * (test/bundle/start-path-schemas.test.ts).
 */
/** Command templates read per directory; more are reported, not read. */
export const MAX_COMMAND_FILES = 200;
/** Largest template file read. */
export const MAX_COMMAND_BYTES = 64 * 1024;
