/**
 * update_plan: the model keeps a todo list of the task and shows its
 * progress. Each call gives the whole plan; the loop stores it with the
 * conversation and announces plan_updated (the tool itself only checks and
 * hands it back: it touches no file and runs no process, so it runs without
 * asking unless settings.toolPolicy says otherwise).
 */
import type { PlanEntry } from "../../../protocol/plan-entries.js";
import { builtinParameters } from "../tool-parameters.js";
import type { UpdatePlanArguments } from "./update-plan-arguments.js";
import type { Tool } from "../tool.js";

export const UPDATE_PLAN_TOOL = "update_plan";

/** The tool's parameters (also what a fork reads a stored call's plan with: fork-plan.ts). */
export const UPDATE_PLAN_PARAMETERS = builtinParameters<UpdatePlanArguments>(UPDATE_PLAN_TOOL, async () => (await import("./update-plan-arguments.js")).UpdatePlanArguments);


export function createUpdatePlanTool(): Tool<UpdatePlanArguments> {
  return {
    name: UPDATE_PLAN_TOOL,
    description:
      "Keep a plan of a task that takes several steps, for the user to follow: call it with the whole list of steps and their status " +
      "when you start such a task, and again whenever a step starts or is done. Not for simple one-step requests.",
    parameters: UPDATE_PLAN_PARAMETERS,
    annotations: { readOnlyHint: true, destructiveHint: false },
    source: "builtin",
    kind: "think",
    title: "Update plan",
    runsWithoutAsking: true,
    describeCall: (args) => (Array.isArray(args.entries) ? { title: `Update plan (${args.entries.length} ${args.entries.length === 1 ? "step" : "steps"})` } : {}),
    async run(args) {
      return { success: true, output: planSummary(args.entries), plan: args.entries };
    },
  };
}

/** What the model reads back: that it worked, and where the plan stands. */
function planSummary(entries: PlanEntry[]): string {
  if (entries.length === 0) return "Plan cleared.";
  const count = (status: PlanEntry["status"]) => entries.filter((e) => e.status === status).length;
  return `Plan updated: ${entries.length} ${entries.length === 1 ? "step" : "steps"} (${count("completed")} completed, ${count("in_progress")} in progress, ${count("pending")} pending).`;
}
