import { mkdir, readdir, readFile, rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { Conversation, ConversationRecord } from "../../protocol/index.js";
import type { ConversationHandle, ConversationPage, ConversationStore } from "./conversation-store.js";
import { isValidConversationId } from "./conversation-id.js";
import { DataDirLock } from "./data-dir-lock.js";
import { compareNewestFirst, selectPage, toPage, type ListEntry } from "./list-page.js";
import { LowdbFile } from "./lowdb-file.js";
import { StoreFileError, describeError } from "./store-file-error.js";

/**
 * The embedded default store, on lowdb.
 *
 * Layout under the data dir:
 *
 *     LOCK                               pid of the owning process
 *     index.json                         [{id, createdAt}], rewritten on create/delete only
 *     conversations/<id>/meta.json       conversation, seqReserved, segment limits
 *     conversations/<id>/records-000000.json, records-000001.json, …
 *
 * lowdb rewrites a whole file per write, so records are split into segments
 * and an append rewrites only the last segment and the small meta file: its
 * cost is bounded by the segment size, not by the conversation's length. A
 * segment closes at `segmentSize` records or when the next record would
 * bring it over `segmentBytes` of JSON (large tool outputs), whichever comes
 * first.
 *
 * Segments are the truth for records; meta's recordCount is recomputed on
 * load. A new segment is first written only after the previous one is
 * durable, so after a crash the records on disk are always a prefix of the
 * appends.
 */
export interface LowdbStoreOptions {
  /** Most records per segment file. Default 1000. */
  segmentSize?: number;
  /** A segment takes no further record that would bring its JSON over this many bytes (a single larger record gets a segment of its own). Default 1 MiB. */
  segmentBytes?: number;
}

interface IndexData {
  conversations: ListEntry[];
}

interface MetaData {
  version: 1;
  conversation: Conversation;
  seqReserved: number;
}

interface SegmentData {
  records: ConversationRecord[];
}

const DEFAULT_SEGMENT_SIZE = 1000;
const DEFAULT_SEGMENT_BYTES = 1 << 20;
const SEGMENT_NAME = /^records-(\d{6,})\.json$/;

export function segmentFileName(index: number): string {
  return `records-${String(index).padStart(6, "0")}.json`;
}

export class LowdbConversationStore implements ConversationStore {
  readonly #dataDir: string;
  readonly #segmentSize: number;
  readonly #segmentBytes: number;
  #lock: DataDirLock | null = null;
  #index: LowdbFile<IndexData> | null = null;
  /** id → createdAt, for every stored conversation. */
  readonly #entries = new Map<string, string>();
  #sorted: ListEntry[] | null = null;
  readonly #handles = new Map<string, LowdbConversationHandle>();
  readonly #loading = new Map<string, Promise<LowdbConversationHandle>>();
  readonly #creating = new Map<string, Promise<LowdbConversationHandle>>();
  /** Deletions in progress: their folder removal must finish before the id is reused. */
  readonly #deleting = new Map<string, Promise<void>>();
  /** Unloads under way: a `get` waits for the old handle's writes before reading the files again. */
  readonly #unloading = new Map<string, Promise<void>>();
  #state: "new" | "open" | "closed" = "new";

  constructor(dataDir: string, options: LowdbStoreOptions = {}) {
    this.#dataDir = resolve(dataDir);
    this.#segmentSize = positiveInt(options.segmentSize, DEFAULT_SEGMENT_SIZE, "segmentSize");
    this.#segmentBytes = positiveInt(options.segmentBytes, DEFAULT_SEGMENT_BYTES, "segmentBytes");
  }

  async open(): Promise<void> {
    if (this.#state !== "new") throw new Error("store was already opened");
    await mkdir(join(this.#dataDir, "conversations"), { recursive: true });
    const lock = await DataDirLock.acquire(this.#dataDir);
    try {
      const index = new LowdbFile<IndexData>(join(this.#dataDir, "index.json"), { conversations: [] });
      await index.load(checkIndex);
      for (const entry of index.data.conversations) this.#entries.set(entry.id, entry.createdAt);
      this.#index = index;
    } catch (error) {
      await lock.release();
      throw error;
    }
    this.#lock = lock;
    this.#state = "open";
  }

  async close(): Promise<void> {
    if (this.#state !== "open") return;
    this.#state = "closed";
    await Promise.allSettled([
      ...this.#creating.values(),
      ...this.#loading.values(),
      ...this.#deleting.values(),
      ...this.#unloading.values(),
    ]);
    const handles = [...this.#handles.values()];
    this.#handles.clear();
    await Promise.all(handles.map((handle) => handle.retire("the store is closed")));
    await this.#index?.settled();
    await this.#lock?.release();
    this.#lock = null;
  }

  async create(conversation: Conversation): Promise<ConversationHandle> {
    this.#open();
    const { id } = conversation;
    if (!isValidConversationId(id)) throw new Error(`invalid conversation id ${JSON.stringify(id)}`);
    if (this.#entries.has(id) || this.#creating.has(id)) throw new Error(`conversation ${id} already exists`);
    // Claimed synchronously, so a concurrent create of the same id fails; get
    // and list see the conversation once its files are durable.
    const work = this.#createFiles(conversation);
    this.#creating.set(id, work);
    try {
      return await work;
    } finally {
      this.#creating.delete(id);
    }
  }

  async #createFiles(conversation: Conversation): Promise<LowdbConversationHandle> {
    const index = this.#open();
    const { id, createdAt } = conversation;
    const dir = this.#dir(id);
    await this.#deleting.get(id)?.catch(() => undefined);
    try {
      // A folder without an index entry is left over from a crash: discard it.
      await rm(dir, { recursive: true, force: true });
      await mkdir(dir, { recursive: true });
      const meta = new LowdbFile<MetaData>(join(dir, "meta.json"), {
        version: 1,
        conversation: { ...conversation, recordCount: 0 },
        seqReserved: 0,
      });
      await meta.persist();
      index.data.conversations.push({ id, createdAt });
      await index.persist();
      const handle = new LowdbConversationHandle(dir, meta, [], [], this.#segmentSize, this.#segmentBytes);
      this.#entries.set(id, createdAt);
      this.#sorted = null;
      this.#handles.set(id, handle);
      return handle;
    } catch (error) {
      index.data.conversations = index.data.conversations.filter((entry) => entry.id !== id);
      throw error;
    }
  }

  async get(id: string): Promise<ConversationHandle | undefined> {
    this.#open();
    if (!isValidConversationId(id) || !this.#entries.has(id)) return undefined;
    const cached = this.#handles.get(id);
    if (cached) return cached;
    await this.#unloading.get(id);
    let loading = this.#loading.get(id);
    if (!loading) {
      loading = this.#load(id).finally(() => this.#loading.delete(id));
      this.#loading.set(id, loading);
    }
    const handle = await loading;
    // Deleted while loading: report it gone.
    return this.#handles.get(id) === handle ? handle : undefined;
  }

  async list(options: { limit: number; cursor?: string }): Promise<ConversationPage> {
    this.#open();
    const { page, nextCursor } = selectPage(this.#sortedEntries(), options.limit, options.cursor);
    const conversations = await Promise.all(page.map((entry) => this.#peek(entry.id)));
    const data = conversations.filter((conversation) => conversation !== undefined);
    return toPage(data, nextCursor);
  }

  async delete(id: string): Promise<boolean> {
    const index = this.#open();
    if (!isValidConversationId(id) || !this.#entries.has(id)) return false;
    this.#entries.delete(id);
    this.#sorted = null;
    index.data.conversations = index.data.conversations.filter((entry) => entry.id !== id);
    const work = (async () => {
      const loading = this.#loading.get(id);
      if (loading) await loading.catch(() => undefined);
      const handle = this.#handles.get(id);
      this.#handles.delete(id);
      await index.persist();
      await handle?.retire(`conversation ${id} was deleted`);
      await rm(this.#dir(id), { recursive: true, force: true });
    })();
    this.#deleting.set(id, work);
    try {
      await work;
    } finally {
      if (this.#deleting.get(id) === work) this.#deleting.delete(id);
    }
    return true;
  }

  async unload(id: string): Promise<void> {
    const handle = this.#handles.get(id);
    if (!handle) return;
    this.#handles.delete(id);
    const work = handle.retire(`conversation ${id} was unloaded`).finally(() => {
      if (this.#unloading.get(id) === work) this.#unloading.delete(id);
    });
    this.#unloading.set(id, work);
    await work;
  }

  count(): number {
    return this.#entries.size;
  }

  loadedCount(): number {
    return this.#handles.size;
  }

  #open(): LowdbFile<IndexData> {
    if (this.#state !== "open" || !this.#index) {
      throw new Error(this.#state === "new" ? "store is not open" : "store is closed");
    }
    return this.#index;
  }

  #dir(id: string): string {
    return join(this.#dataDir, "conversations", id);
  }

  #sortedEntries(): ListEntry[] {
    if (!this.#sorted) {
      this.#sorted = [...this.#entries].map(([id, createdAt]) => ({ id, createdAt })).sort(compareNewestFirst);
    }
    return this.#sorted;
  }

  /** Metadata without loading records: the live handle's, else meta.json read once. */
  async #peek(id: string): Promise<Conversation | undefined> {
    const handle = this.#handles.get(id);
    if (handle) return handle.conversation;
    const file = join(this.#dir(id), "meta.json");
    let text: string;
    try {
      text = await readFile(file, "utf8");
    } catch (error) {
      // Deleted while this page was being read.
      if (!this.#entries.has(id)) return undefined;
      throw new StoreFileError(file, `cannot be read (${describeError(error)})`, { cause: error });
    }
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (error) {
      throw new StoreFileError(file, `is not valid JSON (${describeError(error)})`, { cause: error });
    }
    const problem = checkMeta(data);
    if (problem) throw new StoreFileError(file, `is damaged: ${problem}`);
    return (data as MetaData).conversation;
  }

  async #load(id: string): Promise<LowdbConversationHandle> {
    const dir = this.#dir(id);
    const meta = new LowdbFile<MetaData>(join(dir, "meta.json"), { version: 1, conversation: {} as Conversation, seqReserved: 0 });
    if (!(await meta.load(checkMeta))) throw new StoreFileError(meta.path, "is missing");
    if (meta.data.conversation.id !== id) {
      throw new StoreFileError(meta.path, `is damaged: it describes conversation ${meta.data.conversation.id}`);
    }

    const numbers: number[] = [];
    for (const name of await readdir(dir)) {
      const match = SEGMENT_NAME.exec(name);
      if (match && segmentFileName(Number(match[1])) === name) numbers.push(Number(match[1]));
    }
    numbers.sort((a, b) => a - b);
    const segments = numbers.map(
      (n, i) => new LowdbFile<SegmentData>(join(dir, segmentFileName(i)), { records: [] }),
    );
    numbers.forEach((n, i) => {
      if (n !== i) throw new StoreFileError(segments[i].path, "is missing (segment files must be numbered without gaps)");
    });
    await Promise.all(
      segments.map(async (segment) => {
        if (!(await segment.load(checkSegment))) throw new StoreFileError(segment.path, "vanished while loading");
      }),
    );

    const records = segments.flatMap((segment) => segment.data.records);
    const handle = new LowdbConversationHandle(
      dir,
      meta,
      segments,
      records,
      this.#segmentSize,
      this.#segmentBytes,
    );
    if (this.#state !== "open" || !this.#entries.has(id)) return handle;
    this.#handles.set(id, handle);
    return handle;
  }
}

class LowdbConversationHandle implements ConversationHandle {
  readonly #records: ConversationRecord[];
  /** record id → position in #records. */
  readonly #positions = new Map<string, number>();
  /** Position in #records of each segment's first record (ascending). */
  readonly #segmentStarts: number[];
  /** Estimated JSON size of the last segment's records, to close it on size. */
  #lastSegmentBytes = 0;
  #retired: string | null = null;

  constructor(
    private readonly dir: string,
    private readonly meta: LowdbFile<MetaData>,
    private readonly segments: LowdbFile<SegmentData>[],
    records: ConversationRecord[],
    private readonly segmentSize: number,
    private readonly segmentBytes: number,
  ) {
    this.#records = records;
    records.forEach((record, position) => {
      if (this.#positions.has(record.id)) {
        const segment = segments[this.#segmentOf(position, segmentStartsOf(segments))];
        throw new StoreFileError(segment.path, `is damaged: record id ${record.id} appears twice`);
      }
      this.#positions.set(record.id, position);
    });
    this.#segmentStarts = segmentStartsOf(segments);
    const last = segments.at(-1);
    if (last) this.#lastSegmentBytes = last.data.records.reduce((sum, record) => sum + jsonSize(record), 0);
    if (meta.data.conversation.recordCount !== records.length) {
      meta.data.conversation = { ...meta.data.conversation, recordCount: records.length };
    }
  }

  get conversation(): Conversation {
    return this.meta.data.conversation;
  }

  get records(): readonly ConversationRecord[] {
    return this.#records;
  }

  get seqReserved(): number {
    return this.meta.data.seqReserved;
  }

  async append(record: ConversationRecord): Promise<void> {
    this.#assertLive();
    if (this.#positions.has(record.id)) throw new Error(`record ${record.id} is already in the conversation`);
    const size = jsonSize(record);
    let segment = this.segments.at(-1);
    if (
      !segment ||
      segment.data.records.length >= this.segmentSize ||
      (segment.data.records.length > 0 && this.#lastSegmentBytes + size > this.segmentBytes)
    ) {
      const previous = segment;
      segment = new LowdbFile<SegmentData>(
        join(this.dir, segmentFileName(this.segments.length)),
        { records: [] },
        previous?.settled(),
      );
      this.segments.push(segment);
      this.#segmentStarts.push(this.#records.length);
      this.#lastSegmentBytes = 0;
    }
    this.#positions.set(record.id, this.#records.length);
    this.#records.push(record);
    segment.data.records.push(record);
    this.#lastSegmentBytes += size;
    this.meta.data.conversation = {
      ...this.meta.data.conversation,
      recordCount: this.#records.length,
      updatedAt: record.timestamp,
    };
    await Promise.all([segment.persist(), this.meta.persist()]);
  }

  async replaceRecord(record: ConversationRecord): Promise<void> {
    this.#assertLive();
    const position = this.#positions.get(record.id);
    if (position === undefined) throw new Error(`record ${record.id} is not in the conversation`);
    const segmentIndex = this.#segmentOf(position, this.#segmentStarts);
    const segment = this.segments[segmentIndex];
    const offset = position - this.#segmentStarts[segmentIndex];
    if (segmentIndex === this.segments.length - 1) {
      this.#lastSegmentBytes += jsonSize(record) - jsonSize(segment.data.records[offset]);
    }
    this.#records[position] = record;
    segment.data.records[offset] = record;
    await segment.persist();
  }

  async update(conversation: Conversation): Promise<void> {
    this.#assertLive();
    const current = this.meta.data.conversation;
    if (conversation.id !== current.id) throw new Error(`update of ${current.id} got conversation ${conversation.id}`);
    // createdAt orders the index, recordCount is the store's own count.
    this.meta.data.conversation = { ...conversation, createdAt: current.createdAt, recordCount: this.#records.length };
    await this.meta.persist();
  }

  async reserveSeq(upTo: number): Promise<void> {
    this.#assertLive();
    if (upTo > this.meta.data.seqReserved) {
      this.meta.data.seqReserved = upTo;
      await this.meta.persist();
    } else {
      await this.meta.settled();
    }
  }

  /** Ends the handle: later mutations throw; resolves once its writes are on disk (or failed). */
  async retire(reason: string): Promise<void> {
    this.#retired ??= reason;
    await Promise.all([this.meta.settled(), ...this.segments.map((segment) => segment.settled())]);
  }

  #assertLive(): void {
    if (this.#retired !== null) throw new Error(`cannot change conversation: ${this.#retired}`);
  }

  #segmentOf(position: number, starts: readonly number[]): number {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (starts[mid] <= position) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }
}

function segmentStartsOf(segments: readonly LowdbFile<SegmentData>[]): number[] {
  const starts: number[] = [];
  let total = 0;
  for (const segment of segments) {
    starts.push(total);
    total += segment.data.records.length;
  }
  return starts;
}

function jsonSize(value: unknown): number {
  return JSON.stringify(value)?.length ?? 0;
}

function positiveInt(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer`);
  return value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function checkIndex(data: unknown): string | null {
  if (!isObject(data) || !Array.isArray(data.conversations)) return "expected {conversations: [...]}";
  for (const entry of data.conversations) {
    if (!isObject(entry) || !isValidConversationId(entry.id) || typeof entry.createdAt !== "string") {
      return `bad entry ${JSON.stringify(entry)}`;
    }
  }
  return null;
}

function checkMeta(data: unknown): string | null {
  if (!isObject(data) || !isObject(data.conversation)) return "expected {conversation: {...}, seqReserved}";
  if (typeof data.seqReserved !== "number") return "seqReserved is not a number";
  const conversation = data.conversation;
  if (typeof conversation.id !== "string" || typeof conversation.createdAt !== "string") {
    return "conversation lacks id or createdAt";
  }
  return null;
}

function checkSegment(data: unknown): string | null {
  if (!isObject(data) || !Array.isArray(data.records)) return "expected {records: [...]}";
  for (const [i, record] of data.records.entries()) {
    if (!isObject(record) || typeof record.id !== "string" || (record.type !== "message" && record.type !== "tool_call")) {
      return `record ${i} is not a message or tool_call record with an id`;
    }
  }
  return null;
}
