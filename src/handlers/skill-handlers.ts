import { isAbsolute } from "node:path";
import { RpcError } from "../rpc/rpc-error.js";
import { discoverCommands } from "../skills/discover-commands.js";
import { discoverSkills } from "../skills/discover-skills.js";
import type { MethodHandlers } from "./scope-binding.js";

type Handlers = MethodHandlers;

/** Skills of a conversation's workspace (else the server's working directory) and of the user's config dir. */
export const skillsList: Handlers["skills.list"] = async (_params, _context, runtime) => {
  const workspace = runtime?.handle.conversation.workspace ?? process.cwd();
  return discoverSkills({ workspace, signal: AbortSignal.timeout(10_000) });
};

/** Prompt templates of a conversation's workspace (or a named one, else the server's working directory) and of the user's config dir. */
export const commandsList: Handlers["commands.list"] = async (params, _context, runtime) => {
  if (params.workspace !== undefined) {
    if (params.conversationId !== undefined) throw RpcError.invalidParam("workspace", "give conversationId or workspace, not both");
    if (!isAbsolute(params.workspace)) throw RpcError.invalidParam("workspace", "must be an absolute path");
  }
  const workspace = params.workspace ?? runtime?.handle.conversation.workspace ?? process.cwd();
  const found = await discoverCommands({ workspace, signal: AbortSignal.timeout(10_000) });
  // The template itself is not listed: it is what message.append { command } sends.
  return { commands: found.commands.map(({ template: _template, ...command }) => command), problems: found.problems };
};
