import { MAX_ASSET_BYTES } from "../../protocol/index.js";
import { sniffImageType } from "../attachments/image-type.js";
import { newId } from "../ids.js";
import { RpcError } from "../rpc/rpc-error.js";
import type { AssetInfo } from "../store/conversation-store.js";
import type { MethodHandlers } from "./scope-binding.js";

type Handlers = MethodHandlers;

/** Standard base64 (padding optional): Buffer.from would silently skip anything else and store garbage. */
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export const assetUpload: Handlers["asset.upload"] = async (params, _context, runtime) => {
  const bytes = decodeBase64(params.data);
  if (bytes.length > MAX_ASSET_BYTES) {
    throw RpcError.invalidParam("data", `the image is ${bytes.length} bytes, over the limit of ${MAX_ASSET_BYTES}`, "too_big");
  }
  const mimeType = sniffImageType(bytes);
  if (!mimeType) throw RpcError.invalidParam("data", "not a PNG, JPEG, GIF or WebP image (recognised by its first bytes)");
  if (params.mimeType !== undefined && params.mimeType !== mimeType) {
    throw RpcError.invalidParam("mimeType", `the bytes are ${mimeType}, not ${params.mimeType}`);
  }
  const info: AssetInfo = {
    assetId: newId("a"),
    mimeType,
    size: bytes.length,
    ...(params.name !== undefined ? { name: params.name } : {}),
    createdAt: new Date().toISOString(),
  };
  runtime.assertLive();
  // Through commit so the conversation counts as busy (not unloaded) while the file is written; nothing is announced.
  await runtime.commit(runtime.handle.putAsset(info, bytes), () => undefined);
  return { assetId: info.assetId, mimeType, size: bytes.length };
};

function decodeBase64(data: string): Buffer {
  if (!BASE64.test(data) || data.length % 4 === 1) {
    const hint = data.startsWith("data:") ? " (send the bytes only, without the data: URL prefix)" : "";
    throw RpcError.invalidParam("data", `not base64${hint}`);
  }
  return Buffer.from(data, "base64");
}
