import type { RequestContext } from "../app.js";
import type { HandlerTable } from "../rpc/dispatcher.js";
import * as agent from "./agent-handlers.js";
import * as asset from "./asset-handlers.js";
import * as conversation from "./conversation-handlers.js";
import * as mcp from "./mcp-handlers.js";
import * as message from "./message-handlers.js";
import * as session from "./session-handlers.js";
import { ownerRouted } from "./owner-routed.js";
import * as skill from "./skill-handlers.js";
import { DEFAULT_WAIT_MS } from "../../protocol/index.js";

/**
 * One handler per inventory method; a missing one does not compile. Those
 * wrapped in ownerRouted run on the conversation's owner in cluster mode.
 */
export const handlers: HandlerTable<RequestContext> = {
  initialize: session.initialize,
  "server.status": session.serverStatus,
  "conversation.create": conversation.conversationCreate,
  "conversation.list": conversation.conversationList,
  "conversation.get": ownerRouted("conversation.get", conversation.conversationGet),
  "conversation.update": ownerRouted("conversation.update", conversation.conversationUpdate),
  "conversation.fork": ownerRouted("conversation.fork", conversation.conversationFork),
  "conversation.delete": ownerRouted("conversation.delete", conversation.conversationDelete),
  "conversation.subscribe": conversation.conversationSubscribe,
  "conversation.unsubscribe": conversation.conversationUnsubscribe,
  "message.append": ownerRouted("message.append", message.messageAppend),
  "asset.upload": ownerRouted("asset.upload", asset.assetUpload),
  step: ownerRouted("step", agent.step),
  interrupt: ownerRouted("interrupt", agent.interrupt),
  "generation.wait": ownerRouted("generation.wait", agent.generationWait, (p) => p.timeoutMs ?? DEFAULT_WAIT_MS),
  "tool.confirm": ownerRouted("tool.confirm", agent.toolConfirm),
  "tools.list": agent.toolsList,
  "models.list": agent.modelsList,
  "mcp.list": mcp.mcpList,
  "mcp.add": mcp.mcpAdd,
  "mcp.remove": mcp.mcpRemove,
  "mcp.probe": mcp.mcpProbe,
  "skills.list": skill.skillsList,
};
