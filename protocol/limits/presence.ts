/**
 * Constants of presence.ts that the server's start path reads, kept apart from
 * its zod schemas, which only requests need (they are built when the
 * dispatcher first loads the inventory, src/rpc/dispatcher.ts). presence.ts
 * re-exports them (`export *`), so its importers need not change; but server
 * code imports them through protocol/index.ts (or from this file):
 * package.json "sideEffects" lets esbuild skip presence.ts, and its schemas,
 * for a name re-exported through index.ts, whereas importing the name from
 * presence.ts itself brings that module into the bundle's start chunks
 * (test/bundle/start-path-schemas.test.ts).
 */
/** At most this many subscribers are listed in `clients`; `count` is always the full number. */
export const PRESENCE_CLIENTS_MAX = 32;
