import { MAX_FILE_ATTACHMENT_BYTES, type Attachment, type AttachmentInput } from "../../protocol/index.js";
import { RpcError } from "../rpc/rpc-error.js";
import type { ConversationHandle } from "../store/conversation-store.js";
import { readWorkspaceText, WorkspaceFileError } from "./workspace-file.js";

export interface ResolveOptions {
  /** The conversation's workspace (or the server's working directory). */
  workspace: string;
  handle: ConversationHandle;
  /** UTF-8 bytes of the message text, counted with the file contents against maxMessageBytes. */
  contentBytes: number;
  maxMessageBytes: number;
  /** Config `tools.files.allowHardLinks`: file attachments open files as the file tools do. */
  allowHardLinks: boolean;
}

/**
 * message.append's attachments as they are stored: files read now (so the
 * history keeps what the file said then), images checked to exist and
 * described by their asset's metadata. Any problem is a -32602 naming the
 * attachment's field (`attachments[1].path`).
 */
export async function resolveAttachments(inputs: readonly AttachmentInput[], options: ResolveOptions): Promise<Attachment[]> {
  const out: Attachment[] = [];
  let total = options.contentBytes;
  for (const [i, input] of inputs.entries()) {
    const field = `attachments[${i}]`;
    if (input.type === "image") {
      const info = await options.handle.assetInfo(input.assetId);
      if (!info) {
        throw RpcError.invalidParam(`${field}.assetId`, `no asset "${input.assetId}" in this conversation (upload the image with asset.upload first)`);
      }
      out.push({
        type: "image",
        assetId: info.assetId,
        mimeType: info.mimeType,
        size: info.size,
        ...(info.name !== undefined ? { name: info.name } : {}),
      });
      continue;
    }
    let text;
    try {
      text = await readWorkspaceText(options.workspace, input.path, input.lines, MAX_FILE_ATTACHMENT_BYTES, { allowHardLinks: options.allowHardLinks });
    } catch (error) {
      if (error instanceof WorkspaceFileError) throw RpcError.invalidParam(`${field}.${error.field}`, error.message);
      throw error;
    }
    total += Buffer.byteLength(text.content, "utf8");
    if (total > options.maxMessageBytes) {
      throw RpcError.limitExceeded(
        `the message text and its file attachments up to ${field} come to ${total} bytes, over the limit of ${options.maxMessageBytes} (maxMessageBytes)`,
        "maxMessageBytes",
        options.maxMessageBytes,
        total,
      );
    }
    out.push({ type: "file", path: text.path, ...(text.lines ? { lines: text.lines } : {}), content: text.content });
  }
  return out;
}
