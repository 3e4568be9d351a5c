/**
 * The plan a fork starts with: the plan as it was at the fork point. The
 * plan changes only by update_plan calls, each stored as a tool call record
 * whose arguments are the whole plan, and a call completes only once its
 * plan is stored (conversation-runtime.ts updatePlan). So the copied
 * records tell exactly which plan held at the cut: the last completed
 * update_plan call's — not the original's current one, which may come from
 * records the fork leaves out, and which the fork's model would not see.
 */
import { PlanEntries, type ConversationRecord, type Plan } from "../../protocol/index.js";
import { UPDATE_PLAN_TOOL } from "../tools/plan/update-plan.js";

/**
 * The plan a record set, if it is a completed update_plan call of one of
 * the server's generations. An imported call (no generationId) never set
 * one: an import starts without a plan.
 */
export function planSetBy(record: ConversationRecord): Plan | undefined {
  if (record.type !== "tool_call" || record.toolName !== UPDATE_PLAN_TOOL || record.status !== "completed" || !record.generationId) return undefined;
  const entries = PlanEntries.safeParse(record.arguments.entries);
  if (!entries.success) return undefined;
  return { entries: entries.data, generationId: record.generationId, updatedAt: record.completedAt ?? record.timestamp };
}
