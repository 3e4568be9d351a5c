/**
 * Shapes that errors.ts (the error data of every error) and records.ts (a
 * conversation's last error) share, apart from both: errors.ts is loaded at
 * every start, records.ts, with the message, tool call and state records, when
 * a request or a stored conversation first needs it. records.ts re-exports them.
 */
import * as z from "zod";

export const DamagedConversationEntry = z
  .object({
    conversationId: z.string().describe("The damaged conversation's id; conversation.delete removes it."),
    problem: z.string().describe("What is wrong with its stored files (no local paths)."),
  })
  .describe("A stored conversation whose files cannot be read.");

/** The HTTP status of a failed call to the model endpoint. */
export const EndpointStatus = z.number().int().optional().describe("HTTP status from the model endpoint, when there was one.");
