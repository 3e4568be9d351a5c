/**
 * A write by a handle whose fencing token is no longer the conversation's:
 * another instance has claimed the conversation with a higher token since
 * (issue 14's ownership). The write changed nothing. Kept apart from the
 * PostgreSQL store so the ownership code can test for it without loading pg.
 */
export class FencedError extends Error {
  constructor(
    readonly conversationId: string,
    /** The token the refused write carried. */
    readonly token: number,
    /** The token the conversation holds now. */
    readonly current: number,
  ) {
    super(`conversation ${conversationId} is owned under fencing token ${current}; a write with token ${token} was refused`);
    this.name = "FencedError";
  }
}
