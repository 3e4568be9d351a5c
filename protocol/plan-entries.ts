/**
 * A plan's entries, as the built-in `update_plan` tool takes them (its
 * parameters are built with the server) and as a plan holds them. Apart from
 * plan.ts (which re-exports them), whose stored plan, with its timestamp, is
 * built when a request or a stored conversation first needs it.
 */
import * as z from "zod";

import { MAX_PLAN_ENTRIES, MAX_PLAN_ENTRY_CHARS } from "./limits/plans.js";

export * from "./limits/plans.js";

export const PlanEntryStatus = z
  .enum(["pending", "in_progress", "completed"])
  .describe("pending: not started; in_progress: being worked on now (usually one at a time); completed: done.");

export const PlanEntryPriority = z.enum(["high", "medium", "low"]).describe("How much the entry matters, as the model sees it.");

export const PlanEntry = z
  .strictObject({
    content: z
      .string()
      .trim()
      .min(1, "must not be empty")
      .max(MAX_PLAN_ENTRY_CHARS, `must be at most ${MAX_PLAN_ENTRY_CHARS} characters`)
      // Latin-1 only, like every built-in tool's text (test/tools/builtin-tool-schemas.test.ts says why).
      .describe(`What the step is, in a short sentence (1 to ${MAX_PLAN_ENTRY_CHARS} characters).`),
    status: PlanEntryStatus,
    priority: PlanEntryPriority.optional().describe("How much it matters; absent when the model did not say."),
  })
  .describe("One step of the plan.");

export const PlanEntries = z
  .array(PlanEntry)
  .max(MAX_PLAN_ENTRIES, `must hold at most ${MAX_PLAN_ENTRIES} entries`)
  .describe(`The whole plan, in order (at most ${MAX_PLAN_ENTRIES} entries); an empty list clears it.`);

export type PlanEntry = z.infer<typeof PlanEntry>;
