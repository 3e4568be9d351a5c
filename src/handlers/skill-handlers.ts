import { discoverSkills } from "../skills/discover-skills.js";
import type { MethodHandlers } from "./scope-binding.js";

type Handlers = MethodHandlers;

/** Skills of a conversation's workspace (else the server's working directory) and of the user's config dir. */
export const skillsList: Handlers["skills.list"] = async (_params, _context, runtime) => {
  const workspace = runtime?.handle.conversation.workspace ?? process.cwd();
  return discoverSkills({ workspace, signal: AbortSignal.timeout(10_000) });
};
