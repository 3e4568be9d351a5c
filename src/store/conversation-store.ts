import type {
  Conversation,
  ConversationRecord,
  GenerationOutcome,
  ImageMimeType,
  LastError,
  Plan,
  QueuedMessage,
  ToolCallRecord,
} from "../../protocol/index.js";
import type { TokenUsage } from "../../protocol/usage.js";
import type { InputRequest } from "../../protocol/input-request.js";
import type { ConversationMcpServer } from "../../protocol/config-mcp.js";

/**
 * What a server holding a data dir says about itself beside its lock
 * (data-dir-lock.ts). shared: false for a server a client command started
 * for itself (it stops with the command, so no other command may lean on
 * it); it has no url then.
 */
export type ServerAdvert = { shared: true; url: string; tokenRequired: boolean } | { shared: false };

/** What the store keeps about an asset besides its bytes. */
export interface AssetInfo {
  assetId: string;
  mimeType: ImageMimeType;
  /** Bytes. */
  size: number;
  name?: string;
  createdAt: string;
}

/** How one generation ended, as the runtime keeps it (and stores the latest). */
export interface GenerationSummary {
  generationId: string;
  outcome: GenerationOutcome;
  endedAt: string;
  error?: { code: number; message: string; status?: number };
  /** Tokens of all its model calls; null when the endpoint reported none. */
  usage: TokenUsage | null;
  modelCalls: number;
  /** Id of the last assistant message it stored (read back on demand, not held). */
  finalRecordId: string | null;
}

/**
 * The live state of a conversation that must outlive its runtime (an unload,
 * a restart): written with the conversation's metadata, never with a record.
 */
export interface RunState {
  lastError: LastError | null;
  lastGeneration: GenerationSummary | null;
  autoConfirmRemaining: number;
  /** The agent's plan (update_plan); absent before the first, and in states stored before plans existed. */
  plan?: Plan;
  /** Messages held for later (message.append delivery steer or queue), oldest first; absent when none. */
  queue?: QueuedMessage[];
  /** The most recent clientMessageIds (message.append), oldest first, at most CLIENT_MESSAGE_ID_WINDOW; absent when none. */
  clientMessageIds?: ClientMessageIdEntry[];
  /** Open ask_user questions (state.pendingInputs), oldest first; absent when none. */
  pendingInputs?: InputRequest[];
  /** The conversation's own MCP servers (conversation.create mcpServers), env and headers included; absent when none. */
  mcpServers?: ConversationMcpServer[];
}

/** What a clientMessageId was used for: the message it appended, and a digest of what that message said. */
export interface ClientMessageIdEntry {
  clientMessageId: string;
  recordId: string;
  /** sha256 of the role, content and attachments asked for: a retry must say the same. */
  digest: string;
}

/** The documents a conversation may keep beside its records (ConversationHandle.readDocument). */
export type ConversationDocument = "checkpoints" | "rewind";
export const CONVERSATION_DOCUMENTS: readonly ConversationDocument[] = ["checkpoints", "rewind"];

/**
 * One open conversation, as the store hands it out (at most one handle per
 * conversation, so there is exactly one writer per file or row).
 *
 * Durable first, visible second: a mutation shows in `conversation`,
 * `recordCount`, `openToolCalls` and `readRecords` only once it is durable,
 * and its promise resolves right after that. A mutation that rejects changed
 * nothing — not in memory, not on disk — and rejects with a StoreFileError
 * (whose message names the file for the server log). Mutations of one handle
 * take effect in the order they were called.
 *
 * Records are paged: a handle keeps only small state in memory (metadata,
 * the open round's tool calls) and reads records from disk on demand, so a
 * long conversation costs disk, not memory.
 */
