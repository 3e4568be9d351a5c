/**
 * The zod schema of update_plan's arguments: imported when a call's
 * arguments need zod and by `npm run gen`, which writes it as data and JSON
 * Schema (builtin-tool-schemas.ts; update-plan.ts holds it as
 * builtinParameters).
 */
import * as z from "zod";
import { PlanEntries } from "../../../protocol/plan-entries.js";

export const UpdatePlanArguments = z.strictObject({
  entries: PlanEntries.describe(
    "The whole plan, in order: every step with its status (pending, in_progress, completed) and optionally its priority (high, medium, low). It replaces the previous plan; keep one step in_progress at a time.",
  ),
});
export type UpdatePlanArguments = z.infer<typeof UpdatePlanArguments>;
