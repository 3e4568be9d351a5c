/**
 * Constants of messages.ts that the server's start path reads, kept apart from
 * its zod schemas, which only requests need (they are built when the
 * dispatcher first loads the inventory, src/rpc/dispatcher.ts). messages.ts
 * re-exports them (`export *`), so its importers need not change; but server
 * code imports them through protocol/index.ts (or from this file):
 * package.json "sideEffects" lets esbuild skip messages.ts, and its schemas,
 * for a name re-exported through index.ts, whereas importing the name from
 * messages.ts itself brings that module into the bundle's start chunks
 * (test/bundle/start-path-schemas.test.ts).
 */
/** clientMessageIds remembered per conversation (the most recent ones); a retry older than this window appends again. */
export const CLIENT_MESSAGE_ID_WINDOW = 256;
