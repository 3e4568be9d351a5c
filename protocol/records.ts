import * as z from "zod";
import { InputRequest } from "./input-request.js";
import { Attachment, MAX_ATTACHMENTS } from "./attachments.js";
import { FileChanges, NetFileChange } from "./file-changes.js";
import { Plan } from "./plan.js";
import { ToolCallDisplay, ToolKind } from "./tools.js";
import { ConversationUsage } from "./usage.js";
import { ApprovalRule, ConversationSettings } from "./conversation-settings.js";
import { COMMAND_NAME_PATTERN, CONVERSATION_ID_PATTERN, MAX_TOOL_ARGUMENT_DEPTH } from "./limits/records.js";
export * from "./conversation-settings.js";
export * from "./limits/records.js";
import { EndpointStatus } from "./error-shapes.js";
export * from "./error-shapes.js";

/** Opaque identifiers. Conversations, records and generations use prefixed random ids. */
export const ConversationId = z
  .string()
  .regex(CONVERSATION_ID_PATTERN, "must be 1–128 letters, digits, \"_\" or \"-\" (an id from conversation.create)")
  .describe("Conversation id, as returned by conversation.create (e.g. \"c_7f3a…\"): 1–128 of A–Z, a–z, 0–9, _ and -.");

/** A model name as params accept it (conversation.create and .update, step). */
export const ModelName = z.string().min(1).max(200);

export const Timestamp = z.iso
  .datetime()
  .describe("ISO-8601 UTC timestamp with milliseconds, e.g. \"2026-11-22T04:52:41.123Z\".");

export const Conversation = z
  .object({
    id: ConversationId,
    title: z.string().describe("Human-readable title; empty when none was given."),
    createdAt: Timestamp,
    updatedAt: Timestamp.describe("When the conversation or any of its records last changed."),
    model: z
      .string()
      .nullable()
      .describe("Model used by `step` unless `step` names one; null means the server default."),
    system: z
      .string()
      .nullable()
      .describe("System prompt sent first in every model request; null for none."),
    workspace: z
      .string()
      .nullable()
      .describe("Working directory for tools; null means the server's working directory."),
    settings: ConversationSettings,
    recordCount: z.number().int().min(0).describe("Number of records stored in the conversation."),
    usage: ConversationUsage.optional().describe(
      "Tokens and cost of all its model calls, and how full its context was after the last one; absent until its first model call finished (and in conversations stored before usage was kept). usage_updated reports each change.",
    ),
    parentConversationId: ConversationId.optional().describe(
      "Set on a sub-agent's conversation: the conversation whose spawn_agent call created it (conversation.list { parentConversationId } lists them). Absent on every other conversation.",
    ),
    parentToolCallId: z.string().optional().describe("Set with parentConversationId: the toolCallId of the spawn_agent call that created it."),
    agentDepth: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe("Set with parentConversationId: how many spawn_agent levels down it is (1: a child of a conversation a client created). limits.maxAgentDepth bounds it."),
    runtimeSession: z
      .object({
        runtime: z.string().describe("The runtime (config `runtimes` name) that holds the session."),
        sessionId: z.string().describe("The runtime's own session id (Codex: its thread id): the next step on that runtime resumes it."),
      })
      .optional()
      .describe("Set once a step ran on an agent runtime (a model named <runtime>/<model>): the runtime's session, resumed by the next step on it. Absent otherwise."),
  })
  .describe("A conversation: its metadata, without its records.");

export const MessageRole = z
  .enum(["system", "user", "assistant"])
  .describe("Who wrote the message. `system` messages are instructions to the model; `assistant` ones come from the model.");

export const BinaryContent = z
  .object({
    mimeType: z.string().describe("MIME type, e.g. image/png."),
    data: z.string().describe("Base64-encoded bytes."),
  })
  .describe("Binary payload attached to a message (e.g. an image).");

export const ToolCallRef = z
  .object({
    toolCallId: z
      .string()
      .describe(
        "Id the model gave the call (its `tool_calls[].id`): the ToolCallRecord, the tool_* notifications and tool.confirm name the call by it.",
      ),
    toolName: z.string().describe("Name of the tool the model asked for."),
  })
  .describe("A tool call the model requested, by id and tool name.");

/** A tool call with its arguments: what a pending call, a running call and the stored record all carry. */
export const ToolCall = ToolCallRef.extend({
  arguments: z
    .record(z.string(), z.unknown())
    .describe(
      `The call's arguments: as the model proposed them, or, after tool.confirm edited them, the edited ones. Arguments the model nests deeper than ${MAX_TOOL_ARGUMENT_DEPTH} levels of arrays and objects are not kept: the call fails at once (tool_failed, arguments {}, the result names the limit).`,
    ),
}).describe("A tool call the model requested, with its arguments.");

