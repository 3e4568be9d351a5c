/**
 * Constants of conversation.ts that the server's start path reads, kept apart
 * from its zod schemas, which only requests need (they are built when the
 * dispatcher first loads the inventory, src/rpc/dispatcher.ts).
 * conversation.ts re-exports them (`export *`), so its importers need not
 * change; but server code imports them through protocol/index.ts (or from this
 * file): package.json "sideEffects" lets esbuild skip conversation.ts, and its
 * schemas, for a name re-exported through index.ts, whereas importing the name
 * from conversation.ts itself brings that module into the bundle's start
 * chunks (test/bundle/start-path-schemas.test.ts).
 */
/** Most records one conversation.create may import (the frame limit, maxPayloadBytes, bounds their bytes). */
export const MAX_IMPORTED_RECORDS = 10_000;
