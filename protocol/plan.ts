/**
 * The agent's plan: a todo list the model keeps up to date with the built-in
 * `update_plan` tool, each call giving the whole list. The server stores the
 * latest one with the conversation (so it survives a restart), announces it
 * with `plan_updated` and shows it in the conversation's state.
 */
import * as z from "zod";
import { PlanEntries } from "./plan-entries.js";
export * from "./plan-entries.js";

export const Plan = z
  .object({
    entries: PlanEntries,
    generationId: z.string().describe("The generation whose update_plan call set it."),
    updatedAt: z.iso.datetime().describe("When it was set (ISO-8601 UTC)."),
  })
  .describe("The conversation's current plan, as the model's latest update_plan call left it.");

export type Plan = z.infer<typeof Plan>;
