/**
 * Constants of run-control.ts that the server's start path reads, kept apart
 * from its zod schemas, which only requests need (they are built when the
 * dispatcher first loads the inventory, src/rpc/dispatcher.ts). run-control.ts
 * re-exports them (`export *`), so its importers need not change; but server
 * code imports them through protocol/index.ts (or from this file):
 * package.json "sideEffects" lets esbuild skip run-control.ts, and its
 * schemas, for a name re-exported through index.ts, whereas importing the name
 * from run-control.ts itself brings that module into the bundle's start chunks
 * (test/bundle/start-path-schemas.test.ts).
 */
/** The longest one generation.wait may wait: a bot that needs longer asks again. */
export const MAX_WAIT_MS = 600_000;
export const DEFAULT_WAIT_MS = 60_000;
