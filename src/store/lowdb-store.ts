import { mkdir, rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import { CONFIG_DEFAULTS } from "../../protocol/config-defaults.js";
import type { Conversation } from "../../protocol/index.js";
import {
  ConversationDamagedError,
  DataDirLockedError,
  type ConversationHandle,
  type ConversationPage,
  type ConversationStore,
  type DamagedConversation,
  type ListOptions,
  type ServerAdvert,
} from "./conversation-store.js";
import { SingleFlight } from "./single-flight.js";
import { isValidConversationId } from "./conversation-id.js";
import { AssetUsage, UNLIMITED_ASSETS, type AssetLimits } from "./asset-quota.js";
import { mapBounded } from "./bounded-map.js";
import { ByteLru } from "./byte-lru.js";
import { DamagedConversations } from "./damaged-conversations.js";
import { DataDirLock } from "./data-dir-lock.js";
import { selectPage, toPage } from "./list-page.js";
import { assetBytesOnDisk } from "./lowdb-assets.js";
import { LowdbConversationHandle, type HandleContext } from "./lowdb-conversation-handle.js";
import { jsonSize, loadConversation, stateOf } from "./lowdb-conversation-load.js";
import { JOURNAL_FILE, JournalBudget, newestMeta } from "./lowdb-journal.js";
import { META_FILE, checkMeta, quickCheckConversation, readJsonFile, type MetaData } from "./lowdb-file-checks.js";
import { LowdbFile } from "./lowdb-file.js";
import { ConversationIndex } from "./lowdb-index.js";
import { SegmentCache } from "./segment-cache.js";
import { makeDirectory } from "./make-directory.js";
import { asStoreFileError, describeError } from "./store-file-error.js";
import { StoreUnavailableError } from "./store-unavailable-error.js";
import { ConversationExistsError } from "./conversation-exists-error.js";

/**
 * The embedded default store, on lowdb.
 *
 * Layout under the data dir:
 *
 *     LOCK                               pid of the owning process
 *     index.json                         [{id, createdAt, parentConversationId?}], written whole when its journal is full and at a clean stop
 *     index-changes.jsonl                creates and deletes since (one line per index write; lowdb-index-journal.ts)
 *     conversations/<id>/meta.json       conversation, seqReserved, records per segment
 *     conversations/<id>/records-000000.json, records-000001.json, …
 *     conversations/<id>/replaced.jsonl  the journal: changes of the last segment and metadata not yet in them (lowdb-journal.ts)
 *     conversations/<id>/assets/…         uploaded images (lowdb-assets.ts)
 *
 * lowdb rewrites a whole file per write, so records are split into segments
 * and a write of them rewrites only the last segment and the small meta
 * file: its cost is bounded by the segment size, not by the conversation's
 * length. A segment closes at `segmentSize` records or when the next record
 * would bring it over `segmentBytes` of JSON, whichever comes first. Most
 * writes rewrite neither: they are a line appended to the journal, until it
 * holds `journalBytes`.
 *
 * Segments are the truth for records (meta's recordCount is recomputed on
 * load), and a segment is written only after the previous one is durable, so
 * after a crash the records on disk are a prefix of the appends.
 *
 * This file is the store's lifecycle: data dir, index, which conversations
 * are loaded, damaged or on their way in or out. A loaded conversation is a
 * LowdbConversationHandle; its records go through one SegmentCache.
 */
export interface LowdbStoreOptions {
  /** Most records per segment file. Default 1000. */
  segmentSize?: number;
  /** A segment takes no further record that would bring its JSON over this many bytes (a single larger record gets a segment of its own). Default 128 KiB. */
  segmentBytes?: number;
  /**
   * Bytes a conversation's journal (lowdb-journal.ts) holds before its last segment and meta.json are
   * written whole again. Default: segmentBytes. 0: no journal, every change rewrites its files.
   */
  journalBytes?: number;
  /**
   * Bytes the journals of all loaded conversations hold together: their records stay in memory beside the
   * segment cache (a read of the last segment from disk lays them over it). A write that would pass it
   * rewrites its files instead. Default: a quarter of cacheBytes.
   */
  journalBudgetBytes?: number;
  /** Budget of the segment cache shared by all loaded conversations, in JSON bytes. Default: the configuration's limits.storeCacheBytes. */
  cacheBytes?: number;
  /**
   * Budget of the metadata of conversations that are not loaded, kept so a
   * listing need not read every meta.json again, in JSON bytes. Default 4 MiB.
   */
  metaCacheBytes?: number;
  /** Called once per conversation newly found damaged (the server logs it). */
  onDamaged?: (damaged: DamagedConversation) => void;
  /** Trouble the store recovered from, e.g. a damaged index.json it rebuilt (the server logs it). */
  onWarning?: (message: string) => void;
  /** Conversations the start-up check reads at once. Default 8. */
  checkConcurrency?: number;
  /**
   * A conversation of at most this many segments is checked whole when it
   * loads; a longer one is loaded from meta.json and its last segments (back
   * to the last assistant message), the rest checked when read. Default 8.
   */
  fullCheckSegments?: number;
  /** Bytes of uploaded images per conversation and in all. Default: no bound (the server passes its configured limits). */
  assetLimits?: AssetLimits;
  /**
   * How long after open() the start-up check and the count of stored images
   * wait before they begin; default 0 (at once). A client command's own
   * server sets it: a one-shot `agentwire chat` is done (and closes the store)
   * before it, and reading every conversation's meta.json and assets folder
   * meanwhile cost it ~45 ms with 300 conversations stored. An upload does not
   * wait for it: its quota check starts the count at once.
   */
  startupScanDelayMs?: number;
}

const DEFAULT_SEGMENT_SIZE = 1000;
/**
 * A write of the last segment whole (a journal's compaction, or a write past the journal's bound)
 * costs with its size: this bounds it. Measured when every append rewrote it: with 1 MiB, an append to
 * a conversation whose last segment was nearly full cost 2.3× one to a short conversation
 * (stringify, write and rename of ~300 KB, measured by the storage bench); 128 KiB keeps the
 * rewrite near a short conversation's, for ~8 times as many segment files (read once each,
 * then held by the segment cache).
 */
const DEFAULT_SEGMENT_BYTES = 128 * 1024;
const DEFAULT_CACHE_BYTES = CONFIG_DEFAULTS.limits.storeCacheBytes;
const DEFAULT_META_CACHE_BYTES = 4 << 20;
const DEFAULT_CHECK_CONCURRENCY = 8;
const DEFAULT_FULL_CHECK_SEGMENTS = 8;
/** meta.json files one listing reads at once. */
const PEEK_CONCURRENCY = 32;

export class LowdbConversationStore implements ConversationStore {
  readonly #dataDir: string;
  readonly #segmentSize: number;
  readonly #segmentBytes: number;
  readonly #journalBytes: number;
  readonly #journalBudget: JournalBudget;
  readonly #checkConcurrency: number;
  readonly #fullCheckSegments: number;
  readonly #warn: (message: string) => void;
  readonly #cache: SegmentCache;
  /** Metadata of conversations listed but not loaded (a loaded handle is the authority for its own). */
  readonly #metas: ByteLru<string, Conversation>;
  readonly #damaged: DamagedConversations;
  #lock: DataDirLock | null = null;
  #index: ConversationIndex | null = null;
  readonly #handles = new Map<string, LowdbConversationHandle>();
  readonly #loading = new SingleFlight<string, LowdbConversationHandle | undefined>();
  readonly #creating = new Map<string, Promise<LowdbConversationHandle>>();
  /** Deletions in progress: their folder removal must finish before the id is reused. */
  readonly #deleting = new Map<string, Promise<void>>();
  /** Unloads under way: a `get` waits for the old handle's writes before reading the files again. */
  readonly #unloading = new Map<string, Promise<void>>();
  #checked: Promise<void> = Promise.resolve();
  readonly #assetUsage: AssetUsage;
  /**
   * The start-up count of the images on disk: the quota is not kept in a
   * file (it could drift from the folders), it is counted again at every
   * start. Uploads wait for it.
   */
  #assetsCounted: Promise<void> = Promise.resolve();
  readonly #startupScanDelayMs: number;
  /** Set while the start-up check and count wait for startupScanDelayMs: starts them now (true), or drops them (false: closed). */
  #startScan: ((run: boolean) => void) | undefined;
  #state: "new" | "open" | "closed" = "new";

  constructor(dataDir: string, options: LowdbStoreOptions = {}) {
    this.#dataDir = resolve(dataDir);
    this.#segmentSize = positiveInt(options.segmentSize, DEFAULT_SEGMENT_SIZE, "segmentSize");
    this.#segmentBytes = positiveInt(options.segmentBytes, DEFAULT_SEGMENT_BYTES, "segmentBytes");
    this.#journalBytes = options.journalBytes === 0 ? 0 : positiveInt(options.journalBytes, this.#segmentBytes, "journalBytes");
    this.#checkConcurrency = positiveInt(options.checkConcurrency, DEFAULT_CHECK_CONCURRENCY, "checkConcurrency");
    this.#fullCheckSegments = positiveInt(options.fullCheckSegments, DEFAULT_FULL_CHECK_SEGMENTS, "fullCheckSegments");
    const cacheBytes = positiveInt(options.cacheBytes, DEFAULT_CACHE_BYTES, "cacheBytes");
    this.#cache = new SegmentCache(cacheBytes);
    this.#journalBudget = new JournalBudget(
      options.journalBudgetBytes === 0 ? 0 : positiveInt(options.journalBudgetBytes, Math.max(Math.floor(cacheBytes / 4), 1), "journalBudgetBytes"),
    );
    this.#metas = new ByteLru(positiveInt(options.metaCacheBytes, DEFAULT_META_CACHE_BYTES, "metaCacheBytes"));
    this.#damaged = new DamagedConversations(options.onDamaged);
    this.#assetUsage = new AssetUsage(options.assetLimits ?? UNLIMITED_ASSETS);
    this.#startupScanDelayMs = options.startupScanDelayMs ?? 0;
    if (!(this.#startupScanDelayMs >= 0)) throw new RangeError("startupScanDelayMs must be a number ≥ 0");
    const onWarning = options.onWarning;
    this.#warn = (message) => {
      try {
        onWarning?.(message);
      } catch {
        // A failing logger must not fail the store.
      }
    };
  }

  async open(): Promise<void> {
    if (this.#state !== "new") throw new Error("store was already opened");
    const conversations = join(this.#dataDir, "conversations");
    // A data dir that cannot be made is the operator's to fix: one line naming it and why.
    await makeDirectory(conversations).catch((error: unknown) => {
      throw new StoreUnavailableError(`data dir ${this.#dataDir} cannot be used: ${describeError(error)}`, { cause: error });
    });
    let lock: DataDirLock;
    try {
      lock = await DataDirLock.acquire(this.#dataDir);
    } catch (error) {
      if (error instanceof DataDirLockedError) throw error;
      throw asStoreFileError(error, join(this.#dataDir, "LOCK"), "could not be taken");
    }
    try {
      this.#index = await ConversationIndex.open(this.#dataDir, this.#warn);
    } catch (error) {
      await lock.release().catch(() => undefined);
      throw asStoreFileError(error, join(this.#dataDir, "index.json"), "could not be read");
    }
    this.#lock = lock;
    this.#state = "open";
    // The conversations there are now: one created later has no images but those its uploads reserve.
    const ids = this.#index.ids();
    if (this.#startupScanDelayMs === 0) {
      this.#checked = this.#checkAll(ids);
      this.#assetsCounted = this.#countAssets(ids);
      return;
    }
    const started = new Promise<boolean>((resolveStart) => {
      const timer = setTimeout(() => this.#startScan?.(true), this.#startupScanDelayMs).unref();
      this.#startScan = (run) => {
        clearTimeout(timer);
        this.#startScan = undefined;
        resolveStart(run);
      };
    });
    this.#checked = started.then((run) => (run ? this.#checkAll(ids) : undefined));
    this.#assetsCounted = started.then((run) => (run ? this.#countAssets(ids) : undefined));
  }

  async advertise(advert: ServerAdvert | null): Promise<void> {
    await this.#lock?.advertise(advert);
  }

  /** Resolves once the start-up check of every stored conversation has finished (or the store closed). */
  whenChecked(): Promise<void> {
    return this.#checked;
  }

  /** JSON bytes of records held in memory, across all conversations (at most `cacheBytes`). */
  cachedBytes(): number {
    return this.#cache.bytes;
  }

  async close(): Promise<void> {
    if (this.#state !== "open") return;
    this.#state = "closed";
    this.#startScan?.(false);
    await Promise.all([this.#checked, this.#assetsCounted]);
    await Promise.allSettled([
      ...this.#creating.values(),
      ...this.#loading.values(),
      ...this.#deleting.values(),
      ...this.#unloading.values(),
    ]);
    const handles = [...this.#handles.values()];
    this.#handles.clear();
    await Promise.all(handles.map((handle) => handle.retire("the store is closed", true)));
    // index.json written whole again: a clean stop leaves no index journal (see ConversationIndex.close).
    await this.#index?.close();
    try {
      await this.#lock?.release();
    } catch (error) {
      throw asStoreFileError(error, join(this.#dataDir, "LOCK"), "could not be released");
    } finally {
      this.#lock = null;
    }
  }

  async create(conversation: Conversation): Promise<ConversationHandle> {
    const index = this.#open();
    const { id } = conversation;
    if (!isValidConversationId(id)) throw new Error(`invalid conversation id ${JSON.stringify(id)}`);
    if (index.has(id) || this.#creating.has(id)) throw new ConversationExistsError(id);
    // Claimed synchronously, so a concurrent create of the same id fails; get
    // and list see the conversation once its files and index entry are durable.
    const work = this.#createFiles(index, conversation);
    this.#creating.set(id, work);
    try {
      return await work;
    } finally {
      this.#creating.delete(id);
    }
  }

  async #createFiles(index: ConversationIndex, conversation: Conversation): Promise<LowdbConversationHandle> {
    const { id, createdAt } = conversation;
    await this.#deleting.get(id)?.catch(() => undefined);
    if (index.has(id)) throw new ConversationExistsError(id);
    const dir = this.#dir(id);
    const meta: MetaData = { version: 1, conversation: { ...conversation, recordCount: 0 }, seqReserved: 0, segments: [] };
    try {
      await mkdir(dir).catch(async (error: NodeJS.ErrnoException) => {
        if (error.code !== "EEXIST") throw error;
        // A folder without an index entry is left over from a crash: discard it. Only then: an rm before every
        // mkdir cost each create a round trip to the thread pool, and a one-shot command Node's rimraf module.
        await rm(dir, { recursive: true, force: true });
        await mkdir(dir);
      });
      await new LowdbFile<MetaData>(join(dir, META_FILE)).write(meta);
      await index.add(id, createdAt, conversation.parentConversationId);
    } catch (error) {
      // Nothing may be left behind: no folder, no temp file, no index entry.
      await rm(dir, { recursive: true, force: true }).catch(() => undefined);
      throw asStoreFileError(error, dir, "could not be created");
    }
    const state = stateOf({
      meta: { conversation: meta.conversation, seqReserved: 0 },
      segmentCounts: [],
      lastSegmentBytes: 0,
      openRound: [],
    });
    const handle = new LowdbConversationHandle(this.#context(id), state, null);
    this.#handles.set(id, handle);
    return handle;
  }

  async get(id: string): Promise<ConversationHandle | undefined> {
    const index = this.#open();
    if (!isValidConversationId(id)) return undefined;
    await this.#deleting.get(id)?.catch(() => undefined);
    if (!index.has(id)) return undefined;
    const cached = this.#handles.get(id);
    if (cached) return cached;
    await this.#unloading.get(id);
    const loading = this.#loading.run(id, () => this.#load(id));
    const handle = await loading;
    // Deleted or closed while loading: report it gone.
    return handle && this.#handles.get(id) === handle ? handle : undefined;
  }

  async #load(id: string): Promise<LowdbConversationHandle | undefined> {
    const outcome = await loadConversation(this.#dir(id), id, this.#fullCheckSegments);
    if (!outcome.ok) throw this.#damagedError(id, outcome.problem);
    if (this.#state !== "open" || !this.#index?.has(id) || this.#deleting.has(id)) return undefined;
    this.#damaged.forget(id);
    const handle = new LowdbConversationHandle(this.#context(id), outcome.state, outcome);
    this.#handles.set(id, handle);
    return handle;
  }

  async list(options: ListOptions): Promise<ConversationPage> {
    const index = this.#open();
    const parent = options.parentConversationId;
    const { page, nextCursor } = selectPage(parent === undefined ? index.sorted() : index.children(parent), options.limit, options.cursor);
    const peeked = await mapBounded(page, PEEK_CONCURRENCY, (entry) => this.#peek(entry.id));
    const data: Conversation[] = [];
    const damaged: DamagedConversation[] = [];
    for (const [i, result] of peeked.entries()) {
      if (result === undefined) continue;
      if (typeof result === "string") damaged.push({ id: page[i].id, problem: result });
      else data.push(result);
    }
    const result = toPage(data, nextCursor);
    return damaged.length > 0 ? { ...result, damaged } : result;
  }

  /** Metadata without loading records: the live handle's, else meta.json; a problem text when it is damaged; undefined when deleted meanwhile. */
  async #peek(id: string): Promise<Conversation | string | undefined> {
    const handle = this.#handles.get(id);
    if (handle) return handle.conversation;
    const cached = this.#metas.get(id);
    if (cached) return cached;
    const read = await readJsonFile<MetaData>(join(this.#dir(id), META_FILE), META_FILE, checkMeta);
    let problem: string;
    if (read.ok) {
      if (read.data.conversation.id === id) {
        // A crash may have left newer metadata in the journal.
        const { conversation } = await newestMeta(join(this.#dir(id), JOURNAL_FILE), read.data);
        // Not if it was loaded or deleted meanwhile: the handle, or nothing, is the truth then.
        if (!this.#handles.has(id) && this.#index?.has(id)) this.#metas.set(id, conversation, jsonSize(conversation));
        return conversation;
      }
      problem = `${META_FILE} describes conversation ${read.data.conversation.id}`;
    } else {
      problem = read.problem;
    }
    if (!this.#index?.has(id) || this.#deleting.has(id)) return undefined;
    this.#damaged.report(id, problem);
    return problem;
  }

  async delete(id: string): Promise<boolean> {
    const index = this.#open();
    if (!isValidConversationId(id)) return false;
    const earlier = this.#deleting.get(id);
    if (earlier) {
      await earlier.catch(() => undefined);
      return index.has(id) ? this.delete(id) : false;
    }
    await this.#creating.get(id)?.catch(() => undefined);
    if (!index.has(id)) return false;
    const work = (async () => {
      // Durable first: if the index cannot be written, nothing changed.
      await index.remove(id);
      this.#metas.delete(id);
      this.#damaged.forget(id);
      await this.#loading.get(id)?.catch(() => undefined);
      const handle = this.#handles.get(id);
      this.#handles.delete(id);
      await this.#unloading.get(id);
      await handle?.retire(`conversation ${id} was deleted`, false);
      const dir = this.#dir(id);
      await rm(dir, { recursive: true, force: true }).catch((error: unknown) => {
        // The conversation is gone (no index entry); its folder is discarded by a later create of the id.
        this.#warn(asStoreFileError(error, dir, "could not be removed after its conversation was deleted").message);
      });
      // Its uploads have settled (retire waited for them): its images no longer count.
      this.#assetUsage.forget(id);
    })();
    this.#deleting.set(id, work);
    try {
      await work;
    } finally {
      this.#deleting.delete(id);
    }
    return true;
  }

  async unload(id: string): Promise<void> {
    const handle = this.#handles.get(id);
    if (!handle) return;
    this.#handles.delete(id);
    this.#metas.set(id, handle.conversation, jsonSize(handle.conversation));
    const work = handle.retire(`conversation ${id} was unloaded`, true).finally(() => {
      if (this.#unloading.get(id) === work) this.#unloading.delete(id);
    });
    this.#unloading.set(id, work);
    await work;
  }

  count(): number {
    return this.#index?.size ?? 0;
  }

  loadedCount(): number {
    return this.#handles.size;
  }

  damaged(): readonly DamagedConversation[] {
    return this.#damaged.list();
  }

  #open(): ConversationIndex {
    if (this.#state !== "open" || !this.#index) {
      throw new Error(this.#state === "new" ? "store is not open" : "store is closed");
    }
    return this.#index;
  }

  #dir(id: string): string {
    return join(this.#dataDir, "conversations", id);
  }

  #context(id: string): HandleContext {
    return {
      dir: this.#dir(id),
      cache: this.#cache,
      segmentSize: this.#segmentSize,
      segmentBytes: this.#segmentBytes,
      journalBytes: this.#journalBytes,
      journalBudget: this.#journalBudget,
      damaged: (problem) => this.#damagedError(id, problem),
      reserveAssetBytes: async (bytes, replacedBytes) => {
        // The quota counts the images already stored: a deferred count starts now.
        this.#startScan?.(true);
        await this.#assetsCounted;
        return this.#assetUsage.reserve(id, bytes, replacedBytes);
      },
    };
  }

  /**
   * Counts the images of every stored conversation, a few folders at a
   * time. A conversation deleted meanwhile is not counted (its delete has
   * forgotten it, or will find nothing); one whose folder cannot be listed
   * is counted as empty, with a warning.
   */
  async #countAssets(ids: string[]): Promise<void> {
    await mapBounded(
      ids,
      this.#checkConcurrency,
      async (id) => {
        let bytes: number;
        try {
          bytes = await assetBytesOnDisk(this.#dir(id));
        } catch (error) {
          this.#warn(`${error instanceof Error ? error.message : String(error)}; its images are not counted toward the asset quota`);
          return;
        }
        if (this.#index?.has(id) && !this.#deleting.has(id)) this.#assetUsage.add(id, bytes);
      },
      () => this.#state !== "open",
    ).catch(() => undefined);
  }

  /** Records the damage (unless the conversation is being deleted) and returns the error for the caller. */
  #damagedError(id: string, problem: string): ConversationDamagedError {
    if (this.#index?.has(id) && !this.#deleting.has(id)) this.#damaged.report(id, problem);
    return new ConversationDamagedError(id, problem);
  }

  /**
   * The start-up check: every stored conversation's meta (and that its first
   * segment exists), a few at a time, in the background. Conversations
   * loaded meanwhile were checked more thoroughly by their load.
   */
  async #checkAll(ids: string[]): Promise<void> {
    // Let open() return first.
    await new Promise((resolve) => setImmediate(resolve));
    const stopped = () => this.#state !== "open";
    await mapBounded(
      ids,
      this.#checkConcurrency,
      async (id) => {
        if (!this.#index?.has(id) || this.#handles.has(id) || this.#deleting.has(id)) return;
        const problem = await quickCheckConversation(this.#dir(id), id);
        if (problem !== null && !this.#handles.has(id)) this.#damagedError(id, problem);
      },
      stopped,
    ).catch(() => undefined);
  }
}

function positiveInt(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer`);
  return value;
}
