/**
 * Constants of conversation.ts that the server's start path reads, kept apart from
 * its zod schemas: conversation.ts re-exports them (`export *`), so they are imported
 * from there or from protocol/index.ts as before, and a bundle that uses only
 * these builds none of conversation.ts's schemas (package.json "sideEffects" lets
 * esbuild skip the module). The schemas are built when the dispatcher first
 * loads the inventory (src/rpc/dispatcher.ts).
 */
/** Most records one conversation.create may import (the frame limit, maxPayloadBytes, bounds their bytes). */
export const MAX_IMPORTED_RECORDS = 10_000;