export interface ConversationHandle {
  readonly conversation: Conversation;
  /**
   * Highest event seq that may have been handed out (durable). Seqs are not
   * persisted per event (that would mean a disk write per token); the runtime
   * reserves blocks ahead, and after a restart numbering resumes above the
   * reservation, so no seq is ever reused.
   */
  readonly seqReserved: number;
  /** Records stored. */
  readonly recordCount: number;
  /**
   * The tool-call records stored after the last assistant message, in order:
   * the open round, which a stop may have left pending or executing. Held in
   * memory (at most the calls of one model reply).
   */
  readonly openToolCalls: readonly ToolCallRecord[];
  /** Records at positions [from, to) (clamped to what exists), oldest first. */
  readRecords(from?: number, to?: number): Promise<ConversationRecord[]>;
  /** The latest tool-call record with this toolCallId anywhere in the conversation. */
  findToolCall(toolCallId: string): Promise<ToolCallRecord | undefined>;
  append(record: ConversationRecord): Promise<void>;
  /** Replace the record with the same `id` (e.g. a tool call changing status). */
  replaceRecord(record: ConversationRecord): Promise<void>;
  /**
   * A hint, never required: replaces of the open round's calls will come
   * (a call waits for approval with its tool prepared), and the first is on
   * the approval's path. A store may get ready for them meanwhile.
   */
  prepareReplaces?(): void;
  /**
   * A hint, never required: the changes asked for from now until the
   * current event-loop turn ends belong together (a reply's record, then
   * the usage totals and run state it brings). A store may hold its next
   * write until then, to write them as one.
   */
  gather?(): void;
  /**
   * Remove the records at positions `from` and later (conversation.rewind):
   * gone from recordCount, readRecords and the open round once resolved. A
   * truncation that rejects removed nothing. In order with the other
   * mutations of the handle. With `ifCount`, it happens only if the
   * conversation still has exactly that many records when its turn comes
   * (else it rejects with TruncateConflictError): an append that got in
   * first is never taken away unseen.
   */
  truncateRecords(from: number, ifCount?: number): Promise<void>;
  /** Replace the metadata (title, model, settings, updatedAt…). recordCount and createdAt are kept by the store. */
  update(conversation: Conversation): Promise<void>;
  /** Durable once resolved; lowering it is a no-op. */
  reserveSeq(upTo: number): Promise<void>;
  /** The run state last written with updateRunState; null when none was. */
  readonly runState: RunState | null;
  /** Replace the run state; a metadata write, durable once resolved (like update). */
  updateRunState(state: RunState): Promise<void>;
  /**
   * A document kept with the conversation beside its records, read and
   * written whole (the file checkpoints and the last rewind, see
   * src/sessions/file-checkpoints.ts); undefined when none was written.
   * Removed by the store's `delete` with the conversation. Not ordered with
   * the record mutations: callers order them by awaiting.
   */
  readDocument(name: ConversationDocument): Promise<unknown>;
  /** Replace a document (undefined: remove it); durable once resolved. */
  writeDocument(name: ConversationDocument, value: unknown): Promise<void>;
  /**
   * Stores an asset (an uploaded image) with the conversation. Durable once
   * resolved; a write that fails rejects with StoreFileError and leaves no
   * file. Assets are not records: they are read only when a model request
   * needs them, and they are removed by the store's `delete`.
   */
  putAsset(info: AssetInfo, bytes: Uint8Array): Promise<void>;
  /** The asset's metadata; undefined when the conversation has no asset with this id. */
  assetInfo(assetId: string): Promise<AssetInfo | undefined>;
  /** The asset's metadata and bytes; undefined when the conversation has no asset with this id. */
  readAsset(assetId: string): Promise<{ info: AssetInfo; bytes: Buffer } | undefined>;
}

export interface DamagedConversation {
  id: string;
  /** What is wrong, without local paths (it reaches clients). */
  problem: string;
}

export interface ConversationPage {
  data: Conversation[];
  nextCursor?: string;
  /** Conversations of this page that could not be read: listed here instead of in `data`. */
  damaged?: DamagedConversation[];
}

/** What conversation.list pages through (see ConversationStore.list). */
export interface ListOptions {
  limit: number;
  cursor?: string;
  parentConversationId?: string;
}

export interface ConversationStore {
  /**
   * Acquire the data dir (refusing if another process holds it) and read the
   * index. Checking every stored conversation for damage may go on in the
   * background afterwards; `damaged()` reports what it has found.
   */
  open(): Promise<void>;
  /** Flush pending writes and release the data dir. */
  close(): Promise<void>;
  /**
   * Say beside the data dir's lock where this server listens (null: it is
   * stopping), for the client commands to find it. Only a store that holds
   * the data dir alone (lowdb) has it.
   */
  advertise?(advert: ServerAdvert | null): Promise<void>;
  /** Durable once resolved; on failure nothing is left behind (no folder, no temp file, no index entry). */
  create(conversation: Conversation): Promise<ConversationHandle>;
  /**
   * The conversation's handle, loading it on first use; undefined when it
   * does not exist; rejects with ConversationDamagedError when its files
   * cannot be read.
   */
  get(id: string): Promise<ConversationHandle | undefined>;
  /**
   * Newest first by creation. `cursor` is opaque; a malformed one throws
   * InvalidCursorError. With `parentConversationId`, only the conversations
   * whose metadata names it as their parent (sub-agents).
   */
  list(options: ListOptions): Promise<ConversationPage>;
  /** Removes it, damaged or not, with its assets. */
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
  /** Damaged conversations found so far (at start-up, by a load, or by a listing). */
  damaged(): readonly DamagedConversation[];
}

export class InvalidCursorError extends Error {
  constructor() {
    super("cursor is not a value returned as nextCursor");
  }
}

/** The conversation exists but its files cannot be read; delete still works. */
export class ConversationDamagedError extends Error {
  constructor(
    readonly conversationId: string,
    readonly problem: string,
  ) {
    super(`conversation ${conversationId} is damaged: ${problem}`);
    this.name = "ConversationDamagedError";
  }
}

/** truncateRecords' `ifCount` no longer held: records were appended (or taken) meanwhile; nothing was removed. */
export class TruncateConflictError extends Error {
  constructor(
    readonly expected: number,
    readonly actual: number,
  ) {
    super(`the conversation has ${actual} records, not the ${expected} the truncation was computed for`);
    this.name = "TruncateConflictError";
  }
}

/** Another process holds the data dir; two writers would lose data. */
export class DataDirLockedError extends Error {}
