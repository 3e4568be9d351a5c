/**
 * The zod schema of load_skill's arguments: imported when a call's arguments
 * need zod and by `npm run gen`, which writes it as data and JSON Schema
 * (src/tools/builtin-tool-schemas.ts; load-skill-tool.ts holds it as
 * builtinParameters).
 */
import * as z from "zod";

export const LoadSkillArguments = z.strictObject({
  name: z.string().min(1).max(64).describe("The skill's name, as listed in the system prompt."),
});
export type LoadSkillArguments = z.infer<typeof LoadSkillArguments>;
