/**
 * Run control for scripted clients: wait for a generation to end instead of
 * counting notifications.
 */
import * as z from "zod";
import { TokenUsage } from "./usage.js";
import { ConversationId, GenerationError, GenerationOutcome, MessageRecord, Timestamp } from "./records.js";
import { MAX_WAIT_MS, DEFAULT_WAIT_MS } from "./limits/run-control.js";
export * from "./limits/run-control.js";

export const GenerationWaitParams = z
  .strictObject({
    conversationId: ConversationId,
    generationId: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe(
        "The generation to wait for (from step). Default: the running one, or else the most recent one. The last 16 generations of a conversation can be waited on after they ended; an older or unknown id is INVALID_PARAMS naming generationId.",
      ),
    timeoutMs: z
      .number()
      .int()
      .min(0)
      .max(MAX_WAIT_MS)
      .optional()
      .describe(`Longest wait in milliseconds (0–${MAX_WAIT_MS}, default ${DEFAULT_WAIT_MS}); when it passes the answer is { done: false }, not an error. 0 only looks.`),
  })
  .describe("Parameters of generation.wait.");

export const GenerationWaitEnded = z
  .object({
    done: z.literal(true).describe("The generation has ended."),
    generationId: z.string().describe("The generation waited for."),
    outcome: GenerationOutcome,
    error: GenerationError.optional().describe("With outcome \"error\": why it failed (as the `error` notification said)."),
    finalRecord: MessageRecord.nullable().describe(
      "The last assistant message the generation stored (its answer; partial text when interrupted); null when it stored none.",
    ),
    usage: TokenUsage.nullable().describe("Tokens of all its model calls added up; null when the endpoint reported none."),
    modelCalls: z.number().int().min(0).describe("Model calls it made."),
    endedAt: Timestamp.describe("When it ended."),
  })
  .describe("The generation has ended: how, with what answer, at what cost.");

export const GenerationWaitPending = z
  .object({
    done: z.literal(false).describe("The generation is still running after timeoutMs."),
    generationId: z.string().describe("The generation waited for; wait again with this id."),
  })
  .describe("The wait timed out with the generation still running.");

export const GenerationWaitResult = z
  .discriminatedUnion("done", [GenerationWaitEnded, GenerationWaitPending])
  .describe("Result of generation.wait: { done: true, outcome, … } once the generation has ended, or { done: false } when timeoutMs passed first.");

export type GenerationWaitParams = z.infer<typeof GenerationWaitParams>;
export type GenerationWaitResult = z.infer<typeof GenerationWaitResult>;
export type GenerationWaitEnded = z.infer<typeof GenerationWaitEnded>;
