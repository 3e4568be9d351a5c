/**
 * A write refused because the conversation has been acquired with a higher
 * fencing token than the writer's: its lease is gone and another instance
 * owns the conversation. Not a wire error; the owner-side code that gets it
 * stops the conversation's live work.
 */
export class FencedError extends Error {
  override readonly name = "FencedError";

  constructor(
    readonly conversationId: string,
    readonly token: number,
    readonly currentToken: number,
  ) {
    super(`conversation ${conversationId} is owned under fencing token ${currentToken}; token ${token} is no longer valid`);
  }
}
