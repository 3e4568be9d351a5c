/**
 * Constants of presence.ts that the server's start path reads, kept apart from
 * its zod schemas: presence.ts re-exports them (`export *`), so they are imported
 * from there or from protocol/index.ts as before, and a bundle that uses only
 * these builds none of presence.ts's schemas (package.json "sideEffects" lets
 * esbuild skip the module). The schemas are built when the dispatcher first
 * loads the inventory (src/rpc/dispatcher.ts).
 */
/** At most this many subscribers are listed in `clients`; `count` is always the full number. */
export const PRESENCE_CLIENTS_MAX = 32;
