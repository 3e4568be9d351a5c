/**
 * Conversation ids become folder names, so the store accepts only a safe
 * alphabet: anything else (dots, slashes, empty, too long) can never name a
 * path outside the data dir.
 */
const SAFE_ID = /^[A-Za-z0-9_-]{1,128}$/;

export function isValidConversationId(id: unknown): id is string {
  return typeof id === "string" && SAFE_ID.test(id);
}
