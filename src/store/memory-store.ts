import type { Conversation, ConversationRecord } from "../../protocol/index.js";
import type { ConversationHandle, ConversationPage, ConversationStore } from "./conversation-store.js";
import { isValidConversationId } from "./conversation-id.js";
import { compareNewestFirst, selectPage, toPage } from "./list-page.js";

/** The ConversationStore contract held in memory: for tests of the layers above the store. */
export class MemoryConversationStore implements ConversationStore {
  readonly #handles = new Map<string, MemoryConversationHandle>();

  async open(): Promise<void> {}

  async close(): Promise<void> {}

  async create(conversation: Conversation): Promise<ConversationHandle> {
    if (!isValidConversationId(conversation.id)) throw new Error(`invalid conversation id ${JSON.stringify(conversation.id)}`);
    if (this.#handles.has(conversation.id)) throw new Error(`conversation ${conversation.id} already exists`);
    const handle = new MemoryConversationHandle({ ...conversation, recordCount: 0 });
    this.#handles.set(conversation.id, handle);
    return handle;
  }

  async get(id: string): Promise<ConversationHandle | undefined> {
    return this.#handles.get(id);
  }

  async list(options: { limit: number; cursor?: string }): Promise<ConversationPage> {
    const sorted = [...this.#handles.values()].map((handle) => handle.conversation).sort(compareNewestFirst);
    const { page, nextCursor } = selectPage(sorted, options.limit, options.cursor);
    return toPage(page, nextCursor);
  }

  async delete(id: string): Promise<boolean> {
    return this.#handles.delete(id);
  }

  /** Memory is the only copy here: nothing to unload. */
  async unload(_id: string): Promise<void> {}

  count(): number {
    return this.#handles.size;
  }

  loadedCount(): number {
    return this.#handles.size;
  }
}

class MemoryConversationHandle implements ConversationHandle {
  conversation: Conversation;
  readonly records: ConversationRecord[] = [];
  seqReserved = 0;
  readonly #positions = new Map<string, number>();

  constructor(conversation: Conversation) {
    this.conversation = conversation;
  }

  async append(record: ConversationRecord): Promise<void> {
    if (this.#positions.has(record.id)) throw new Error(`record ${record.id} is already in the conversation`);
    this.#positions.set(record.id, this.records.length);
    this.records.push(record);
    this.conversation = { ...this.conversation, recordCount: this.records.length, updatedAt: record.timestamp };
  }

  async replaceRecord(record: ConversationRecord): Promise<void> {
    const position = this.#positions.get(record.id);
    if (position === undefined) throw new Error(`record ${record.id} is not in the conversation`);
    this.records[position] = record;
  }

  async update(conversation: Conversation): Promise<void> {
    if (conversation.id !== this.conversation.id) throw new Error(`update of ${this.conversation.id} got conversation ${conversation.id}`);
    const { createdAt, recordCount } = this.conversation;
    this.conversation = { ...conversation, createdAt, recordCount };
  }

  async reserveSeq(upTo: number): Promise<void> {
    this.seqReserved = Math.max(this.seqReserved, upTo);
  }
}
