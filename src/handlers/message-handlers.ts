import type { MessageRecord } from "../../protocol/index.js";
import { resolveAttachments } from "../attachments/resolve-attachments.js";
import { newId } from "../ids.js";
import { RpcError } from "../rpc/rpc-error.js";
import type { ConversationRuntime } from "../sessions/conversation-runtime.js";
import { checkTextSize } from "./text-size.js";
import type { MethodHandlers } from "./scope-binding.js";

type Handlers = MethodHandlers;

export const messageAppend: Handlers["message.append"] = async (params, { app }, runtime) => {
  checkTextSize("content", params.content, app.config.limits.maxMessageBytes);
  const inputs = params.attachments ?? [];
  // Images are not allowed in system messages by the chat API; files there would be read as instructions.
  if (inputs.length > 0 && params.role !== "user") throw RpcError.invalidParam("attachments", "only user messages carry attachments");
  if (params.role === "assistant") checkAssistantAppend(runtime);
  const attachments =
    inputs.length > 0
      ? await resolveAttachments(inputs, {
          workspace: runtime.handle.conversation.workspace ?? process.cwd(),
          handle: runtime.handle,
          contentBytes: Buffer.byteLength(params.content, "utf8"),
          maxMessageBytes: app.config.limits.maxMessageBytes,
          allowHardLinks: app.config.tools.files.allowHardLinks,
        })
      : [];
  const record: MessageRecord = {
    type: "message",
    id: newId("r"),
    role: params.role,
    content: params.content,
    ...(attachments.length > 0 ? { attachments } : {}),
    timestamp: new Date().toISOString(),
  };
  runtime.assertLive();
  // Announced once durable; a failed write answers STORAGE_ERROR and leaves no trace.
  await runtime.commit(runtime.handle.append(record), () => runtime.publish("message_added", { record }));
  return record;
};

/**
 * A client-written assistant message (history import or reconstruction)
 * closes the current tool round, as the model's next reply would. So it is
 * refused while a generation runs — the generation is the one writing the
 * assistant side — and while a stopped generation's calls are still pending:
 * they would never be offered again. User and system messages do not close
 * a round and stay allowed in both cases.
 */
function checkAssistantAppend(runtime: ConversationRuntime): void {
  if (runtime.generation) throw RpcError.generationInProgress(runtime.generation.id);
  const pending = runtime.storedPendingCalls().map((r) => `"${r.toolCallId}"`);
  if (pending.length > 0) {
    throw RpcError.invalidParam(
      "role",
      `an assistant message would close the tool round whose calls ${pending.join(", ")} are still pending; step (or tool.confirm) to settle them first`,
    );
  }
}
