import * as z from "zod";
import { AttachmentInput, MAX_ASSET_BYTES, MAX_ATTACHMENTS, MAX_FILE_ATTACHMENT_BYTES } from "./attachments.js";
import { MAX_COMMAND_ARGUMENTS_CHARS } from "./commands.js";
import { CommandName, ConversationId, MessageRecord, QueuedMessage } from "./records.js";
import { CLIENT_MESSAGE_ID_WINDOW } from "./limits/messages.js";
import { ruleCheck } from "./schema-rule-check.js";
export * from "./limits/messages.js";

export const MessageAppendParams = z
  .strictObject({
    conversationId: ConversationId,
    role: z
      .enum(["user", "system", "assistant"])
      .describe(
        "user: a message from the person; system: an instruction to the model; assistant: a reply written by the client (importing or reconstructing a history), refused while a generation runs or while stored tool calls are pending.",
      ),
    content: z
      .string()
      .max(4_000_000)
      .optional()
      .describe("Text of the message. Exactly one of content and command is given (-32602 naming content or command otherwise)."),
    command: CommandName.optional().describe(
      "Instead of content, for a user message: the name of a prompt template (commands.list) whose text, with `arguments` filled in, becomes the content. The stored record keeps the command (name, arguments, source) and the expanded text; the model sees the expanded text. An unknown name is -32602 naming command.",
    ),
    arguments: z
      .string()
      .max(MAX_COMMAND_ARGUMENTS_CHARS)
      .optional()
      .describe(
        "With command: the text after the command's name. `$ARGUMENTS` in the template becomes all of it (trimmed); `$1`…`$9` become its words, split on whitespace, where \"double\" or 'single' quotes keep spaces inside one argument (the quotes are removed; a missing one becomes empty). Only with command.",
      ),
    attachments: z
      .array(AttachmentInput)
      .max(MAX_ATTACHMENTS)
      .optional()
      .describe(
        `Files from the workspace and uploaded images, for user messages only; at most ${MAX_ATTACHMENTS}. Files are read now and stored with the message (at most ${MAX_FILE_ATTACHMENT_BYTES / 1024} KiB each; the message text and all file contents together count toward the server's maxMessageBytes). Images are referenced by the id asset.upload returned (at most ${MAX_ASSET_BYTES / (1024 * 1024)} MiB each). A problem with one is refused with -32602 naming it, e.g. \`attachments[1].path\`.`,
      ),
    delivery: z
      .enum(["steer", "queue"])
      .optional()
      .describe(
        "What to do with a user or system message while a generation runs (when none runs it is an ordinary append and this is ignored). steer (the default while one runs): the message joins the running generation at its next model call, after the tool results of the current round — never between a tool call and its result; message_added says delivery \"steered\" when it is taken, and a generation whose model answered without tools makes one more call for it. queue: the message is held, in order, and starts a generation of its own when the running one completes (not after an interrupt or an error: it then stays held, see state.queue). Held messages are stored (they survive a restart) and bounded by limits.maxQueuedMessages and limits.maxQueuedBytes (LIMIT_EXCEEDED beyond either). An assistant message cannot be steered or queued.",
      ),
    expectedGenerationId: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe(
        "The generation the client believes is running. When it is not the running one (it ended, or another runs), the append is refused with GENERATION_CHANGED naming the running generation (or none) and nothing is stored.",
      ),
    clientMessageId: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe(
        `A client-chosen id that makes the append idempotent: a retry with the same id and the same role, content and attachments answers the message already stored or held (no second record, no second message_added); the same id with anything different is refused (-32602 on clientMessageId). The last ${CLIENT_MESSAGE_ID_WINDOW} ids of each conversation are remembered, across restarts.`,
      ),
  })
  // Exactly one of content and command, arguments only with command (schema-rules.ts).
  .check(ruleCheck("message.append fields"))
  .describe("Parameters of message.append.");
export const MessageAppendResult = MessageRecord.extend({
  delivery: z
    .enum(["appended", "steer", "queued"])
    .optional()
    .describe(
      "appended (or absent): the message is stored as a record and message_added was sent. steer: held until the running generation's next model call (message_added then says delivery \"steered\"). queued: held in the conversation's queue (queue_changed was sent).",
    ),
}).describe("The message: stored, or held with the id and timestamp it will be stored with.");

export const QueueListParams = z.strictObject({ conversationId: ConversationId }).describe("Parameters of queue.list.");
export const QueueListResult = z
  .object({ messages: z.array(QueuedMessage).describe("The held messages, oldest first.") })
  .describe("Result of queue.list.");
export const QueueRemoveParams = z
  .strictObject({
    conversationId: ConversationId,
    recordId: z.string().min(1).max(200).describe("The id of the held message (the id message.append answered)."),
  })
  .describe("Parameters of queue.remove.");
export const QueueRemoveResult = z
  .object({ removed: z.boolean().describe("False when no held message had that id (already taken, removed, or never held).") })
  .describe("Result of queue.remove.");
export const QueueClearParams = z.strictObject({ conversationId: ConversationId }).describe("Parameters of queue.clear.");
export const QueueClearResult = z
  .object({ removed: z.number().int().min(0).describe("How many held messages were dropped.") })
  .describe("Result of queue.clear.");
