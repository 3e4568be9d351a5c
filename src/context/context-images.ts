import type { ConversationRecord } from "../../protocol/index.js";
import { ContextTooLargeError } from "./context-records.js";
import type { ConversationHandle } from "../store/conversation-store.js";

/**
 * The images a model request needs, as data: URLs by asset id. Records keep
 * only a reference to an image (its bytes would bloat every record read), so
 * the bytes are read from the asset store when a request is built — each
 * asset once, however often it is attached. An asset that is gone is left
 * out of the map (the context builder says so in the text); the data URLs
 * together may not pass `maxBytes` (the request limit, maxContextBytes).
 */
export async function loadContextImages(
  records: readonly ConversationRecord[],
  readAsset: ConversationHandle["readAsset"],
  maxBytes: number,
): Promise<Map<string, string>> {
  const urls = new Map<string, string>();
  let bytes = 0;
  for (const record of records) {
    if (record.type !== "message" || !record.attachments) continue;
    for (const attachment of record.attachments) {
      if (attachment.type !== "image" || urls.has(attachment.assetId)) continue;
      const asset = await readAsset(attachment.assetId);
      if (!asset) continue;
      const url = `data:${asset.info.mimeType};base64,${asset.bytes.toString("base64")}`;
      bytes += url.length;
      if (bytes > maxBytes) throw new ContextTooLargeError(bytes, maxBytes);
      urls.set(attachment.assetId, url);
    }
  }
  return urls;
}
