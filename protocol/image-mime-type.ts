/**
 * The image types of assets as a zod enum (attachments.ts re-exports it).
 * The list itself is in limits/attachments.ts, without zod: the store,
 * opened at every start, checks a stored asset's type with it.
 */
import * as z from "zod";
import { IMAGE_MIME_TYPES } from "./limits/attachments.js";

/** Image types accepted by asset.upload (IMAGE_MIME_TYPES). */
export const ImageMimeType = z
  .enum(IMAGE_MIME_TYPES)
  .describe("Image type, as recognised from the bytes themselves (PNG, JPEG, GIF or WebP).");

export type ImageMimeType = z.infer<typeof ImageMimeType>;
