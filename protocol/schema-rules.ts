/**
 * Refinements as named rules: what a schema checks beyond the shape of each
 * field (which fields go together), written once as a plain function. A
 * schema applies one with `.check(ruleCheck(name))` (schema-rule-check.ts),
 * and the schema as data (schema-data.ts) names it, so the parse without zod
 * runs the very same function. A rule returns its issues (none: the value
 * passes); the path is within the value the rule checks.
 */
import { MAX_MODES } from "./limits/modes.js";
import { MAX_TOOL_POLICY_ENTRIES } from "./settings-defaults.js";
import { unknownPlaceholderMessage, unknownPlaceholders } from "./system-prompt-template.js";

export interface RuleIssue {
  path: (string | number)[];
  message: string;
}

interface MessageAppendFields {
  content?: string;
  command?: string;
  arguments?: string;
}

interface ToolConfirmFields {
  action: string;
  arguments?: unknown;
  remember?: string;
  message?: string;
  count?: number;
}

export const SCHEMA_RULES = {
  /** message.append: exactly one of content and command, and arguments only with command; named by the field a client should look at. */
  "message.append fields": (params: MessageAppendFields): RuleIssue[] => {
    const issues: RuleIssue[] = [];
    if (params.content === undefined && params.command === undefined) issues.push({ path: ["content"], message: "content (or command) is required" });
    else if (params.content !== undefined && params.command !== undefined) issues.push({ path: ["command"], message: "give content or command, not both" });
    if (params.arguments !== undefined && params.command === undefined) issues.push({ path: ["arguments"], message: "arguments go with command" });
    return issues;
  },
  /** tool.confirm: each optional field only with the action it belongs to (arguments required with edit). */
  "tool.confirm fields": (v: ToolConfirmFields): RuleIssue[] => {
    const issues: RuleIssue[] = [];
    if (v.action === "edit" && v.arguments === undefined) issues.push({ path: ["arguments"], message: 'arguments is required when action is "edit"' });
    if (v.action !== "edit" && v.arguments !== undefined) issues.push({ path: ["arguments"], message: 'arguments is only allowed when action is "edit"' });
    if (v.action !== "confirm" && v.remember !== undefined) issues.push({ path: ["remember"], message: 'remember is only allowed when action is "confirm"' });
    if (v.action !== "skip" && v.message !== undefined) issues.push({ path: ["message"], message: 'message is only allowed when action is "skip"' });
    if (v.action !== "auto" && v.count !== undefined) issues.push({ path: ["count"], message: 'count is only allowed when action is "auto"' });
    return issues;
  },
  /** settings.toolPolicy: at most MAX_TOOL_POLICY_ENTRIES entries (it is read on every tool call and every model request). */
  "toolPolicy size": (policy: Record<string, unknown>): RuleIssue[] =>
    Object.keys(policy).length <= MAX_TOOL_POLICY_ENTRIES ? [] : [{ path: [], message: `at most ${MAX_TOOL_POLICY_ENTRIES} entries` }],
  /** conversations.systemPrompt: only the known placeholders (an unknown one would reach the model as literal text). */
  "systemPrompt placeholders": (template: string): RuleIssue[] => {
    const unknown = unknownPlaceholders(template);
    return unknown.length > 0 ? [{ path: [], message: unknownPlaceholderMessage(unknown) }] : [];
  },
  /** One word of tools.shell.command: a NUL byte cannot pass to exec. */
  "no NUL byte": (part: string): RuleIssue[] => (part.includes("\0") ? [{ path: [], message: "must not contain a NUL byte" }] : []),
  /** The configuration's modes: at most MAX_MODES with the four built-in ones. */
  "modes count": (modes: Record<string, unknown>): RuleIssue[] =>
    Object.keys(modes).length <= MAX_MODES - 4 ? [] : [{ path: [], message: `at most ${MAX_MODES - 4} entries (${MAX_MODES} modes with the built-in ones)` }],
  /** A conversation's MCP servers: each its own name. */
  "MCP server names unique": (servers: readonly { name: string }[]): RuleIssue[] => {
    const seen = new Set<string>();
    const issues: RuleIssue[] = [];
    for (const [i, server] of servers.entries()) {
      if (seen.has(server.name)) issues.push({ path: [i, "name"], message: `"${server.name}" is named twice: each server of a conversation needs its own name` });
      seen.add(server.name);
    }
    return issues;
  },
  /** A file attachment's line range: end not before start. */
  "line range order": (range: { start: number; end: number }): RuleIssue[] => (range.end >= range.start ? [] : [{ path: ["end"], message: "end must not be before start" }]),
} as const;

export type SchemaRuleName = keyof typeof SCHEMA_RULES;
