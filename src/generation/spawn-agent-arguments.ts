/**
 * The zod schema of spawn_agent's arguments: imported when a call's
 * arguments need zod and by `npm run gen`, which writes it as data and JSON
 * Schema (src/tools/builtin-tool-schemas.ts; spawn-agent.ts holds it as
 * builtinParameters).
 */
import * as z from "zod";
import { MAX_SPAWN_PROMPT_CHARS } from "../../protocol/limits/subagents.js";

export const SpawnAgentArguments = z.strictObject({
  prompt: z
    .string()
    .min(1)
    .max(MAX_SPAWN_PROMPT_CHARS)
    .describe("The task for the sub-agent, complete in itself: it sees nothing of this conversation but this text."),
  mode: z.string().min(1).max(64).optional().describe("The mode the sub-agent runs in (for example ask, plan, code or auto); default: this conversation's."),
  model: z.string().min(1).max(256).optional().describe("The model the sub-agent uses; default: the one this conversation uses now."),
});
export type SpawnAgentArguments = z.infer<typeof SpawnAgentArguments>;
