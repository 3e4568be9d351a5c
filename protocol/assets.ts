import * as z from "zod";
import { AssetId, ImageMimeType, MAX_ASSET_BASE64_CHARS, MAX_ASSET_BYTES } from "./attachments.js";
import { ConversationId } from "./records.js";

export const AssetUploadParams = z
  .strictObject({
    conversationId: ConversationId,
    mimeType: ImageMimeType.optional().describe(
      "The type the client believes the image has. The server recognises the type from the bytes; a declared type that disagrees is refused.",
    ),
    data: z
      .string()
      .min(1)
      .max(MAX_ASSET_BASE64_CHARS)
      .describe(
        `The image bytes, base64-encoded (standard alphabet, padding optional). At most ${MAX_ASSET_BYTES / (1024 * 1024)} MiB decoded — but the whole frame must also fit the server's frame limit (--max-payload, 4 MiB by default), which caps an upload at about 3 MiB of image unless the limit is raised.`,
      ),
    name: z.string().min(1).max(255).optional().describe("A name to show for the image (e.g. its file name); kept with the asset."),
  })
  .describe("Parameters of asset.upload.");

export const AssetUploadResult = z
  .object({
    assetId: AssetId,
    mimeType: ImageMimeType,
    size: z.number().int().min(1).describe("Size of the stored image in bytes."),
  })
  .describe("The stored asset: reference it in message.append as {type: \"image\", assetId}.");
