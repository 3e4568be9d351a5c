import type { RequestContext } from "../app.js";
import type { HandlerTable } from "../rpc/dispatcher.js";
import { discoverSkills } from "../skills/discover-skills.js";

type Handlers = HandlerTable<RequestContext>;

/** Skills of a conversation's workspace (else the server's working directory) and of the user's config dir. */
export const skillsList: Handlers["skills.list"] = async (params, { app }) => {
  const workspace = params.conversationId
    ? ((await app.hub.get(params.conversationId)).handle.conversation.workspace ?? process.cwd())
    : process.cwd();
  return discoverSkills({ workspace, signal: AbortSignal.timeout(10_000) });
};
