/**
 * Compaction: the model summarizes a conversation, and from then on sees the
 * summary instead of the records before it (conversation.compact, and
 * automatically by settings.autoCompact). The records stay stored.
 */
import * as z from "zod";
import { GenerationEventBase } from "./events.js";
import { CompactionRecord, CompactionTrigger, ConversationId } from "./records.js";

/** Longest `instructions` conversation.compact accepts, in characters (they are sent to the model with the summary prompt). */
export const MAX_COMPACT_INSTRUCTIONS = 4_000;

export const ConversationCompactParams = z
  .object({
    conversationId: ConversationId,
    instructions: z
      .string()
      .max(MAX_COMPACT_INSTRUCTIONS)
      .optional()
      .describe(
        `What the summary should focus on or keep (e.g. "keep the list of failing tests"), added after the fixed summary prompt; at most ${MAX_COMPACT_INSTRUCTIONS} characters.`,
      ),
  })
  .strict()
  .describe("Compact a conversation now.");

export const ConversationCompactResult = z
  .object({
    generationId: z
      .string()
      .describe(
        "The compaction runs as the conversation's generation (interrupt cancels it; step waits for it). It ends with compaction_completed then generation_complete (final true), or with interrupted or error.",
      ),
  })
  .describe("The compaction has started.");

export const CompactionStartedNotification = GenerationEventBase.extend({
  trigger: CompactionTrigger,
  model: z.string().describe("The model writing the summary."),
}).describe("The model is writing a summary of the conversation (nothing is streamed; compaction_completed follows, or the generation ends interrupted or with an error).");

export const CompactionCompletedNotification = GenerationEventBase.extend({
  recordId: z.string().describe("The stored compaction record's id."),
  tokensBefore: CompactionRecord.shape.tokensBefore,
  tokensAfter: CompactionRecord.shape.tokensAfter,
  record: CompactionRecord.describe("The stored compaction record."),
}).describe(
  "A compaction record was stored: from here on the model sees its summary instead of the records before it. Its usage_updated came before it (the summary's tokens count in the conversation's usage; the context is then the summary's size).",
);

export type ConversationCompactParams = z.infer<typeof ConversationCompactParams>;
export type CompactionStartedNotification = z.infer<typeof CompactionStartedNotification>;
export type CompactionCompletedNotification = z.infer<typeof CompactionCompletedNotification>;
