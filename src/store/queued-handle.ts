/**
 * What every store's conversation handle does the same way: each change
 * becomes one operation on the handle's commit queue (the store decides how
 * a step writes them), and a retired handle refuses every call, saying why.
 * A second store implements the steps, not these methods again.
 */
import type { Conversation, ConversationRecord } from "../../protocol/index.js";
import type { RunState } from "./conversation-store.js";

/** The changes a handle queues, in the order they were asked for. */
export type WriteOp =
  | { kind: "append"; record: ConversationRecord }
  | { kind: "replace"; record: ConversationRecord }
  | { kind: "update"; conversation: Conversation }
  | { kind: "reserve"; upTo: number }
  | { kind: "runState"; state: RunState }
  | { kind: "truncate"; from: number; ifCount?: number };

export abstract class QueuedConversationHandle<Op extends { kind: string } = WriteOp> {
  /** Why the handle was retired; null while it is in use. */
  protected retiredReason: string | null = null;

  abstract get conversation(): Conversation;

  /** Puts one operation on the commit queue; resolves once it is durable. */
  protected abstract enqueue(op: WriteOp | Op): Promise<void>;

  append(record: ConversationRecord): Promise<void> {
    return this.push({ kind: "append", record });
  }

  replaceRecord(record: ConversationRecord): Promise<void> {
    return this.push({ kind: "replace", record });
  }

  update(conversation: Conversation): Promise<void> {
    const id = this.conversation.id;
    if (conversation.id !== id) return Promise.reject(new Error(`update of ${id} got conversation ${conversation.id}`));
    return this.push({ kind: "update", conversation });
  }

  truncateRecords(from: number, ifCount?: number): Promise<void> {
    if (!Number.isInteger(from) || from < 0) return Promise.reject(new Error(`truncate at ${from}: not a position`));
    return this.push({ kind: "truncate", from, ...(ifCount !== undefined ? { ifCount } : {}) });
  }

  reserveSeq(upTo: number): Promise<void> {
    return this.push({ kind: "reserve", upTo });
  }

  updateRunState(state: RunState): Promise<void> {
    return this.push({ kind: "runState", state: structuredClone(state) });
  }

  protected push(op: WriteOp | Op): Promise<void> {
    if (this.retiredReason !== null) return Promise.reject(this.refusal("change"));
    return this.enqueue(op);
  }

  protected assertUsable(what: string): void {
    if (this.retiredReason !== null) throw this.refusal(what);
  }

  protected refusal(what: string): Error {
    return new Error(`cannot ${what} conversation: ${this.retiredReason}`);
  }
}
