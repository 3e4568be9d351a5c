/**
 * The zod schema of a workspace's approvals file (workspace-approvals.ts),
 * imported when a workspace first has one: neither zod nor the settings'
 * schemas it reuses load on the server's start path.
 */
import * as z from "zod";
import { ApprovalRule } from "../../protocol/conversation-settings.js";
import { MAX_APPROVAL_RULES } from "../../protocol/settings-defaults.js";

export const ApprovalsFile = z.strictObject({ rules: z.array(ApprovalRule).max(MAX_APPROVAL_RULES) });
