/**
 * Constants of subagents.ts that the server's start path reads, kept apart from
 * its zod schemas: subagents.ts re-exports them (`export *`), so they are imported
 * from there or from protocol/index.ts as before, and a bundle that uses only
 * these builds none of subagents.ts's schemas (package.json "sideEffects" lets
 * esbuild skip the module). The schemas are built when the dispatcher first
 * loads the inventory (src/rpc/dispatcher.ts).
 */
/** The tool's name, as tools.list and settings.toolPolicy name it (`{ "spawn_agent": "never" }` takes it away). */
export const SPAWN_AGENT_TOOL = "spawn_agent";
/** Longest prompt a spawn_agent call may give the child, in characters (limits.maxMessageBytes also applies). */
export const MAX_SPAWN_PROMPT_CHARS = 200_000;
