/**
 * The agent's plan: a todo list the model keeps up to date with the built-in
 * `update_plan` tool, each call giving the whole list. The server stores the
 * latest one with the conversation (so it survives a restart), announces it
 * with `plan_updated` and shows it in the conversation's state.
 */
import * as z from "zod";

/** Most entries one plan holds. */
export const MAX_PLAN_ENTRIES = 50;
/** Longest entry text, in characters. */
export const MAX_PLAN_ENTRY_CHARS = 500;

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
      .describe(`What the step is, in a short sentence (1–${MAX_PLAN_ENTRY_CHARS} characters).`),
    status: PlanEntryStatus,
    priority: PlanEntryPriority.optional().describe("How much it matters; absent when the model did not say."),
  })
  .describe("One step of the plan.");

export const PlanEntries = z
  .array(PlanEntry)
  .max(MAX_PLAN_ENTRIES, `must hold at most ${MAX_PLAN_ENTRIES} entries`)
  .describe(`The whole plan, in order (at most ${MAX_PLAN_ENTRIES} entries); an empty list clears it.`);

export const Plan = z
  .object({
    entries: PlanEntries,
    generationId: z.string().describe("The generation whose update_plan call set it."),
    updatedAt: z.iso.datetime().describe("When it was set (ISO-8601 UTC)."),
  })
  .describe("The conversation's current plan, as the model's latest update_plan call left it.");

export type PlanEntry = z.infer<typeof PlanEntry>;
export type Plan = z.infer<typeof Plan>;
