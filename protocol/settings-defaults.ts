/**
 * The conversation settings' defaults and bounds: plain data, no zod. The
 * server reads them on its start path; conversation-settings.ts builds the
 * settings' schemas with them and re-exports them.
 */

export const MODE_NAME_PATTERN = /^[a-z][a-z0-9_-]{0,31}$/;

/** Settings a conversation gets unless it names others (toolTimeoutMs: unless the server's --tool-timeout says otherwise). */
export const DEFAULT_CONVERSATION_SETTINGS = {
  toolHistoryRounds: 8,
  maxIterations: 20,
  toolTimeoutMs: 120_000,
  approval: "ask",
  toolPolicy: {},
  confirmTimeoutMs: null,
  autoCompact: 0.85,
} as const;

/** Most entries one `settings.toolPolicy` may hold (it is read on every tool call and every model request). */
export const MAX_TOOL_POLICY_ENTRIES = 200;

/** A tool name (as tools.list gives it), or a prefix of names ending in `*`. */
export const TOOL_POLICY_KEY_PATTERN = /^(?:[A-Za-z0-9_-]{1,64}|[A-Za-z0-9_-]{0,64}\*)$/;

/** Most rules one conversation's `settings.approvalRules` (or one workspace's approvals file) may hold. */
export const MAX_APPROVAL_RULES = 200;
