import type { Conversation, ConversationRecord, ToolCallRecord } from "../../protocol/index.js";
import type {
  AssetInfo,
  ConversationDocument,
  ConversationHandle,
  ConversationPage,
  ConversationStore,
  DamagedConversation,
  ListOptions,
  RunState,
} from "./conversation-store.js";
import { TruncateConflictError } from "./conversation-store.js";
import { AssetUsage, UNLIMITED_ASSETS, type AssetLimits } from "./asset-quota.js";
import { isValidConversationId } from "./conversation-id.js";
import { compareNewestFirst, selectPage, toPage } from "./list-page.js";
import { ConversationExistsError } from "./conversation-exists-error.js";

/**
 * The ConversationStore contract held in memory: for tests of the layers
 * above the store. Like the lowdb store, a mutation shows only once its
 * promise settles (never synchronously at the call), so code tested against
 * this store cannot come to rely on seeing its changes early.
 */
export class MemoryConversationStore implements ConversationStore {
  readonly #handles = new Map<string, MemoryConversationHandle>();
  readonly #assetUsage: AssetUsage;

  /** `assetLimits`: bytes of images per conversation and in all (default: no bound). */
  constructor(options: { assetLimits?: AssetLimits } = {}) {
    this.#assetUsage = new AssetUsage(options.assetLimits ?? UNLIMITED_ASSETS);
  }

  async open(): Promise<void> {}

  async close(): Promise<void> {}

