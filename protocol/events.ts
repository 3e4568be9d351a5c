import * as z from "zod";
import {
  ApprovalRule,
  QueuedMessage,
  Conversation,
  ConversationId,
  GenerationError,
  MessageRecord,
  ReasoningRecord,
  Timestamp,
  ToolCall,
  ToolCallRecord,
} from "./records.js";
import { FileChanges } from "./file-changes.js";
import { PlanEntries } from "./plan.js";
import { ToolCallDisplay } from "./tools.js";
import { TokenUsage } from "./usage.js";

/** Fields every conversation notification carries (all but `connected`). */
export const ConversationEventBase = z
  .object({
    conversationId: ConversationId,
    seq: z.number().int().min(1).describe("Per-conversation sequence number: strictly increasing, never reused."),
    timestamp: Timestamp.describe("When the server emitted the event."),
  })
  .describe(
    "Fields every conversation notification carries. `seq` is per conversation, strictly increasing and never reused (also across server restarts), so a client that reconnects can ask for everything after the last seq it saw.",
  );

const GenerationId = z.string().describe("The generation (one `step`) this event belongs to.");

/** Fields every notification of one generation carries: the conversation event's, and the generation's id. */
export const GenerationEventBase = ConversationEventBase.extend({ generationId: GenerationId }).describe(
  "Fields every notification of a generation (generation_*, tool_*, interrupted) carries.",
);

export const ConnectedNotification = z
  .object({
    connectionId: z.string().describe("Id of this connection."),
    protocolVersion: z.string().describe("Protocol version in use."),
    timestamp: Timestamp,
  })
  .describe("Sent once right after a successful initialize. Carries no conversationId or seq.");

export const MessageAddedNotification = ConversationEventBase.extend({
  record: MessageRecord.describe("The stored message."),
  delivery: z
    .enum(["steered", "queued"])
    .optional()
    .describe(
      "How a held message got here: steered — taken into the running generation at its next model call; queued — taken from the queue to start a generation. Absent for everything else.",
    ),
}).describe(
  "A message was stored (appended by a client, written by the model, or a server notice).",
);

export const ReasoningAddedNotification = GenerationEventBase.extend({
  record: ReasoningRecord.describe("The stored reasoning record."),
}).describe(
  "The model's thinking for a reply was stored, as a reasoning record, right before the reply's assistant message (its message_added follows). The same text streamed before as generation_progress with kind reasoning.",
);

export const ConversationUpdatedNotification = ConversationEventBase.extend({
  conversation: Conversation.describe("The conversation after the change."),
  deleted: z.boolean().describe("True when the conversation was deleted; no further events follow."),
}).describe("The conversation's metadata changed (update, or delete).");

export const GenerationStartedNotification = GenerationEventBase.extend({
  model: z.string().describe("Model asked."),
  iteration: z.number().int().min(1).describe("1 for the first model call of the step, 2 after the first tool round, …"),
}).describe("A model call began.");

export const GenerationProgressNotification = GenerationEventBase.extend({
  kind: z.enum(["text", "reasoning"]).describe("text: answer tokens; reasoning: thinking tokens."),
  delta: z.string().describe("New text, to append to what came before (deltas that arrive together may be coalesced)."),
}).describe("Streamed tokens of the current model call. Never stored one by one: the full text arrives in message_added.");

export const GenerationCompleteNotification = GenerationEventBase.extend({
  iteration: z.number().int().min(1).describe("Which model call of the step ended."),
  finishReason: z.string().nullable().describe("The endpoint's finish_reason (stop, tool_calls, length, …)."),
  usage: TokenUsage.nullable().describe("Token usage, when the endpoint reports it."),
  final: z
    .boolean()
    .describe(
      "True when the step ends here: the model answered without tools, or maxIterations was reached (its tool calls are then skipped and a notice is stored first). Every generation ends with exactly one of: generation_complete with final true, interrupted, error.",
    ),
}).describe("A model call ended and its assistant message was stored.");

