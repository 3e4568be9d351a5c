/**
 * The plan a fork starts with: the plan as it was at the fork point. The
 * plan changes only by update_plan calls, each stored as a tool call record
 * whose arguments are the whole plan, and a call completes only once its
 * plan is stored (conversation-runtime.ts updatePlan). So the copied
 * records tell exactly which plan held at the cut: the last completed
 * update_plan call's — not the original's current one, which may come from
 * records the fork leaves out, and which the fork's model would not see.
 */
import type { ConversationRecord, Plan } from "../../protocol/index.js";
import { UPDATE_PLAN_PARAMETERS, UPDATE_PLAN_TOOL } from "../tools/plan/update-plan.js";
import { checkArguments } from "../tools/validate-arguments.js";

/**
 * The plan a record set, if it is a completed update_plan call of one of
 * the server's generations. An imported call (no generationId) never set
 * one: an import starts without a plan. Read with the tool's own parameters
 * (whose zod schema, which trims the entries, loads at the first such call).
 */
export async function planSetBy(record: ConversationRecord): Promise<Plan | undefined> {
  if (record.type !== "tool_call" || record.toolName !== UPDATE_PLAN_TOOL || record.status !== "completed" || !record.generationId) return undefined;
  const checked = await checkArguments(UPDATE_PLAN_PARAMETERS, record.arguments);
  if (!checked.ok) return undefined;
  return { entries: checked.value.entries, generationId: record.generationId, updatedAt: record.completedAt ?? record.timestamp };
}
