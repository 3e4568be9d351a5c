import type { Conversation, ConversationRecord } from "../../protocol/index.js";

/**
 * One open conversation: its metadata and records, held in memory and
 * persisted by the store. The store hands out at most one handle per
 * conversation, so there is exactly one writer per file.
 *
 * Mutations change the in-memory state synchronously (before the returned
 * promise settles), so callers can order events by call order; the promise
 * resolves once the change is durable.
 */
export interface ConversationHandle {
  readonly conversation: Conversation;
  readonly records: readonly ConversationRecord[];
  /**
   * Highest event seq that may have been handed out. Seqs are not persisted
   * per event (that would mean a disk write per token); instead the runtime
   * reserves blocks ahead, and after a restart numbering resumes above the
   * reservation, so no seq is ever reused.
   */
  readonly seqReserved: number;
  append(record: ConversationRecord): Promise<void>;
  /** Replace the record with the same `id` (e.g. a tool call changing status). */
  replaceRecord(record: ConversationRecord): Promise<void>;
  /** Replace the metadata (title, model, settings, updatedAt…). recordCount is kept by the store. */
  update(conversation: Conversation): Promise<void>;
  reserveSeq(upTo: number): Promise<void>;
}

export interface ConversationPage {
  data: Conversation[];
  nextCursor?: string;
}

export interface ConversationStore {
  /** Acquire the data dir (refusing if another process holds it) and read the index. */
  open(): Promise<void>;
  /** Flush pending writes and release the data dir. */
  close(): Promise<void>;
  create(conversation: Conversation): Promise<ConversationHandle>;
  /** The conversation's handle, loading it on first use; undefined when it does not exist. */
  get(id: string): Promise<ConversationHandle | undefined>;
  /** Newest first by creation. `cursor` is opaque; a malformed one throws InvalidCursorError. */
  list(options: { limit: number; cursor?: string }): Promise<ConversationPage>;
  delete(id: string): Promise<boolean>;
  /**
   * Drop the conversation from memory once its writes are on disk; the
   * handle becomes unusable and the next `get` reads it again. Stores that
   * keep everything in memory only (no disk) may ignore it.
   */
  unload(id: string): Promise<void>;
  /** Conversations stored. */
  count(): number;
  /** Conversations held in memory. */
  loadedCount(): number;
}

export class InvalidCursorError extends Error {
  constructor() {
    super("cursor is not a value returned as nextCursor");
  }
}

/** Another process holds the data dir; two writers would lose data. */
export class DataDirLockedError extends Error {}