export const CommandName = z
  .string()
  .regex(new RegExp(COMMAND_NAME_PATTERN))
  .describe("A command's name: 1–64 letters, digits, \"-\" or \"_\", starting with a letter or digit (the template's file name without .md).");

export const MessageCommand = z
  .object({
    name: CommandName,
    arguments: z.string().describe("The arguments as the client sent them (empty string when none)."),
    source: z.enum(["workspace", "user"]).describe("Where the template was found (commands.list)."),
  })
  .describe("The command a message was expanded from (message.append { command }); the message's content is the expanded text the model sees.");

export const MessageRecord = z
  .object({
    type: z.literal("message").describe("Discriminator: a chat message."),
    id: z.string().describe("Record id, unique within the server."),
    role: MessageRole,
    content: z.string().describe("Text content of the message."),
    binaryContent: z.array(BinaryContent).optional().describe("Binary attachments, if any."),
    command: MessageCommand.optional().describe(
      "For a message appended with message.append { command, arguments }: the command and its arguments; `content` holds the expanded template. Absent otherwise.",
    ),
    attachments: z
      .array(Attachment)
      .max(MAX_ATTACHMENTS)
      .optional()
      .describe("For user messages: the files and images attached with message.append, in the order given. Absent when there are none."),
    reasoning: z
      .string()
      .optional()
      .describe(
        "Reasoning (\"thinking\") text stored on the message itself by earlier versions (and by imports that give it here). New thinking is stored as a reasoning record right before the message instead. Never sent back to the model.",
      ),
    toolCalls: z
      .array(ToolCallRef)
      .optional()
      .describe("For assistant messages: the tool calls the model requested, in order."),
    providerItems: z
      .array(z.record(z.string(), z.unknown()))
      .optional()
      .describe(
        "For assistant messages: opaque items the model endpoint produced with this answer and wants back on later requests, in the order it produced them — on the Responses API wire, reasoning items with `encrypted_content` (the model's thinking, encrypted, so it can continue across turns without server-side storage); on the anthropic wire, `thinking` blocks with their `signature` (and `redacted_thinking` blocks), unchanged. Re-sent before this message's text and tool calls on later requests over the wire that made them (each wire sends only its own kind); left out on the chat wire. Not meant for display (`reasoning` holds the readable summary). Absent when there are none.",
      ),
    interrupted: z
      .boolean()
      .optional()
      .describe("True when an interrupt cut the model's stream: `content` is the partial text received."),
    notice: z
      .string()
      .optional()
      .describe("Set on server-written notices (e.g. \"max_iterations\"): why the server wrote this message."),
    generationId: z.string().optional().describe("The generation that produced this record, if any."),
    timestamp: Timestamp,
  })
  .describe("A chat message stored in a conversation.");

export const ToolCallStatus = z
  .enum(["pending", "executing", "completed", "failed", "skipped"])
  .describe(
    "pending: waiting for confirmation; executing: running; completed: ran and succeeded; failed: ran and failed (or could not run); skipped: declined or interrupted before it ran.",
  );

export const ToolCallRecord = z
  .object({
    type: z.literal("tool_call").describe("Discriminator: a tool call and its outcome."),
    id: z.string().describe("Record id, unique within the server."),
    ...ToolCall.shape,
    originalArguments: z
      .record(z.string(), z.unknown())
      .optional()
      .describe("Present when the user edited the arguments: what the model proposed."),
    edited: z.boolean().optional().describe("True when the user edited the arguments before running."),
    result: z
      .string()
      .nullable()
      .describe("Text returned to the model: the tool's output (capped), an error, or the skip reason. Null while pending or executing."),
    success: z.boolean().nullable().describe("Whether the tool succeeded; null until it has finished."),
    status: ToolCallStatus,
    exitCode: z.number().int().nullable().optional().describe("Process exit code, for tools that run a process."),
    diff: z
      .string()
      .optional()
      .describe(
        "For tools that change a file (write_file, edit_file): a unified diff of the change, with workspace-relative `a/`/`b/` paths, capped at 64 KiB (a note ends a cut diff).",
      ),
    netChange: NetFileChange.optional().describe(
      "For a call that changed a file (write_file, edit_file): that file's net change over the generation so far, against its content before the generation. conversation.diff adds these up (the last one per file), so a generation's diff survives a restart.",
    ),
    kind: ToolKind.optional().describe(
      "How the call is shown, as tool_pending showed it (from the arguments the model proposed; from the edited ones once it ran with edited arguments, as tool_executing showed it): what kind of thing it does. Absent in records stored before the server kept it, and in imported ones.",
    ),
    title: ToolCallDisplay.shape.title.optional().describe("As `kind`: the call's short human title."),
    locations: ToolCallDisplay.shape.locations.optional().describe("As `kind`: the workspace files the call touches."),
    generationId: z.string().optional().describe("The generation that produced this call."),
    timestamp: Timestamp.describe("When the call was stored (proposed by the model)."),
    completedAt: Timestamp.optional().describe("When the call reached completed, failed or skipped."),
    childConversationId: ConversationId.optional().describe(
      "spawn_agent calls: the sub-agent's conversation (set once the call has run; subagent_started told it earlier).",
    ),
    runBy: z
      .literal("runtime")
      .optional()
      .describe(
        "Set on a call an agent runtime (Codex) made and ran itself: the record mirrors it, read-only. tool.confirm answers the runtime's own approval question (confirm or skip; edit only where the runtime takes changed input). Absent on agentwire's own calls.",
      ),
  })
  .describe("A tool call requested by the model, with its confirmation state and result.");

