import { CONVERSATION_ID_PATTERN } from "../../protocol/limits/records.js";

/**
 * Conversation ids become folder names, so the store accepts only the
 * protocol's safe alphabet: anything else (dots, slashes, empty, too long)
 * can never name a path outside the data dir.
 */
export function isValidConversationId(id: unknown): id is string {
  return typeof id === "string" && CONVERSATION_ID_PATTERN.test(id);
}
