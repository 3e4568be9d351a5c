/**
 * `agentwire chat --continue`: the most recently updated conversation whose
 * workspace is the working directory (chat gives a new conversation that
 * directory as its workspace), found through conversation.list like any
 * client would. The walk is bounded: a store of more conversations than
 * that is searched among its newest.
 */
import { realpathSync } from "node:fs";
import type { AgentwireClient, Conversation } from "../../clients/typescript/index.js";

/** conversation.list pages read at most (newest first by creation), PAGE each. */
const MAX_PAGES = 20;
const PAGE = 100;

function realpathOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

export async function lastConversationIn(client: AgentwireClient, cwd: string): Promise<Conversation | undefined> {
  const here = new Set([cwd, realpathOr(cwd)]);
  let best: Conversation | undefined;
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const { data, nextCursor } = await client.conversation.list({ limit: PAGE, ...(cursor ? { cursor } : {}) });
    for (const conversation of data) {
      if (conversation.workspace === null || !here.has(conversation.workspace)) continue;
      if (!best || conversation.updatedAt > best.updatedAt) best = conversation;
    }
    if (!nextCursor) break;
    cursor = nextCursor;
  }
  return best;
}
