/**
 * Constants of generation.ts that code outside the method schemas reads (the
 * chat command's tool prompt), kept apart from its zod schemas: importing one
 * from generation.ts builds them, and the records' schemas they use.
 * generation.ts re-exports them (`export *`).
 */

/** Longest reason tool.confirm "skip" may pass on to the model. */
export const MAX_SKIP_MESSAGE_CHARS = 4000;
