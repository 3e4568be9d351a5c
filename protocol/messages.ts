import { z } from "zod";
import { ConversationId, MessageRecord } from "./records.js";

export const MessageAppendParams = z
  .strictObject({
    conversationId: ConversationId,
    role: z
      .enum(["user", "system"])
      .describe("user: a message from the person; system: an instruction to the model. Assistant messages come only from the model."),
    content: z.string().max(4_000_000).describe("Text of the message."),
  })
  .describe("Parameters of message.append. Attachments come in a later protocol version.");
export const MessageAppendResult = MessageRecord;
