import type { MessageRecord } from "../../protocol/index.js";
import type { RequestContext } from "../app.js";
import { newId } from "../ids.js";
import type { HandlerTable } from "../rpc/dispatcher.js";
import { checkTextSize } from "./text-size.js";

type Handlers = HandlerTable<RequestContext>;

export const messageAppend: Handlers["message.append"] = async (params, { app }) => {
  checkTextSize("content", params.content, app.config.maxMessageBytes);
  const runtime = await app.hub.get(params.conversationId);
  const record: MessageRecord = {
    type: "message",
    id: newId("r"),
    role: params.role,
    content: params.content,
    timestamp: new Date().toISOString(),
  };
  runtime.assertLive();
  // Announced once durable; a failed write answers STORAGE_ERROR and leaves no trace.
  await runtime.commit(runtime.handle.append(record), () => runtime.publish("message_added", { record }));
  return record;
};