  async create(conversation: Conversation): Promise<ConversationHandle> {
    if (!isValidConversationId(conversation.id)) throw new Error(`invalid conversation id ${JSON.stringify(conversation.id)}`);
    if (this.#handles.has(conversation.id)) throw new ConversationExistsError(conversation.id);
    const handle = new MemoryConversationHandle({ ...conversation, recordCount: 0 }, this.#assetUsage);
    this.#handles.set(conversation.id, handle);
    return handle;
  }

  async get(id: string): Promise<ConversationHandle | undefined> {
    return this.#handles.get(id);
  }

  async list(options: ListOptions): Promise<ConversationPage> {
    const parent = options.parentConversationId;
    const sorted = [...this.#handles.values()]
      .map((handle) => handle.conversation)
      .filter((c) => parent === undefined || c.parentConversationId === parent)
      .sort(compareNewestFirst);
    const { page, nextCursor } = selectPage(sorted, options.limit, options.cursor);
    return toPage(page, nextCursor);
  }

  async delete(id: string): Promise<boolean> {
    this.#assetUsage.forget(id);
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

  /** Memory cannot be damaged. */
  damaged(): readonly DamagedConversation[] {
    return [];
  }
}

class MemoryConversationHandle implements ConversationHandle {
  conversation: Conversation;
  seqReserved = 0;
  runState: RunState | null = null;
  openToolCalls: readonly ToolCallRecord[] = [];
  readonly #records: ConversationRecord[] = [];
  readonly #positions = new Map<string, number>();
  /** Assets live and die with the handle: deleting the conversation drops them. */
  readonly #assets = new Map<string, { info: AssetInfo; bytes: Buffer }>();
  readonly #documents = new Map<ConversationDocument, unknown>();

  readonly #assetUsage: AssetUsage;

  constructor(conversation: Conversation, assetUsage: AssetUsage) {
    this.conversation = conversation;
    this.#assetUsage = assetUsage;
  }

  get recordCount(): number {
    return this.#records.length;
  }

  async readRecords(from = 0, to = Number.POSITIVE_INFINITY): Promise<ConversationRecord[]> {
    const start = Math.max(0, Math.floor(from) || 0);
    return this.#records.slice(start, Math.max(start, Math.floor(to)));
  }

  async findToolCall(toolCallId: string): Promise<ToolCallRecord | undefined> {
    for (let i = this.#records.length - 1; i >= 0; i--) {
      const record = this.#records[i];
      if (record.type === "tool_call" && record.toolCallId === toolCallId) return record;
    }
    return undefined;
  }

  async append(record: ConversationRecord): Promise<void> {
    await settle();
    if (this.#positions.has(record.id)) throw new Error(`record ${record.id} is already in the conversation`);
    this.#positions.set(record.id, this.#records.length);
    this.#records.push(record);
    this.conversation = { ...this.conversation, recordCount: this.#records.length, updatedAt: record.timestamp };
    if (record.type === "message" && record.role === "assistant") this.openToolCalls = [];
    else if (record.type === "tool_call") this.openToolCalls = [...this.openToolCalls, record];
  }

  async replaceRecord(record: ConversationRecord): Promise<void> {
    await settle();
    const position = this.#positions.get(record.id);
    if (position === undefined) throw new Error(`record ${record.id} is not in the conversation`);
    this.#records[position] = record;
    this.#refreshOpenRound();
  }

  async truncateRecords(from: number, ifCount?: number): Promise<void> {
    await settle();
    if (ifCount !== undefined && ifCount !== this.#records.length) throw new TruncateConflictError(ifCount, this.#records.length);
    if (from >= this.#records.length) return;
    for (const record of this.#records.splice(from)) this.#positions.delete(record.id);
    this.conversation = { ...this.conversation, recordCount: this.#records.length, updatedAt: new Date().toISOString() };
    this.#refreshOpenRound();
  }

  async readDocument(name: ConversationDocument): Promise<unknown> {
    const value = this.#documents.get(name);
    return value === undefined ? undefined : structuredClone(value);
  }

  async writeDocument(name: ConversationDocument, value: unknown): Promise<void> {
    const copy = value === undefined ? undefined : structuredClone(value);
    await settle();
    if (copy === undefined) this.#documents.delete(name);
    else this.#documents.set(name, copy);
  }

  async update(conversation: Conversation): Promise<void> {
    if (conversation.id !== this.conversation.id) throw new Error(`update of ${this.conversation.id} got conversation ${conversation.id}`);
    await settle();
    const { createdAt, recordCount } = this.conversation;
    // updatedAt never goes back (an update computed before a concurrent append carries the older time).
    const updatedAt = conversation.updatedAt > this.conversation.updatedAt ? conversation.updatedAt : this.conversation.updatedAt;
    this.conversation = { ...conversation, createdAt, recordCount, updatedAt };
  }

  async reserveSeq(upTo: number): Promise<void> {
    await settle();
    this.seqReserved = Math.max(this.seqReserved, upTo);
  }

  async updateRunState(state: RunState): Promise<void> {
    // Copied at the call, as the lowdb store does: a caller changing its object afterwards changes nothing stored.
    const copy = structuredClone(state);
    await settle();
    this.runState = copy;
  }

  async putAsset(info: AssetInfo, bytes: Uint8Array): Promise<void> {
    // Reserved at the call, as the lowdb store does: uploads made together cannot pass the quota together.
    const reservation = this.#assetUsage.reserve(this.conversation.id, bytes.length, this.#assets.get(info.assetId)?.bytes.length ?? 0);
    await settle();
    // A copy: the caller's buffer may be reused.
    this.#assets.set(info.assetId, { info: { ...info }, bytes: Buffer.from(bytes) });
    reservation.commit();
  }

  async assetInfo(assetId: string): Promise<AssetInfo | undefined> {
    const asset = this.#assets.get(assetId);
    return asset && { ...asset.info };
  }

  async readAsset(assetId: string): Promise<{ info: AssetInfo; bytes: Buffer } | undefined> {
    const asset = this.#assets.get(assetId);
    return asset && { info: { ...asset.info }, bytes: Buffer.from(asset.bytes) };
  }

  /** The tool calls after the last assistant message. */
  #refreshOpenRound(): void {
    const calls: ToolCallRecord[] = [];
    for (let i = this.#records.length - 1; i >= 0; i--) {
      const record = this.#records[i];
      if (record.type === "message" && record.role === "assistant") break;
      if (record.type === "tool_call") calls.push(record);
    }
    this.openToolCalls = calls.reverse();
  }
}

/** One turn of the event loop's microtasks: calls made together still apply in call order. */
function settle(): Promise<void> {
  return Promise.resolve();
}
