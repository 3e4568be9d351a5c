import * as z from "zod";
import { ruleCheck } from "./schema-rule-check.js";
import { AutoConfirmRemaining, ConversationId, MaxTokens, ModelName, ReasoningLevel, Temperature, ToolCallStatus } from "./records.js";
import { MAX_SKIP_MESSAGE_CHARS } from "./limits/generation.js";
export * from "./limits/generation.js";

/** The most tool uses one step or one tool.confirm "auto" may let run without asking. */
const AutoConfirmCount = z.number().int().min(0).max(100_000);

export const StepParams = z
  .strictObject({
    conversationId: ConversationId,
    autoConfirm: z
      .union([z.boolean(), AutoConfirmCount])
      .optional()
      .describe("true: run every tool call of this step without asking; a number: run that many without asking, then ask. Default: ask for each."),
    model: ModelName.optional().describe("Model for this step only; overrides the conversation's and the server's."),
    temperature: Temperature.nullable()
      .optional()
      .describe("Sampling temperature (0–2) for this step's model calls, over the conversation's `settings.temperature`; null sends none (the endpoint's default). Absent: the conversation's."),
    maxTokens: MaxTokens.nullable()
      .optional()
      .describe("Most tokens per model call for this step, over `settings.maxTokens`; null sends none. Absent: the conversation's."),
    reasoning: ReasoningLevel.nullable()
      .optional()
      .describe("Reasoning effort for this step, over `settings.reasoning`; null sends none. Absent: the conversation's."),
  })
  .describe("Parameters of step: run the agent on the conversation until the model answers without tools.");
export const StepResult = z
  .object({
    generationId: z.string().describe("Id of the generation started; every notification of it carries the same id."),
  })
  .describe("Answered at once; the work is reported by notifications.");

export const InterruptParams = z
  .strictObject({
    conversationId: ConversationId,
    keepPending: z
      .boolean()
      .optional()
      .describe(
        "Pause instead of stop: tool calls waiting for a decision (and those decided but not yet run) stay pending, instead of being skipped; the generation still ends (`interrupted` lists them in keptPending, state.pendingTools shows them), and the next `step` — or a tool.confirm naming one — offers them again (tool_pending, same toolCallIds) before calling the model. A tool already running is stopped either way. Default false.",
      ),
  })
  .describe("Parameters of interrupt.");
export const InterruptResult = z
  .object({
    interrupted: z
      .boolean()
      .describe("True when a generation was running and has now ended; false when nothing was running. Idempotent."),
  })
  .describe("Result of interrupt. When true, the generation has fully stopped before this answer is sent.");

export const ToolConfirmParams = z
  .strictObject({
    conversationId: ConversationId,
    toolCallId: z.string().min(1).describe("The pending tool call (from tool_pending)."),
    action: z
      .enum(["confirm", "edit", "skip", "auto"])
      .describe("confirm: run it. edit: run it with `arguments` instead. skip: do not run it; the model is told the user declined (and why, with `message`). auto: run it and the next `count` tool uses of this conversation without asking."),
    arguments: z
      .record(z.string(), z.unknown())
      .optional()
      .describe("With action \"edit\": the arguments to run with, validated against the tool's parameter schema."),
    remember: z
      .enum(["conversation", "workspace"])
      .optional()
      .describe(
        "With action \"confirm\": also approve calls of the same kind from now on, as the call's tool_pending `rememberAs` shows (for shell, by command prefix; for other tools, by tool name). conversation: stored in the conversation's settings.approvalRules (conversation_updated follows). workspace: stored in the workspace's `.agentwire/approvals.json`, honoured by every conversation on that workspace. Refused (-32602 on remember) for a call whose tool_pending has no `rememberAs` (e.g. a compound shell command), and for workspace when the conversation has no workspace. Calls of the same round still waiting that the rule matches run too.",
      ),
    message: z
      .string()
      .max(MAX_SKIP_MESSAGE_CHARS)
      .optional()
      .describe(`With action "skip": why, in the user's words (at most ${MAX_SKIP_MESSAGE_CHARS} characters); the model gets it as the skipped call's result, after the words saying the user declined.`),
    count: AutoConfirmCount.optional().describe(
      "With action \"auto\": how many further tool uses to run without asking (default 0: only this one). Sets the conversation's remaining count, replacing any earlier one.",
    ),
  })
  // Each optional field only with its action (schema-rules.ts).
  .check(ruleCheck("tool.confirm fields"))
  .describe("Parameters of tool.confirm: the decision on one pending tool call.");
export const ToolConfirmResult = z
  .object({
    status: ToolCallStatus.describe(
      "\"skipped\" after skip; otherwise \"executing\": the call is confirmed and runs as soon as the calls offered before it are done (calls of one message run in order).",
    ),
    autoConfirmRemaining: AutoConfirmRemaining,
  })
  .describe("Result of tool.confirm.");

export type ToolConfirmParams = z.infer<typeof ToolConfirmParams>;
export type ToolConfirmResult = z.infer<typeof ToolConfirmResult>;
