import { z } from "zod";
import {
  Conversation,
  ConversationId,
  ConversationRecord,
  ConversationSettingsPatch,
  ConversationState,
  DamagedConversationEntry,
  ModelName,
} from "./records.js";

/** What conversation.create and conversation.update accept for the same fields. */
const Title = z.string().max(500);
const SystemPrompt = z.string().max(1_000_000);
const Workspace = z.string().min(1).max(4096);

export const ConversationCreateParams = z
  .strictObject({
    title: Title.optional().describe("Title; defaults to empty."),
    model: ModelName.optional().describe("Model for this conversation; defaults to the server's."),
    system: SystemPrompt.optional().describe("System prompt sent first in every model request."),
    workspace: Workspace.optional().describe("Working directory for tools (absolute, or relative to the server's working directory)."),
    settings: ConversationSettingsPatch.optional(),
  })
  .describe("Parameters of conversation.create.");
export const ConversationCreateResult = Conversation;

export const ConversationListParams = z
  .strictObject({
    limit: z.number().int().min(1).max(500).optional().describe("Most conversations to return; default 50."),
    cursor: z.string().min(1).optional().describe("nextCursor of the previous page; omit for the first page."),
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

export const ConversationUpdateParams = z
  .strictObject({
    conversationId: ConversationId,
    title: Title.optional().describe("New title."),
    model: ModelName.nullable().optional().describe("New model; null returns to the server default."),
    system: SystemPrompt.nullable().optional().describe("New system prompt; null removes it."),
    workspace: Workspace.nullable().optional().describe("New tool working directory; null returns to the server's."),
    settings: ConversationSettingsPatch.optional(),
  })
  .describe("Parameters of conversation.update. Fields left out are unchanged.");
export const ConversationUpdateResult = Conversation;

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
