/**
 * A write whose fencing token is no longer the conversation's: another
 * instance has claimed the conversation with a higher token since (issue
 * 14's ownership). Raised by the store (PostgreSQL) for a record or state
 * write and by the cluster's event bus for a publish; the write changed
 * nothing. The one class for both: it lives here, the lower of the two
 * layers, apart from the PostgreSQL store so the cluster and the generation
 * loop can test for it without loading pg.
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
