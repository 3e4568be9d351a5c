/**
 * Constants of client-tools.ts that the server's start path reads, kept apart
 * from its zod schemas, which only requests need (they are built when the
 * dispatcher first loads the inventory, src/rpc/dispatcher.ts). client-
 * tools.ts re-exports them (`export *`), so its importers need not change; but
 * server code imports them through protocol/index.ts (or from this file):
 * package.json "sideEffects" lets esbuild skip client-tools.ts, and its
 * schemas, for a name re-exported through index.ts, whereas importing the name
 * from client-tools.ts itself brings that module into the bundle's start
 * chunks (test/bundle/start-path-schemas.test.ts).
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
