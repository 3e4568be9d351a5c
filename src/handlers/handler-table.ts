import type { RequestContext } from "../app.js";
import type { HandlerTable } from "../rpc/dispatcher.js";
import * as agent from "./agent-handlers.js";
import * as asset from "./asset-handlers.js";
import * as clientTools from "./client-tool-handlers.js";
import * as conversation from "./conversation-handlers.js";
import * as mcp from "./mcp-handlers.js";
import * as message from "./message-handlers.js";
import * as rewind from "./rewind-handlers.js";
import { bindScopes } from "./scope-binding.js";
import * as session from "./session-handlers.js";
import * as skill from "./skill-handlers.js";

/**
 * history.* (other runtimes' sessions), which few servers are ever asked:
 * its handlers load at the first call rather than with every server and
 * one-shot command. (Not conversation.rewind's: a rewind takes hold of its
 * conversation before its first await, and a step sent right after it must
 * find it held.)
 */
const history = () => import("./history-handlers.js");

/**
 * One handler per inventory method; a missing one does not compile. Where a
 * method runs (on the conversation's owner in cluster mode) follows from its
 * scope in the inventory, bound here once (scope-binding.ts).
 */
export const handlers: HandlerTable<RequestContext> = bindScopes(
  {
    initialize: session.initialize,
    "server.status": session.serverStatus,
    "conversation.create": conversation.conversationCreate,
    "conversation.list": conversation.conversationList,
    "conversation.get": conversation.conversationGet,
    "conversation.diff": conversation.conversationDiff,
    "conversation.update": conversation.conversationUpdate,
    "conversation.fork": conversation.conversationFork,
    "conversation.rewind": rewind.conversationRewind,
    "conversation.unrewind": rewind.conversationUnrewind,
    "conversation.compact": agent.conversationCompact,
    "conversation.delete": conversation.conversationDelete,
    "conversation.subscribe": conversation.conversationSubscribe,
    "conversation.unsubscribe": conversation.conversationUnsubscribe,
    "message.append": message.messageAppend,
    "queue.list": message.queueList,
    "queue.remove": message.queueRemove,
    "queue.clear": message.queueClear,
    "asset.upload": asset.assetUpload,
    step: agent.step,
    interrupt: agent.interrupt,
    "generation.wait": agent.generationWait,
    "tool.confirm": agent.toolConfirm,
    "input.respond": agent.inputRespond,
    "tools.list": agent.toolsList,
    "tools.register": clientTools.toolsRegister,
    "tool.result": clientTools.toolResult,
    "models.list": agent.modelsList,
    "mcp.list": mcp.mcpList,
    "mcp.add": mcp.mcpAdd,
    "mcp.remove": mcp.mcpRemove,
    "mcp.probe": mcp.mcpProbe,
    "skills.list": skill.skillsList,
    "commands.list": skill.commandsList,
    "modes.list": agent.modesList,
    "history.sources": async (params, context) => (await history()).historySources(params, context),
    "history.list": async (params, context) => (await history()).historyList(params, context),
    "history.importSession": async (params, context) => (await history()).historyImport(params, context),
  },
  { "conversation.delete": conversation.deleteDamaged },
);
