/**
 * What a user message may carry besides its text: workspace text files (whole
 * or a line range) and images uploaded beforehand with asset.upload. The caps
 * are constants of the protocol, so clients can check before sending.
 */
import * as z from "zod";
import { ruleCheck } from "./schema-rule-check.js";
import { ImageMimeType } from "./image-mime-type.js";
import { ASSET_ID_PATTERN, MAX_FILE_ATTACHMENT_BYTES } from "./limits/attachments.js";
export * from "./image-mime-type.js";
export * from "./limits/attachments.js";

export const AssetId = z
  .string()
  .regex(ASSET_ID_PATTERN, "must be an asset id returned by asset.upload (\"a_…\")")
  .describe("Asset id, as returned by asset.upload (e.g. \"a_Qm9vZ…\").");

export const LineRange = z
  .strictObject({
    start: z.number().int().min(1).describe("First line included, counting from 1."),
    end: z
      .number()
      .int()
      .min(1)
      .describe("Last line included (inclusive). An end past the last line is taken as the last line; the stored range says what was included."),
  })
  .check(ruleCheck("line range order"))
  .describe("Lines of a text file, 1-based and inclusive: {start: 10, end: 20} is lines 10 to 20.");

const FilePath = z
  .string()
  .min(1)
  .max(4096)
  .describe(
    "Path of a text file inside the conversation's workspace (relative to it, or absolute within it). `..` out of the workspace, absolute paths elsewhere and symlinks leading outside are refused.",
  );

export const FileAttachmentInput = z
  .strictObject({
    type: z.literal("file").describe("Discriminator: a text file from the workspace."),
    path: FilePath,
    lines: LineRange.optional().describe("Only these lines; omit for the whole file."),
  })
  .describe(
    `A UTF-8 text file from the workspace, read when the message is appended (its content is stored, so the history does not change when the file does). At most ${MAX_FILE_ATTACHMENT_BYTES / 1024} KiB of text per attachment; binary files are refused.`,
  );

export const ImageAttachmentInput = z
  .strictObject({
    type: z.literal("image").describe("Discriminator: an image uploaded with asset.upload."),
    assetId: AssetId,
  })
  .describe("An image uploaded to this conversation with asset.upload, by its id.");

export const AttachmentInput = z
  .discriminatedUnion("type", [FileAttachmentInput, ImageAttachmentInput])
  .describe("Something attached to a message: a workspace text file or an uploaded image.");

export const FileAttachment = z
  .object({
    type: z.literal("file").describe("Discriminator: a text file from the workspace."),
    path: z.string().describe("The file's path relative to the workspace, with / separators, as the model sees it."),
    lines: z
      .object({
        start: z.number().int().min(1).describe("First line included."),
        end: z.number().int().min(1).describe("Last line included."),
      })
      .optional()
      .describe("The lines included; absent when the whole file is."),
    content: z.string().describe("The text as read when the message was appended."),
  })
  .describe(
    "A text file as stored with the message. The model receives it after the message text as `<file path=\"…\" lines=\"10-20\">…</file>` (no lines attribute for a whole file).",
  );

export const ImageAttachment = z
  .object({
    type: z.literal("image").describe("Discriminator: an uploaded image."),
    assetId: AssetId,
    mimeType: ImageMimeType,
    size: z.number().int().min(0).describe("Size of the image in bytes."),
    name: z.string().optional().describe("The name given at upload, if any."),
  })
  .describe(
    "An image as stored with the message: a reference to the conversation's asset (the bytes stay in the asset store). The model receives it as an image_url content part with a data: URL.",
  );

export const Attachment = z
  .discriminatedUnion("type", [FileAttachment, ImageAttachment])
  .describe("An attachment as stored in a message record.");

export type AttachmentInput = z.infer<typeof AttachmentInput>;
export type FileAttachment = z.infer<typeof FileAttachment>;
export type ImageAttachment = z.infer<typeof ImageAttachment>;
export type Attachment = z.infer<typeof Attachment>;
