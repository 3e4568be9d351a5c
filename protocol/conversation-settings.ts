/**
 * A conversation's settings (conversation.create / .update, `step`
 * overrides, and the configuration's `conversations.settings`), and the
 * names and modes they refer to. Kept apart from records.ts, which re-exports
 * them (`export *`), because the configuration is parsed at every start and
 * needs only these: records.ts, with the message, tool call and state records
 * and what they import (attachments, usage, tools, file changes), is built
 * when a request or a stored conversation first needs it.
 */
import * as z from "zod";
import { ruleCheck } from "./schema-rule-check.js";
import { DEFAULT_CONVERSATION_SETTINGS, MAX_APPROVAL_RULES, MAX_TOOL_POLICY_ENTRIES, MODE_NAME_PATTERN, TOOL_POLICY_KEY_PATTERN } from "./settings-defaults.js";

export { DEFAULT_CONVERSATION_SETTINGS, MAX_APPROVAL_RULES, MAX_TOOL_POLICY_ENTRIES, MODE_NAME_PATTERN, TOOL_POLICY_KEY_PATTERN } from "./settings-defaults.js";

/** A mode's id (protocol/modes.ts): which ones exist depends on the configuration, so the server checks it against its modes. */
export const ModeName = z
  .string()
  .regex(MODE_NAME_PATTERN, "must be 1–32 of a–z, 0–9, _ and -, starting with a letter (a mode from modes.list)")
  .describe("A mode's id, as modes.list gives it (e.g. \"plan\").");

export const ApprovalMode = z
  .enum(["ask", "auto-read-only", "auto"])
  .describe(
    "Which tool calls run without tool.confirm. ask: none (every call waits); auto-read-only: calls of tools annotated readOnlyHint; auto: every call. settings.toolPolicy overrides it per tool.",
  );

export const ToolPolicyRule = z
  .enum(["always", "ask", "never"])
  .describe(
    "always: runs without asking; ask: waits for tool.confirm whatever settings.approval says; never: not offered to the model, and a call to it fails at once without running.",
  );

export const ToolPolicy = z
  .record(
    z.string().regex(TOOL_POLICY_KEY_PATTERN),
    ToolPolicyRule,
    {
      error: (issue) =>
        issue.code === "invalid_key" ? "not a tool name: letters, digits, _ and - (at most 64), optionally ending in * (a prefix)" : undefined,
    },
  )
  .check(ruleCheck("toolPolicy size"))
  .describe(
    "Per-tool overrides of settings.approval, by tool name. A key ending in * matches every tool whose name starts with what comes before it (e.g. \"mcp__github__*\"); an exact name beats a prefix, and the longest matching prefix beats shorter ones.",
  );

export const ApprovalRule = z
  .strictObject({
    tool: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "not a tool name: letters, digits, _ and - (at most 64)").describe("The tool the rule approves (as tools.list names it)."),
    prefix: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe(
        "For `shell` only: the command prefix the rule approves, one word (e.g. \"ls\") or two for the tools listed in docs/tools.md that take a subcommand (e.g. \"git status\"). A call matches when its command's own prefix, computed the same way, is exactly this one, and the command is a single simple command (no ; & | < > ` $ ( ) or line break anywhere in it). Absent: every call of the tool.",
      ),
  })
  .describe("A remembered approval (tool.confirm `remember`): calls it matches run without asking (tool_pending autoReason \"rule\").");

export const ApprovalRules = z
  .array(ApprovalRule)
  .max(MAX_APPROVAL_RULES)
  .describe(`Remembered approvals, at most ${MAX_APPROVAL_RULES}.`);

/**
 * Generation controls: one schema each, shared by conversation settings and
 * `step` overrides, so both refuse the same values with the same words.
 */
export const Temperature = z.number().min(0).max(2);
export const MaxTokens = z.number().int().min(1).max(10_000_000);
export const ReasoningLevel = z
  .enum(["off", "low", "medium", "high"])
  .describe(
    "How much a reasoning model should think: low, medium and high are sent as the endpoint's reasoning effort (`reasoning_effort`); off sends nothing (Chat Completions has no value every server accepts for \"no reasoning\"; a model that cannot reason never gets the field).",
  );

