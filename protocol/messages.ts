import { z } from "zod";
import { ConversationId, MessageRecord } from "./records.js";

export const MessageAppendParams = z
  .strictObject({
    conversationId: ConversationId,
    role: z
      .enum(["user", "system", "assistant"])
      .describe(
        "user: a message from the person; system: an instruction to the model; assistant: a reply written by the client (importing or reconstructing a history), refused while a generation runs or while stored tool calls are pending.",
      ),
    content: z.string().max(4_000_000).describe("Text of the message."),
  })
  .describe("Parameters of message.append. Attachments come in a later protocol version.");
export const MessageAppendResult = MessageRecord;
