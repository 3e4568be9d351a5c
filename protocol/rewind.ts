/**
 * Rewind: take back the end of a conversation (its records and, on request,
 * what the file tools did to the workspace), and put it back with unrewind.
 */
import * as z from "zod";
import { ConversationId } from "./records.js";
import { ConversationEventBase } from "./events.js";

const RecordId = z.string().min(1).max(256);
const WorkspacePath = z.string().describe("The file, relative to the conversation's workspace (as the file tools named it).");

export const ConversationRewindParams = z
  .strictObject({
    conversationId: ConversationId,
    beforeRecordId: RecordId.describe(
      "The first record to take back: it and every record after it leave the conversation (the model never sees them again; conversation.get no longer returns them). They are kept aside until something is appended, so conversation.unrewind can put them back. An id that is not in the conversation is refused, naming beforeRecordId.",
    ),
    restoreFiles: z
      .boolean()
      .describe(
        "Also put back every file write_file / edit_file changed in the records taken back, as it was before the first such change (a file they created is removed). Only files whose content on disk is still what the tool last wrote are restored, unless force is set.",
      ),
    force: z
      .boolean()
      .optional()
      .describe("Restore files even when they changed on disk since the tool wrote them (those listed in changedOnDisk). Default false."),
  })
  .describe("Parameters of conversation.rewind.");

export const RestoredFile = z
  .object({
    path: WorkspacePath,
    action: z.enum(["restored", "removed", "created"]).describe("restored: its old content was written back; removed: the tools had created it, so it was deleted; created: it had been deleted since, and was written back."),
  })
  .describe("A file rewind (or unrewind) put back.");

export const UnrestoredFile = z
  .object({
    path: WorkspacePath,
    reason: z
      .enum(["changed_on_disk", "no_checkpoint", "unknown_content", "failed"])
      .describe(
        "changed_on_disk: the file is no longer what the tool wrote (changed by hand or by another tool); left as is unless force. no_checkpoint: its checkpoint was dropped (limits.maxCheckpointBytes). unknown_content: its old content was not text or too large to keep. failed: writing it failed (message says why).",
      ),
    message: z.string().describe("One sentence for the user."),
  })
  .describe("A file that was not put back.");

export const UnrestorableCall = z
  .object({
    toolCallId: z.string().describe("The call."),
    toolName: z.string().describe("The tool it called."),
  })
  .describe("A tool call in the records taken back whose effects (outside the file tools' checkpoints) cannot be undone: a shell command, a custom tool, an MCP tool.");

export const ConversationRewindResult = z
  .object({
    fromPosition: z.number().int().min(0).describe("Position the records were taken back from (beforeRecordId's position): the conversation now has this many records."),
    recordsRemoved: z.number().int().min(0).describe("How many records left the conversation."),
    filesRestored: z.array(RestoredFile).describe("Files put back as they were before the records taken back changed them (empty without restoreFiles)."),
    filesNotRestored: z.array(UnrestoredFile).describe("Files the records taken back changed that were left as they are, and why."),
    unrestorableCalls: z
      .array(UnrestorableCall)
      .describe("Tool calls taken back whose effects could not be undone (shell, custom and MCP tools); empty when there were none."),
  })
  .describe("What conversation.rewind took back.");

export const ConversationUnrewindParams = z
  .strictObject({
    conversationId: ConversationId,
    force: z
      .boolean()
      .optional()
      .describe("Put files back even when they changed on disk since the rewind restored them. Default false."),
  })
  .describe("Parameters of conversation.unrewind.");

export const ConversationUnrewindResult = z
  .object({
    fromPosition: z.number().int().min(0).describe("Position the records were put back at."),
    recordsRestored: z.number().int().min(0).describe("How many records came back."),
    filesRestored: z.array(RestoredFile).describe("Files put back as they were right before the rewind."),
    filesNotRestored: z.array(UnrestoredFile).describe("Files the rewind had restored that were left as they are, and why."),
  })
  .describe("What conversation.unrewind put back.");

export const ConversationRewoundNotification = ConversationEventBase.extend({
  action: z.enum(["rewind", "unrewind"]).describe("rewind: records were taken back; unrewind: the last rewind was put back."),
  fromPosition: z
    .number()
    .int()
    .min(0)
    .describe("rewind: every record at this position or later left the conversation. unrewind: the records from this position on came back (read them with conversation.get)."),
  recordCount: z.number().int().min(0).describe("Records in the conversation now."),
  filesRestored: z.array(RestoredFile).describe("Files put back in the workspace."),
}).describe(
  "The conversation was rewound (or a rewind was put back). A client drops its records from fromPosition on (rewind), or reads them again (unrewind). No message_added is sent for records unrewind puts back.",
);

export type ConversationRewindParams = z.infer<typeof ConversationRewindParams>;
export type ConversationRewindResult = z.infer<typeof ConversationRewindResult>;
export type ConversationUnrewindParams = z.infer<typeof ConversationUnrewindParams>;
export type ConversationUnrewindResult = z.infer<typeof ConversationUnrewindResult>;
export type RestoredFile = z.infer<typeof RestoredFile>;
export type UnrestoredFile = z.infer<typeof UnrestoredFile>;
export type UnrestorableCall = z.infer<typeof UnrestorableCall>;
