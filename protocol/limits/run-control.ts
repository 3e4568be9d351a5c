/**
 * Constants of run-control.ts that the server's start path reads, kept apart from
 * its zod schemas: run-control.ts re-exports them (`export *`), so they are imported
 * from there or from protocol/index.ts as before, and a bundle that uses only
 * these builds none of run-control.ts's schemas (package.json "sideEffects" lets
 * esbuild skip the module). The schemas are built when the dispatcher first
 * loads the inventory (src/rpc/dispatcher.ts).
 */
/** The longest one generation.wait may wait: a bot that needs longer asks again. */
export const MAX_WAIT_MS = 600_000;
export const DEFAULT_WAIT_MS = 60_000;
