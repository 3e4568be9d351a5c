/**
 * tools.register and tool.result: client-provided tools (src/tools/client-tools.ts
 * holds the registrations and the calls waiting for an answer).
 */
import { RpcError } from "../rpc/rpc-error.js";
import type { MethodHandlers } from "./scope-binding.js";

type Handlers = MethodHandlers;

export const toolsRegister: Handlers["tools.register"] = (params, { app, connection }, runtime) => {
  // Forwarded from another instance, a request runs on a stand-in for its caller that reaches it through that
  // instance (server.ts); only one forwarded without its caller runs on the shared stand-in nothing reaches,
  // where a client_tool_call would be lost: refuse that rather than register a dead end.
  if (connection.forwarded) {
    throw RpcError.invalidParam(
      "conversationId",
      "client tools must be registered on a connection to the instance that owns this conversation; this request was forwarded from another instance (cluster mode)",
    );
  }
  const reserved = new Set(app.agent.toolSpecs.map((spec) => spec.name));
  const owner = { id: connection.id, clientName: connection.clientInfo?.name, send: (frame: string) => connection.send(frame) };
  const tools = app.agent.clientTools.register(runtime.id, owner, params.tools, (name) => reserved.has(name));
  return { tools };
};

export const toolResult: Handlers["tool.result"] = async (params, { app, connection }, runtime) => {
  const { toolCallId } = params;
  const status = app.agent.clientTools.answer(runtime.id, toolCallId, connection.id, params.output, params.isError === true);
  if (status) return { status };
  const stored = await runtime.handle.findToolCall(toolCallId);
  if (!stored) throw RpcError.toolCallNotFound(toolCallId);
  if (stored.status === "pending" || stored.status === "executing") {
    throw RpcError.invalidParam("toolCallId", `tool call "${toolCallId}" (${stored.toolName}) is not a client tool call waiting for an answer (it is ${stored.status})`);
  }
  throw RpcError.toolCallNotPending(toolCallId, stored.status);
};