export const CompactionTrigger = z
  .enum(["manual", "threshold", "context_length", "imported"])
  .describe(
    "Why a compaction ran. manual: conversation.compact; threshold: the next request would have passed settings.autoCompact; context_length: the endpoint refused a request as too long (the call was retried after it); imported: another runtime compacted its session there (history.importSession), for a reason its file does not say.",
  );

export const CompactionRecord = z
  .object({
    type: z.literal("compaction").describe("Discriminator: a summary that replaces the records before it in what the model sees."),
    id: z.string().describe("Record id, unique within the server."),
    summary: z
      .string()
      .describe(
        "The model's summary of the conversation up to this record. From here on the model is sent this summary (as a user message) followed by the records after it; the records before stay stored and are still returned by conversation.get.",
      ),
    trigger: CompactionTrigger,
    instructions: z.string().optional().describe("What the user asked the summary to focus on (conversation.compact `instructions`), if anything."),
    model: z.string().describe("The model that wrote the summary."),
    tokensBefore: z
      .number()
      .int()
      .min(0)
      .describe("Tokens of the context before compaction: the summary request's prompt tokens as the endpoint reported them (an estimate of 4 characters a token when it reported none)."),
    tokensAfter: z
      .number()
      .int()
      .min(0)
      .describe("Tokens of the summary (its completion tokens as reported, else an estimate): what the compacted history costs from now on, before the system prompt and tools."),
    generationId: z.string().optional().describe("The generation that produced this record (a manual compaction runs as a generation of its own)."),
    timestamp: Timestamp,
  })
  .describe("A compaction: the model's summary of everything before it, which the model sees instead of those records.");

export const ReasoningRecord = z
  .object({
    type: z.literal("reasoning").describe("Discriminator: the model's thinking, stored as a record of its own."),
    id: z.string().describe("Record id, unique within the server."),
    content: z
      .string()
      .describe(
        "The reasoning (\"thinking\") text the model streamed for the assistant message that follows this record (`reasoning_content` / `reasoning` deltas on Chat Completions, the reasoning summary on the Responses API). Sent back to the model only for models that declare the capability reasoningContent (DeepSeek-style thinking mode), as `reasoning_content` on that assistant message; otherwise kept for clients to show.",
      ),
    interrupted: z.boolean().optional().describe("True when an interrupt cut the model's stream during or after this thinking."),
    generationId: z.string().optional().describe("The generation that produced this record, if any."),
    timestamp: Timestamp,
  })
  .describe(
    "The model's thinking for one reply, stored right before the reply's assistant message (a reply cut by an interrupt may have thinking and no message). Announced with reasoning_added.",
  );

export const ConversationRecord = z
  .discriminatedUnion("type", [MessageRecord, ToolCallRecord, CompactionRecord, ReasoningRecord])
  .describe("One entry of a conversation's history: a message, a tool call, a compaction summary or the model's reasoning.");

export const PendingTool = ToolCall.extend({
  ...ToolCallDisplay.shape,
  rememberAs: ApprovalRule.optional().describe(
    "As tool_pending's `rememberAs`: the rule tool.confirm \"confirm\" with `remember` would store for this call; absent when it cannot be remembered.",
  ),
  changes: FileChanges.optional().describe(
    "As tool_pending's `changes`: what the call would change, for tools that can tell (write_file, edit_file). After a restart it is absent until the call is offered again (tool.confirm or step), which computes it anew against the files as they are then.",
  ),
}).describe(
  "A tool call waiting for a decision (tool.confirm), shown as its tool_pending showed it (kind, title, locations are kept with the call, so they also hold after a restart; a call stored before the server kept them shows as kind other, titled by its tool's name).",
);

/** Why a generation failed: the `error` notification carries it, and the conversation keeps it as `state.lastError`. */
export const GenerationError = z
  .object({
    code: z.number().int().describe("Error code from the error table (e.g. LLM_ERROR)."),
    message: z.string().describe("What went wrong, in words (the provider's message for LLM errors)."),
    status: EndpointStatus,
  })
  .describe("Why a generation failed.");

