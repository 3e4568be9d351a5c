/**
 * An ACP prompt (content blocks) as one agentwire user message: text joins
 * the content; a `resource_link` to a file in the workspace becomes a file
 * attachment (read by the server, as `agentwire chat --attach` does), one
 * elsewhere is named in the text; an embedded text resource (an editor's
 * buffer, saved or not) is inlined as `<file>` the way agentwire shows
 * attached files to the model; images (and image blobs) are uploaded with
 * asset.upload and attached. Audio is not advertised, so it is refused.
 */
import { isAbsolute, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import type * as acp from "@agentclientprotocol/sdk";
import { RequestError } from "@agentclientprotocol/sdk";
import type { AgentwireClient, MessageAppendParams } from "../../clients/typescript/index.js";
import { checkFrameSize } from "../chat/frame-limit.js";

type AttachmentInput = NonNullable<MessageAppendParams["attachments"]>[number];

export interface PromptMessage {
  content: string;
  attachments: AttachmentInput[];
}

/** A file:// URI's path, when it is one. */
function filePath(uri: string): string | undefined {
  if (!uri.startsWith("file://")) return isAbsolute(uri) ? uri : undefined;
  try {
    return fileURLToPath(uri);
  } catch {
    return undefined;
  }
}

function insideWorkspace(path: string, workspace: string): string | undefined {
  const rel = relative(workspace, path);
  return rel && !rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel) ? rel : undefined;
}

export async function promptMessage(
  prompt: acp.ContentBlock[],
  context: { client: AgentwireClient; conversationId: string; workspace: string },
): Promise<PromptMessage> {
  const texts: string[] = [];
  const attachments: AttachmentInput[] = [];
  const upload = async (data: string, mimeType: string, name?: string) => {
    const params = { conversationId: context.conversationId, data, mimeType: mimeType as "image/png", ...(name ? { name: name.slice(0, 255) } : {}) };
    // Measured first: a frame over the server's limit would close the whole connection (1009).
    checkFrameSize(context.client, "asset.upload", params, `the image ${name ?? ""}`.trim());
    const asset = await context.client.asset.upload(params);
    attachments.push({ type: "image", assetId: asset.assetId });
  };
  for (const [i, block] of prompt.entries()) {
    switch (block.type) {
      case "text":
        texts.push(block.text);
        break;
      case "image":
        await upload(block.data, block.mimeType, block.uri ?? undefined);
        break;
      case "resource_link": {
        const path = filePath(block.uri);
        const rel = path ? insideWorkspace(path, context.workspace) : undefined;
        if (rel !== undefined) attachments.push({ type: "file", path: rel });
        else texts.push(`[${block.title ?? block.name}](${block.uri})`);
        break;
      }
      case "resource": {
        const resource = block.resource;
        if ("text" in resource) {
          const path = filePath(resource.uri);
          const shown = path ? (insideWorkspace(path, context.workspace) ?? path) : resource.uri;
          texts.push(`<file path="${shown}">\n${resource.text}\n</file>`);
        } else if (resource.mimeType?.startsWith("image/")) {
          await upload(resource.blob, resource.mimeType, resource.uri);
        } else {
          texts.push(`[binary resource ${resource.uri}${resource.mimeType ? ` (${resource.mimeType})` : ""}, not included]`);
        }
        break;
      }
      default:
        throw RequestError.invalidParams({ path: `prompt[${i}].type` }, `prompt[${i}]: ${block.type} content is not supported (see promptCapabilities)`);
    }
  }
  return { content: texts.join("\n\n"), attachments };
}
