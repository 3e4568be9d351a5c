import type { MessageRecord } from "../../protocol/index.js";
import type { RequestContext } from "../app.js";
import { newId } from "../ids.js";
import type { HandlerTable } from "../rpc/dispatcher.js";
import { RpcError } from "../rpc/rpc-error.js";

type Handlers = HandlerTable<RequestContext>;

export const messageAppend: Handlers["message.append"] = async (params, { app }) => {
  const runtime = await app.hub.get(params.conversationId);
  const record: MessageRecord = {
    type: "message",
    id: newId("r"),
    role: params.role,
    content: params.content,
    timestamp: new Date().toISOString(),
  };
  // The record joins memory and gets its seq in the same tick, so the order
  // of records always matches the order of their message_added events.
  runtime.assertLive();
  const written = runtime.handle.append(record);
  runtime.publish("message_added", { record });
  try {
    await written;
  } catch (error) {
    app.log.error(`append to conversation ${runtime.id} failed`, error);
    throw RpcError.storageError("the message could not be written to disk");
  }
  return record;
};
