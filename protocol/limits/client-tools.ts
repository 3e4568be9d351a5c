/**
 * Constants of client-tools.ts that the server's start path reads, kept apart from
 * its zod schemas: client-tools.ts re-exports them (`export *`), so they are imported
 * from there or from protocol/index.ts as before, and a bundle that uses only
 * these builds none of client-tools.ts's schemas (package.json "sideEffects" lets
 * esbuild skip the module). The schemas are built when the dispatcher first
 * loads the inventory (src/rpc/dispatcher.ts).
 */
/** Most tools one connection registers on one conversation. */
export const MAX_CLIENT_TOOLS = 32;
/** Longest description of a client tool, in characters. */
export const MAX_CLIENT_TOOL_DESCRIPTION_CHARS = 4096;
/** Largest parameters schema of a client tool, as JSON, in characters. */
export const MAX_CLIENT_TOOL_SCHEMA_CHARS = 16 * 1024;
/** Longest tool.result output, in characters (the model reads it whole, like any tool output). */
export const MAX_CLIENT_TOOL_OUTPUT_CHARS = 256 * 1024;
/** Conversations one connection may hold client tools on at once. */
export const MAX_CLIENT_TOOL_CONVERSATIONS = 100;
