/**
 * Constants of subagents.ts that the server's start path reads, kept apart
 * from its zod schemas, which only requests need (they are built when the
 * dispatcher first loads the inventory, src/rpc/dispatcher.ts). subagents.ts
 * re-exports them (`export *`), so its importers need not change; but server
 * code imports them through protocol/index.ts (or from this file):
 * package.json "sideEffects" lets esbuild skip subagents.ts, and its schemas,
 * for a name re-exported through index.ts, whereas importing the name from
 * subagents.ts itself brings that module into the bundle's start chunks
 * (test/bundle/start-path-schemas.test.ts).
 */
/** The tool's name, as tools.list and settings.toolPolicy name it (`{ "spawn_agent": "never" }` takes it away). */
export const SPAWN_AGENT_TOOL = "spawn_agent";
/** Longest prompt a spawn_agent call may give the child, in characters (limits.maxMessageBytes also applies). */
export const MAX_SPAWN_PROMPT_CHARS = 200_000;