export const LastError = GenerationError.extend({ timestamp: Timestamp }).describe(
  "The most recent error of the conversation's generations.",
);

/** How many further tool uses a conversation runs without asking: its state, and what tool.confirm answers. */
export const AutoConfirmRemaining = z
  .number()
  .int()
  .min(0)
  .describe("How many further tool uses this conversation will run without asking (set by tool.confirm action \"auto\").");

/** How a generation ended. */
export const GenerationOutcome = z
  .enum(["completed", "interrupted", "error"])
  .describe(
    "completed: the model answered without tools (or maxIterations was reached). interrupted: `interrupt`, a delete or a server shutdown stopped it. error: it failed (the `error` notification and `error` say why).",
  );

export const LastGeneration = z
  .object({
    generationId: z.string().describe("The generation's id (from step)."),
    outcome: GenerationOutcome,
    endedAt: Timestamp.describe("When it ended."),
    error: GenerationError.optional().describe("With outcome \"error\": why it failed."),
  })
  .describe("How the conversation's most recent generation ended. Stored with the conversation, so it survives a restart.");

/** How a message held by the server (message.append delivery) is to reach the model. */
export const QueuedDelivery = z
  .enum(["steer", "queue"])
  .describe(
    "steer: joins the running generation at its next model call (after the tool results of the current round). queue: starts a generation of its own once the running one completes.",
  );

/** A message the server holds for later: appended with delivery steer or queue while a generation ran. */
export const QueuedMessage = z
  .object({
    delivery: QueuedDelivery,
    record: MessageRecord.describe("The message as it will be stored: its id and timestamp are kept when it is taken."),
    clientMessageId: z.string().optional().describe("The clientMessageId it was appended with, if any."),
  })
  .describe(
    "A message held server-side, in order. A steered message the generation did not take (it was interrupted or failed, or the server restarted) is held as a queued one.",
  );

export const ConversationState = z
  .object({
    generating: z.boolean().describe("True while a generation runs (streaming, waiting for confirmation or running tools)."),
    generationId: z.string().nullable().describe("The running generation's id, or null."),
    pendingTools: z.array(PendingTool).describe("Tool calls waiting for tool.confirm."),
    autoConfirmRemaining: AutoConfirmRemaining,
    lastError: LastError.nullable().describe("Last generation error, cleared when a generation succeeds. Survives a restart."),
    lastGeneration: LastGeneration.nullable().describe("How the most recent generation ended; null before the first one ends. Survives a restart."),
    seq: z.number().int().min(0).describe("Seq of the latest event of this conversation; subscribe with afterSeq = this to miss nothing."),
    plan: Plan.nullable().describe(
      "The agent's plan as its latest update_plan call left it (plan_updated announces each change); null before the first. Survives a restart.",
    ),
    pendingInputs: z
      .array(InputRequest)
      .optional()
      .describe(
        "Questions waiting for the user (input_requested, answered with input.respond), oldest first. An ask_user question survives a restart; an MCP server's does not (its tool call ended with the server).",
      ),
    queue: z
      .array(QueuedMessage)
      .describe(
        "Messages held by the server, oldest first (message.append delivery steer or queue): what queue.list answers. Non-empty while nothing runs means the last generation was interrupted or failed: they wait for the next generation that completes, or queue.remove / queue.clear. Survives a restart.",
      ),
  })
  .describe("Live state of a conversation.");

export type ConversationId = z.infer<typeof ConversationId>;
export type Conversation = z.infer<typeof Conversation>;
export type MessageRole = z.infer<typeof MessageRole>;
export type MessageRecord = z.infer<typeof MessageRecord>;
export type MessageCommand = z.infer<typeof MessageCommand>;
export type ToolCallStatus = z.infer<typeof ToolCallStatus>;
export type ToolCallRecord = z.infer<typeof ToolCallRecord>;
export type ConversationRecord = z.infer<typeof ConversationRecord>;
export type CompactionRecord = z.infer<typeof CompactionRecord>;
export type ReasoningRecord = z.infer<typeof ReasoningRecord>;
export type CompactionTrigger = z.infer<typeof CompactionTrigger>;
export type PendingTool = z.infer<typeof PendingTool>;
export type LastError = z.infer<typeof LastError>;
export type ConversationState = z.infer<typeof ConversationState>;
export type QueuedMessage = z.infer<typeof QueuedMessage>;
export type QueuedDelivery = z.infer<typeof QueuedDelivery>;
export type GenerationOutcome = z.infer<typeof GenerationOutcome>;
export type LastGeneration = z.infer<typeof LastGeneration>;
