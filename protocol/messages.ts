import * as z from "zod";
import { AttachmentInput, MAX_ASSET_BYTES, MAX_ATTACHMENTS, MAX_FILE_ATTACHMENT_BYTES } from "./attachments.js";
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
    attachments: z
      .array(AttachmentInput)
      .max(MAX_ATTACHMENTS)
      .optional()
      .describe(
        `Files from the workspace and uploaded images, for user messages only; at most ${MAX_ATTACHMENTS}. Files are read now and stored with the message (at most ${MAX_FILE_ATTACHMENT_BYTES / 1024} KiB each; the message text and all file contents together count toward the server's maxMessageBytes). Images are referenced by the id asset.upload returned (at most ${MAX_ASSET_BYTES / (1024 * 1024)} MiB each). A problem with one is refused with -32602 naming it, e.g. \`attachments[1].path\`.`,
      ),
  })
  .describe("Parameters of message.append.");
export const MessageAppendResult = MessageRecord;
