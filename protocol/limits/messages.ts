/**
 * Constants of messages.ts that the server's start path reads, kept apart from
 * its zod schemas: messages.ts re-exports them (`export *`), so they are imported
 * from there or from protocol/index.ts as before, and a bundle that uses only
 * these builds none of messages.ts's schemas (package.json "sideEffects" lets
 * esbuild skip the module). The schemas are built when the dispatcher first
 * loads the inventory (src/rpc/dispatcher.ts).
 */
/** clientMessageIds remembered per conversation (the most recent ones); a retry older than this window appends again. */
export const CLIENT_MESSAGE_ID_WINDOW = 256;
