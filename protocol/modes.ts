/**
 * Modes: named presets a conversation switches between with
 * `settings.mode` (conversation.update). A mode changes, from the next model
 * call, which tools are offered, how tool calls are approved, what is
 * appended to the system prompt and (optionally) the model and reasoning
 * effort. The built-in modes are defined here, once; the configuration's
 * `modes` key adds modes or changes built-in ones (merged by name, field by
 * field). modes.list describes them in a shape that maps onto ACP's session
 * modes (`id`, `name`, `description`).
 */
import * as z from "zod";
import { ApprovalMode, ModeName, ReasoningLevel, TOOL_POLICY_KEY_PATTERN } from "./conversation-settings.js";


import { MAX_MODE_PROMPT_CHARS, MAX_MODE_TOOL_NAMES } from "./limits/modes.js";
import { ruleCheck } from "./schema-rule-check.js";

export * from "./limits/modes.js";

const ToolNames = z
  .array(z.string().regex(TOOL_POLICY_KEY_PATTERN, "not a tool name: letters, digits, _ and - (at most 64), optionally ending in * (a prefix)"))
  .max(MAX_MODE_TOOL_NAMES);

export const ModeTools = z
  .enum(["all", "read-only"])
  .describe(
    "Which tools the mode offers the model. all: every tool (as settings.toolPolicy allows); read-only: only tools annotated readOnlyHint (read_file, list_files, search_files, web_search, load_skill, update_plan and MCP tools that say so).",
  );

/** The fields a mode is made of, as the configuration writes them (every one optional: a built-in's change names only what it changes). */
const modeFields = {
  name: z.string().min(1).max(100).optional().describe("What a person sees (a mode picker's label). Default: the id with its first letter capitalized."),
  description: z.string().max(1000).optional().describe("One sentence on what the mode is for (shown beside the name)."),
  prompt: z
    .string()
    .max(MAX_MODE_PROMPT_CHARS)
    .optional()
    .describe(
      "Text appended to the system prompt (after a blank line) on every model call in this mode, whether the conversation has its own system prompt or the configured template. Absent or \"\": nothing is appended.",
    ),
  approval: ApprovalMode.optional().describe(
    "The approval policy in this mode; it takes the place of settings.approval. settings.toolPolicy (per tool: always, ask, never) and remembered approvals still apply over it. Absent: settings.approval applies.",
  ),
  tools: ModeTools.optional().describe("Which tools are offered. Default all."),
  allow: ToolNames.optional().describe(
    "Tool names (or prefixes ending in *) offered besides what `tools` offers, e.g. [\"update_plan\"] with tools read-only.",
  ),
  deny: ToolNames.optional().describe(
    "Tool names (or prefixes ending in *) never offered in this mode, whatever `tools` and `allow` say. A call to one fails at once without running.",
  ),
  model: z.string().min(1).max(200).optional().describe("The model of every model call in this mode, unless the step names its own (`step { model }`). Absent: the conversation's."),
  reasoning: ReasoningLevel.optional().describe("Reasoning effort in this mode, unless the step names its own. Absent: settings.reasoning."),
};

export const ModeDefinition = z
  .strictObject(modeFields)
  .describe("A mode as the configuration declares it; for a built-in mode, only the fields that change it.");

export const ModesConfig = z
  .record(ModeName, ModeDefinition, {
    error: (issue) => (issue.code === "invalid_key" ? "not a mode name: 1–32 of a–z, 0–9, _ and -, starting with a letter" : undefined),
  })
  .check(ruleCheck("modes count"))
  .describe(
    "Modes besides the built-in ones (ask, plan, code, auto), or changes to those (merged field by field with the built-in of that name). A conversation picks one with settings.mode; modes.list lists them.",
  );

export const Mode = z
  .object({
    id: ModeName,
    name: z.string().describe("What a person sees."),
    description: z.string().describe("What the mode is for; empty when it says nothing."),
    prompt: z.string().describe("Appended to the system prompt in this mode; empty when nothing is."),
    approval: ApprovalMode.nullable().describe("The approval policy in this mode (over settings.approval); null: settings.approval applies."),
    tools: ModeTools,
    allow: z.array(z.string()).describe("Tool names (or prefixes ending in *) offered besides `tools`."),
    deny: z.array(z.string()).describe("Tool names (or prefixes ending in *) never offered in this mode."),
    model: z.string().nullable().describe("The model in this mode, unless the step names one; null: the conversation's."),
    reasoning: ReasoningLevel.nullable().describe("Reasoning effort in this mode, unless the step names one; null: settings.reasoning."),
    builtIn: z.boolean().describe("True for ask, plan, code and auto (even when the configuration changed them)."),
  })
  .describe("A mode as modes.list describes it: every field resolved.");


export const ModesListParams = z.strictObject({}).describe("No parameters. A conversation's current mode is its settings.mode (absent: the default).");

export const ModesListResult = z
  .object({
    modes: z.array(Mode).describe("Every mode, built-in ones first."),
    default: ModeName.describe("The mode of a conversation whose settings.mode is absent (\"code\")."),
  })
  .describe(
    "Result of modes.list. Maps onto ACP's SessionModeState: availableModes = modes ({ id, name, description }), currentModeId = the conversation's settings.mode ?? default.",
  );

export type ModeDefinition = z.infer<typeof ModeDefinition>;
/** A mode as the configuration writes it. */
export type ModeDefinitionInput = z.input<typeof ModeDefinition>;
export type ModesConfig = z.infer<typeof ModesConfig>;
export type Mode = z.infer<typeof Mode>;
export type ModesListResult = z.infer<typeof ModesListResult>;
