/**
 * The image types of assets, apart from attachments.ts (which re-exports
 * them): the store checks an asset's stored type with it, and the store is
 * opened at every start, whereas attachments.ts's other schemas are built
 * when a request first needs them.
 */
import * as z from "zod";

/** Image types accepted by asset.upload: the four every vision model takes, each recognisable by its first bytes. */
export const ImageMimeType = z
  .enum(["image/png", "image/jpeg", "image/gif", "image/webp"])
  .describe("Image type, as recognised from the bytes themselves (PNG, JPEG, GIF or WebP).");

export type ImageMimeType = z.infer<typeof ImageMimeType>;