export const ConversationSettings = z
  .object({
    toolHistoryRounds: z
      .number()
      .int()
      .min(0)
      .max(10_000)
      .describe(
        `How many of the most recent tool calls reach the model in full; older ones are reduced to their name (arguments and result dropped). Default ${DEFAULT_CONVERSATION_SETTINGS.toolHistoryRounds}.`,
      ),
    maxIterations: z
      .number()
      .int()
      .min(1)
      .max(1_000)
      .describe(`Most model calls one \`step\` may make before it stops with a stored notice. Default ${DEFAULT_CONVERSATION_SETTINGS.maxIterations}.`),
    toolTimeoutMs: z
      .number()
      .int()
      .min(100)
      .max(86_400_000)
      .describe(
        `Per-tool-call time limit in milliseconds; on expiry the tool's whole process group is killed. Default: the server's --tool-timeout (${DEFAULT_CONVERSATION_SETTINGS.toolTimeoutMs} unless set).`,
      ),
    // The three approval settings are optional in the schema because conversations stored before they
    // existed lack them; the server reads an absent one as its default.
    approval: ApprovalMode.optional().describe(
      `${ApprovalMode.description} Default "${DEFAULT_CONVERSATION_SETTINGS.approval}" (also when absent, in conversations stored before this setting). A mode with an approval of its own (settings.mode: ask, plan, auto) takes its place while the conversation is in it.`,
    ),
    toolPolicy: ToolPolicy.optional().describe(
      `${ToolPolicy.description} conversation.update replaces the whole map. Default {} (no overrides).`,
    ),
    approvalRules: ApprovalRules.optional().describe(
      `Approvals remembered for this conversation: tool.confirm \"confirm\" with remember \"conversation\" adds one (the call's tool_pending \"rememberAs\"). A call a rule matches runs without asking (autoReason \"rule\"), unless settings.toolPolicy says never. conversation.update replaces the whole list; at most ${MAX_APPROVAL_RULES}. Default [] (also when absent).`,
    ),
    confirmTimeoutMs: z
      .number()
      .int()
      .min(100)
      .max(86_400_000)
      .nullable()
      .optional()
      .describe(
        "How long an offered tool call may wait for tool.confirm, in milliseconds, counted from its tool_pending (a call offered again after a server restart gets a fresh wait). When it passes, the call is skipped with reason \"timeout\" and the generation goes on: the model learns that nobody confirmed it. null (the default): wait forever.",
      ),
    temperature: Temperature.nullable()
      .optional()
      .describe("Sampling temperature, 0–2, sent with every model call as `temperature`. Null or absent: unset (the endpoint's own default)."),
    maxTokens: MaxTokens.nullable()
      .optional()
      .describe("Most tokens the model may write in one model call (sent as `max_tokens`). Null or absent: unset (the endpoint's own limit)."),
    reasoning: ReasoningLevel.nullable()
      .optional()
      .describe("Reasoning effort: off, low, medium or high (low–high sent as `reasoning_effort`; off sends nothing). Null or absent: unset (the model's default)."),
    mode: ModeName.optional().describe(
      "The conversation's mode (modes.list): a preset of tools offered, approval policy, system prompt addendum and optionally model and reasoning effort. A change applies from the next model call, a running step's included. Must name a mode the server has (INVALID_PARAMS lists them). Absent: \"code\", the default, which changes nothing.",
    ),
    autoCompact: z
      .number()
      .min(0)
      .max(1)
      .nullable()
      .optional()
      .describe(
        `Automatic compaction: when the next model request would fill more than this fraction of the model's declared contextWindow (estimated from the last call's context tokens plus the new input), the conversation is compacted first (see conversation.compact); also once when the endpoint answers that the context is too long (the call is then retried). Default ${DEFAULT_CONVERSATION_SETTINGS.autoCompact} (also when absent). null or 0: off. Always off for a model without a declared contextWindow, except for the retry after a context-length error.`,
      ),
  })
  .describe("Per-conversation settings; every field has a server default.");

export const ConversationSettingsPatch = ConversationSettings.partial().strict().describe(
  "Settings to change; fields left out keep their value.",
);

export type ConversationSettings = z.infer<typeof ConversationSettings>;
export type ApprovalMode = z.infer<typeof ApprovalMode>;
export type ToolPolicyRule = z.infer<typeof ToolPolicyRule>;
export type ToolPolicy = z.infer<typeof ToolPolicy>;
export type ReasoningLevel = z.infer<typeof ReasoningLevel>;
export type ApprovalRule = z.infer<typeof ApprovalRule>;