export const ToolPendingNotification = GenerationEventBase.extend({
  ...ToolCall.shape,
  ...ToolCallDisplay.shape,
  autoConfirmed: z
    .boolean()
    .describe("True when auto-confirm will run it at once (tool_executing follows without a tool.confirm)."),
  autoReason: z
    .enum(["policy", "rule", "budget"])
    .optional()
    .describe(
      "Present when autoConfirmed: why it runs without asking. policy: the conversation's settings.approval / settings.toolPolicy allow it (no prompt to show, and no auto-confirm budget used); rule: a remembered approval matches it (settings.approvalRules, or the workspace's .agentwire/approvals.json; no budget used); budget: the step's autoConfirm or tool.confirm \"auto\" count allowed it (one unit used).",
    ),
  rememberAs: ApprovalRule.optional().describe(
    "The rule tool.confirm \"confirm\" with `remember` would store for this call, to show the user before it is stored (e.g. \"always allow `git status` commands\"): for shell, the tool and the command's prefix; for other tools, the tool alone. Absent when the call cannot be remembered: a shell command that is not one simple command (it has ; & | < > ` $ ( ) or a line break anywhere, even quoted), or whose first word runs other commands (sudo, env, bash, xargs…) or is not a plain command name.",
  ),
  changes: FileChanges.optional().describe(
    "For tools that can tell what they would change (write_file, edit_file): the change the call would make, computed from the proposed arguments against the files as they are now, without writing anything. Unless the files change in between, confirming runs exactly this change: the tool call record's `diff` is the same text. An entry with `problem` says the call would fail as proposed. Empty when the call would change nothing; absent for other tools, or when it could not be computed in time.",
  ),
}).describe("The model proposed a tool call; unless autoConfirmed, it waits for tool.confirm.");

export const ToolExecutingNotification = GenerationEventBase.extend({
  ...ToolCall.shape,
  ...ToolCallDisplay.shape,
  edited: z.boolean().describe("True when the user edited the arguments."),
  changes: FileChanges.optional().describe(
    "Present when the change the call will make is not the one tool_pending showed, for tools that can tell (same shape as tool_pending's `changes`): the arguments were edited (tool.confirm \"edit\"), or a call that ran since changed a file (two calls of one round editing one file: the second was previewed before the first ran). Recomputed just before the tool runs; absent when unchanged.",
  ),
}).describe("A tool call started running (kind, title and locations follow the arguments it runs with, edited or not).");

export const ToolOutputNotification = GenerationEventBase.extend({
  toolCallId: ToolCall.shape.toolCallId,
  stream: z.enum(["stdout", "stderr"]).describe("Which output stream the chunk came from."),
  chunk: z.string().describe("Output text (UTF-8), in order."),
}).describe("A chunk of a running tool's output.");

export const ToolCompletedNotification = GenerationEventBase.extend({
  record: ToolCallRecord.describe("The tool call record, now completed, with its result."),
}).describe("A tool call ran and succeeded.");

export const ToolFailedNotification = GenerationEventBase.extend({
  record: ToolCallRecord.describe("The tool call record, now failed, with the error as result."),
}).describe("A tool call ran and failed (non-zero exit, timeout, invalid arguments, unknown tool).");

export const ToolSkippedNotification = GenerationEventBase.extend({
  record: ToolCallRecord.describe("The tool call record, now skipped."),
  reason: z
    .enum(["user", "interrupted", "max_iterations", "timeout"])
    .describe(
      "user: declined with tool.confirm skip; interrupted: an interrupt ended the generation; max_iterations: the step reached maxIterations, so no model call would see the result; timeout: nobody decided within settings.confirmTimeoutMs (the generation goes on).",
    ),
}).describe("A tool call will not run.");

export const GenerationDiffUpdatedNotification = GenerationEventBase.extend({
  changes: FileChanges.describe(
    "Every file the generation's file tools changed so far, one entry per file in the order first changed: its net change against its content before the generation. A file that is back to that content (created then removed, an edit undone) has no entry.",
  ),
}).describe(
  "The net change of the generation's files, sent after each call that changed a file (after its tool_completed). conversation.diff answers the same on demand.",
);

export const InterruptedNotification = GenerationEventBase.extend({
  phase: z
    .enum(["streaming", "pending", "executing", "starting"])
    .describe("What the generation was doing when interrupted."),
  keptPending: z
    .array(z.string())
    .optional()
    .describe("The toolCallIds left pending rather than skipped (interrupt keepPending, or a server shutdown): the next step offers them again. Absent when none were kept."),
}).describe("The generation was interrupted and has ended. Sent exactly once per interrupted generation.");

export const ErrorNotification = ConversationEventBase.extend({
  generationId: GenerationId.nullable(),
  ...GenerationError.shape,
}).describe("The generation failed and has ended; the conversation stays usable and its state.lastError holds this.");

export const PlanUpdatedNotification = GenerationEventBase.extend({
  entries: PlanEntries.describe("The whole plan now, in order (it replaces the previous one; empty: cleared)."),
}).describe("The model's update_plan call set the conversation's plan; state.plan holds it from now on.");

export const QueueChangedNotification = ConversationEventBase.extend({
  messages: z.array(QueuedMessage).describe("Every held message now, oldest first (empty: the queue is empty)."),
  reason: z
    .enum(["added", "taken", "removed", "cleared"])
    .describe(
      "added: message.append held a message; taken: a held message was stored (steered into the generation, or taken to start one); removed: queue.remove; cleared: queue.clear or the conversation was deleted.",
    ),
}).describe("The conversation's held messages (message.append delivery steer or queue) changed; state.queue holds the same list.");
