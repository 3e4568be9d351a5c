import * as z from "zod";
import {
  Conversation,
  ConversationId,
  ConversationRecord,
  ConversationSettingsPatch,
  ConversationState,
  DamagedConversationEntry,
  MessageRole,
  ModeName,
  ModelName,
  Timestamp,
} from "./records.js";
import { FileChanges } from "./file-changes.js";
import { ConversationMcpServers } from "./config-mcp.js";
import { MAX_IMPORTED_RECORDS } from "./limits/conversation.js";
export * from "./limits/conversation.js";

/** What conversation.create and conversation.update accept for the same fields. */
const Title = z.string().max(500);
const SystemPrompt = z.string().max(1_000_000);
const Workspace = z.string().min(1).max(4096);

/** A text field of an imported record: each is also held to the server's maxMessageBytes. */
const ImportedText = z.string().max(4_000_000);

export const ImportedMessage = z
  .strictObject({
    type: z.literal("message").describe("Discriminator: a chat message."),
    role: MessageRole,
    content: ImportedText.describe("Text of the message (at most maxMessageBytes UTF-8 bytes)."),
    reasoning: ImportedText.optional().describe("Assistant messages: reasoning text (kept, never sent to the model)."),
    toolCalls: z
      .array(
        z.strictObject({
          toolCallId: z.string().min(1).max(256).describe("The call's id; the tool_call record that answers it carries the same id."),
          toolName: z.string().min(1).max(256).describe("Name of the tool called."),
        }),
      )
      .min(1)
      .max(256)
      .optional()
      .describe(
        "Assistant messages only: the tool calls this message made, in order. Each must be answered by a settled tool_call record right after the message (only tool_call records may come between).",
      ),
    timestamp: Timestamp.optional().describe("When it was written; the server's clock at import when absent."),
  })
  .describe("An imported message. The server assigns its record id.");

export const ImportedToolCall = z
  .strictObject({
    type: z.literal("tool_call").describe("Discriminator: a settled tool call and its result."),
    toolCallId: z
      .string()
      .min(1)
      .max(256)
      .describe("Id of the call, as announced by the assistant message before it (its toolCalls)."),
    toolName: z.string().min(1).max(256).describe("Name of the tool; must match the announcement."),
    arguments: z.record(z.string(), z.unknown()).describe("Arguments the tool ran with."),
    status: z
      .enum(["completed", "failed", "skipped"], {
        error: "only settled tool calls can be imported: status must be completed, failed or skipped (not pending or executing)",
      })
      .describe("How the call ended. Only settled calls can be imported: pending and executing are refused."),
    result: ImportedText.optional().describe("Text the model is shown as the call's output (at most maxMessageBytes); empty when absent."),
    exitCode: z.number().int().nullable().optional().describe("Process exit code, for tools that run a process."),
    timestamp: Timestamp.optional().describe("When the call was proposed; the server's clock at import when absent."),
    completedAt: Timestamp.optional().describe("When it ended; `timestamp` when absent."),
  })
  .describe("An imported tool call with its outcome. The server assigns its record id; `success` follows from `status`.");

export const ImportedReasoning = z
  .strictObject({
    type: z.literal("reasoning").describe("Discriminator: the model's thinking for the assistant message that follows it."),
    content: ImportedText.describe("The thinking text (at most maxMessageBytes)."),
    timestamp: Timestamp.optional().describe("When it was written; the server's clock at import when absent."),
  })
  .describe(
    "Imported reasoning. It must come right before an assistant message (the one it is the thinking of), or be the last record; never between an assistant message and its tool_call records. The server assigns its record id.",
  );

export const ImportedRecord = z
  .discriminatedUnion("type", [ImportedMessage, ImportedToolCall, ImportedReasoning])
  .describe("One record of an imported history: a message, or a settled tool call answering the assistant message before it.");

export const ConversationCreateParams = z
  .strictObject({
    id: ConversationId.optional().describe(
      "The id to create the conversation at, chosen by the client (e.g. to name it before it exists, or to recreate one elsewhere); 1–128 of A–Z, a–z, 0–9, _ and -. Default: a new server id (c_…). An id a conversation already has is refused with CONVERSATION_EXISTS (data.conversationId).",
    ),
    title: Title.optional().describe("Title; defaults to empty."),
    model: ModelName.optional().describe("Model for this conversation; defaults to the server's."),
    system: SystemPrompt.optional().describe("System prompt sent first in every model request."),
    workspace: Workspace.optional().describe("Working directory for tools (absolute, or relative to the server's working directory)."),
    settings: ConversationSettingsPatch.optional(),
    mcpServers: ConversationMcpServers.optional(),
    records: z
      .array(ImportedRecord)
      .max(MAX_IMPORTED_RECORDS)
      .optional()
      .describe(
        `A history to start from (import or reconstruction), oldest first, at most ${MAX_IMPORTED_RECORDS} records, each text at most maxMessageBytes. The server gives every record a new id and keeps toolCallIds. Refused whole (-32602 naming the record, e.g. records[3].toolCallId) when a tool_call record answers no announced call, repeats one, or names another tool; when an announced call gets no settled record before the next message; or when a toolCallId is announced twice while open. A toolCallId may be reused by a later assistant message once its earlier call is answered (some models number calls per reply).`,
      ),
  })
  .describe("Parameters of conversation.create.");
export const ConversationCreateResult = Conversation;

