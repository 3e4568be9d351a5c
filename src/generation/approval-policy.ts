/**
 * Which tool calls need tool.confirm: a pure function of the tool's name and
 * annotations, the conversation's `settings.approval` / `settings.toolPolicy`
 * and, given the call, the remembered approvals (approval-rules.ts). The loop asks it when it offers a call, when it
 * stores one (a denied tool fails at once) and when it lists the tools for a
 * model request (a denied tool is not offered). In a mode with an approval
 * of its own, the loop passes settings with it in place of settings.approval
 * (modes.ts approvalSettingsIn).
 */
import type { ApprovalMode, ApprovalRule, ConversationSettings, ToolPolicy, ToolPolicyRule } from "../../protocol/index.js";
import { DEFAULT_CONVERSATION_SETTINGS } from "../../protocol/settings-defaults.js";
import type { ToolAnnotations } from "../tools/tool.js";
import { anyRuleMatches } from "../tools/approval-rules.js";

/**
 * run: without asking (the policy allows it); rule: without asking, because a
 * remembered approval matches it; ask: wait for tool.confirm (or the
 * auto-confirm budget); deny: never run it.
 */
export type ApprovalVerdict = "run" | "rule" | "ask" | "deny";

/** The part of the settings this module reads; absent fields (conversations stored before them) mean the defaults. */
export type ApprovalSettings = Pick<ConversationSettings, "approval" | "toolPolicy" | "approvalRules">;

/** The call itself, for remembered approvals: its arguments, and the workspace's rules (.agentwire/approvals.json) when there are any. */
export interface ApprovalCall {
  arguments: Record<string, unknown>;
  workspaceRules?: readonly ApprovalRule[];
}

/**
 * The toolPolicy rule that applies to a tool name: an exact key first, else
 * the longest `prefix*` key the name starts with; undefined when none does.
 */
export function toolPolicyRule(name: string, policy: ToolPolicy | undefined): ToolPolicyRule | undefined {
  if (!policy) return undefined;
  // Own keys only: a tool named "constructor" or "__proto__" must not find Object.prototype's members.
  if (Object.hasOwn(policy, name)) return policy[name];
  let best: { length: number; rule: ToolPolicyRule } | undefined;
  for (const [key, rule] of Object.entries(policy)) {
    if (!key.endsWith("*")) continue;
    const prefix = key.slice(0, -1);
    if (name.startsWith(prefix) && (!best || prefix.length > best.length)) best = { length: prefix.length, rule };
  }
  return best?.rule;
}

/**
 * What to do with a call of this tool under these settings. Remembered
 * approvals (settings.approvalRules, then the workspace's) apply, with `call`,
 * to whatever would otherwise ask, toolPolicy "ask" included (the user chose
 * to remember after being asked); never to a denied tool.
 */
export function approvalVerdict(
  tool: { name: string; annotations?: ToolAnnotations; runsWithoutAsking?: boolean },
  settings: ApprovalSettings,
  call?: ApprovalCall,
): ApprovalVerdict {
  const verdict = policyVerdict(tool, settings);
  if (verdict !== "ask" || !call) return verdict;
  const matches = (rules: readonly ApprovalRule[] | undefined) => anyRuleMatches(rules, tool.name, call.arguments);
  return matches(settings.approvalRules) || matches(call.workspaceRules) ? "rule" : "ask";
}

function policyVerdict(
  tool: { name: string; annotations?: ToolAnnotations; runsWithoutAsking?: boolean },
  settings: ApprovalSettings,
): ApprovalVerdict {
  const rule = toolPolicyRule(tool.name, settings.toolPolicy);
  if (rule === "never") return "deny";
  if (rule === "always") return "run";
  if (rule === "ask") return "ask";
  if (tool.runsWithoutAsking === true) return "run";
  const mode: ApprovalMode = settings.approval ?? DEFAULT_CONVERSATION_SETTINGS.approval;
  if (mode === "auto") return "run";
  // Only an explicit read-only annotation counts: a tool that says nothing may change anything.
  if (mode === "auto-read-only" && tool.annotations?.readOnlyHint === true) return "run";
  return "ask";
}

/** True when the conversation's policy forbids the tool: it is not offered to the model. */
export function isDeniedByPolicy(name: string, settings: ApprovalSettings): boolean {
  return toolPolicyRule(name, settings.toolPolicy) === "never";
}

/** What the model is told when it calls a tool the policy forbids. */
export function deniedByPolicyText(name: string): string {
  return `Tool "${name}" is not allowed by this conversation's policy (settings.toolPolicy says never); it was not run. Do not call it again.`;
}
