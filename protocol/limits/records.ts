/**
 * Constants of records.ts that the server's start path reads, kept apart from
 * its zod schemas, which only requests and stored conversations need (the
 * message, tool call and state records are built when the dispatcher first
 * loads the inventory, src/rpc/dispatcher.ts, or the store first reads a
 * conversation's run state). records.ts re-exports them (`export *`), so its
 * importers need not change; but start-path code imports them through
 * protocol/index.ts (or from this file), so that records.ts, and every schema
 * module it imports, stays out of the bundle's start chunks
 * (test/bundle/start-path-schemas.test.ts).
 */
/**
 * What a conversation id may look like. Ids become folder names in the store,
 * so the alphabet is safe there too (no dots, slashes or empty ids); the store
 * checks ids against this same pattern.
 */
export const CONVERSATION_ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

/**
 * Deepest nesting of arrays and objects the server accepts in the arguments a
 * model proposes (the arguments object itself is level 1). Deeper arguments
 * would cost a recursive walk (validation, storing, every notification) a
 * stack per level; no tool's schema needs more. A call over it fails at once.
 */
export const MAX_TOOL_ARGUMENT_DEPTH = 64;

/** A command's name: what follows the "/" a user types. */
export const COMMAND_NAME_PATTERN = "^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$";