export const ConversationListParams = z
  .strictObject({
    limit: z.number().int().min(1).max(500).optional().describe("Most conversations to return; default 50."),
    cursor: z.string().min(1).optional().describe("nextCursor of the previous page; omit for the first page."),
    parentConversationId: ConversationId.optional().describe(
      "Only the sub-agents this conversation's spawn_agent calls created (its children, not their children). Omit to list every conversation, children included.",
    ),
  })
  .describe("Parameters of conversation.list. Conversations come newest first (by creation).");
export const ConversationListResult = z
  .object({
    data: z.array(Conversation).describe("This page, newest first."),
    damaged: z
      .array(DamagedConversationEntry)
      .optional()
      .describe("Conversations of this page whose files cannot be read, listed here instead of in data. Absent when there are none."),
    nextCursor: z.string().optional().describe("Pass as `cursor` for the next page; absent on the last page."),
  })
  .describe("A page of conversations.");

export const ConversationGetParams = z
  .strictObject({
    conversationId: ConversationId,
    includeRecords: z
      .boolean()
      .optional()
      .describe("Also return the records, oldest first (all of them, or the page recordsFrom/recordsLimit selects). Default false."),
    recordsFrom: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe("With includeRecords: position of the first record to return (0 = the oldest). Default 0."),
    recordsLimit: z
      .number()
      .int()
      .min(1)
      .max(100_000)
      .optional()
      .describe(
        "With includeRecords: most records to return. Default: all from recordsFrom on. A reply over the server's maxReplyBytes is refused with LIMIT_EXCEEDED: page through a long conversation with recordsFrom/recordsLimit (conversation.recordCount says how many there are).",
      ),
  })
  .describe("Parameters of conversation.get.");
export const ConversationGetResult = z
  .object({
    conversation: Conversation,
    records: z
      .array(ConversationRecord)
      .optional()
      .describe("With includeRecords: the records asked for, oldest first (recordsFrom is the position of the first)."),
    state: ConversationState,
  })
  .describe("A conversation, its live state and, on request, its records.");

export const ConversationDiffParams = z
  .strictObject({
    conversationId: ConversationId,
    generationId: z
      .string()
      .min(1)
      .max(256)
      .optional()
      .describe("The generation whose diff to return. Default: the conversation's most recent generation (the running one, if any)."),
  })
  .describe("Parameters of conversation.diff.");

export const ConversationDiffResult = z
  .object({
    generationId: z.string().nullable().describe("The generation the diff is of; null when the conversation has had none."),
    changes: FileChanges.describe(
      "As generation_diff_updated's `changes`: each file the generation's file tools changed, with its net change against its content before the generation. Empty when they changed nothing (or nothing on balance).",
    ),
  })
  .describe("The net change of one generation's files.");

export const ConversationUpdateParams = z
  .strictObject({
    conversationId: ConversationId,
    title: Title.optional().describe("New title."),
    model: ModelName.nullable().optional().describe("New model; null returns to the server default."),
    system: SystemPrompt.nullable().optional().describe("New system prompt; null removes it."),
    workspace: Workspace.nullable().optional().describe("New tool working directory; null returns to the server's."),
    settings: ConversationSettingsPatch.optional(),
    mode: ModeName.optional().describe(
      "Switch the conversation's mode: the same as settings.mode (given both, they must agree). Applies from the next model call.",
    ),
    mcpServers: ConversationMcpServers.optional().describe(
      "Replace the conversation's own MCP servers with these ([] removes them all). A server whose name and definition are unchanged keeps running; the others are stopped or started. Applies from the next model call.",
    ),
  })
  .describe("Parameters of conversation.update. Fields left out are unchanged.");
export const ConversationUpdateResult = Conversation;

export const ConversationForkParams = z
  .strictObject({
    conversationId: ConversationId.describe("The conversation to copy."),
    atRecord: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe(
        "Copy the records before this position (0 = the oldest), i.e. the first atRecord records; positions are those of conversation.get's recordsFrom. Refused (naming atRecord) when over the record count, or when the cut leaves a tool call unsettled (an assistant message copied without all its calls' settled records): fork before that message or after its calls. Default: every record, except an unsettled last tool round (a running generation's, or one a stop left pending), which is cut off together with what follows it.",
      ),
    title: Title.optional().describe("Title of the copy; default: the original's followed by \" (fork)\"."),
  })
  .describe("Parameters of conversation.fork.");
export const ConversationForkResult = Conversation;

export const ConversationDeleteParams = z
  .strictObject({ conversationId: ConversationId })
  .describe("Parameters of conversation.delete. A running generation is interrupted first.");
export const ConversationDeleteResult = z.object({}).describe("Empty on success.");

export const ConversationSubscribeParams = z
  .strictObject({
    conversationId: ConversationId,
    afterSeq: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe("Replay every event with a greater seq before any new one. Omit to receive only new events."),
  })
  .describe("Parameters of conversation.subscribe. Subscribing twice is harmless.");
export const ConversationSubscribeResult = z
  .object({
    conversation: Conversation,
    state: ConversationState,
    replayed: z
      .number()
      .int()
      .describe("How many missed events were sent (as notifications, before this response) to fill the gap after afterSeq."),
    resync: z
      .boolean()
      .describe("True when events after afterSeq are no longer held: reload with conversation.get (includeRecords) and continue from state.seq."),
  })
  .describe("Snapshot of the conversation at the moment of subscribing.");

export const ConversationUnsubscribeParams = z
  .strictObject({ conversationId: ConversationId })
  .describe("Parameters of conversation.unsubscribe.");
export const ConversationUnsubscribeResult = z.object({}).describe("Empty on success.");
