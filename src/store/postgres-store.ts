import type { Pool } from "pg";
import type { Conversation } from "../../protocol/index.js";
import { importCommonJs } from "../lazy-commonjs.js";
import { SingleFlight } from "./single-flight.js";
import { UNLIMITED_ASSETS, type AssetLimits } from "./asset-quota.js";
import type { ConversationPage, ConversationStore, DamagedConversation, ListOptions } from "./conversation-store.js";
import { isValidConversationId } from "./conversation-id.js";
import { FencedError } from "./fenced-error.js";
import { decodeCursor, encodeCursor, toPage } from "./list-page.js";
import { PostgresConversationHandle, handleStateOf } from "./postgres-conversation-handle.js";
import { PostgresDatabase } from "./postgres-database.js";
import { describeDriverError } from "./postgres-errors.js";
import { migrate } from "./postgres-migrations.js";
import { CONVERSATION_COLUMNS, metadataJson, type ConversationRow } from "./postgres-record-rows.js";
import { describeTarget, withDefaultUser } from "./postgres-url.js";
import { StoreUnavailableError } from "./store-unavailable-error.js";
import { ConversationExistsError } from "./conversation-exists-error.js";

export interface PostgresStoreOptions {
  /** Connections at most. Default 10. */
  poolSize?: number;
  /** A connection attempt that takes longer fails (the driver's default is to wait forever). Default 10000. */
  connectTimeoutMs?: number;
  /**
   * A statement still running after this long is cancelled by the server, and the write or read it
   * belonged to fails (nothing changed): a lock held by a stuck session, or a database that stopped
   * answering, must not stall a conversation's writes for ever. An open transaction left idle this
   * long is ended too, releasing its row locks. Default 30000.
   */
  statementTimeoutMs?: number;
  /** count() answers from memory; it asks the database again once its answer is this old. Default 5000. */
  countRefreshMs?: number;
  /** Trouble the store recovered from, e.g. an idle connection that broke (the server logs it). */
  onWarning?: (message: string) => void;
  /** Bytes of uploaded images per conversation and in all (the whole database). Default: no bound (the server passes its configured limits). */
  assetLimits?: AssetLimits;
}

const DEFAULT_POOL_SIZE = 10;
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
const DEFAULT_COUNT_REFRESH_MS = 5_000;
const DEFAULT_STATEMENT_TIMEOUT_MS = 30_000;

/** A conversation row with its open round of tool calls, read in one statement (one snapshot). */
const LOAD_SQL = `
  SELECT ${CONVERSATION_COLUMNS},
    (SELECT COALESCE(json_agg(r.body ORDER BY r.position), '[]'::json) FROM agentwire_records r
     WHERE r.conversation_id = c.id AND r.tool_call_id IS NOT NULL
       AND r.position > COALESCE((SELECT max(a.position) FROM agentwire_records a WHERE a.conversation_id = c.id AND a.assistant), -1)
    ) AS open_round
  FROM agentwire_conversations c WHERE c.id = $1`;

/**
 * The ConversationStore on PostgreSQL (`--store postgres://…`), for several
 * agentwire instances on one database (issue 14).
 *
 * The driver (pg) is imported by open(), so a server on the embedded store
 * never loads it. open() applies the schema's migrations
 * (postgres-migrations.ts); handles (postgres-conversation-handle.ts) write
 * in transactions that lock the conversation's row.
 *
 * One handle per conversation per process, as the interface asks. Several
 * processes may hold handles on one conversation: the row lock keeps their
 * records in one gapless order. Which of them may write is ownership's
 * business (issue 14's leases); `claim` gives it a fence, so a process that
 * lost ownership cannot write after another took over.
 *
 * count() must answer synchronously, and other instances create and delete
 * too: it answers from memory, adjusted by this process's own creates and
 * deletes and refreshed from the database in the background once stale.
 */
export class PostgresConversationStore implements ConversationStore {
  readonly #url: string;
  readonly #target: string;
  readonly #poolSize: number;
  readonly #connectTimeoutMs: number;
  readonly #statementTimeoutMs: number;
  readonly #countRefreshMs: number;
  readonly #warn: (message: string) => void;
  readonly #assetLimits: AssetLimits;
  #db: PostgresDatabase | null = null;
  #state: "new" | "open" | "closed" = "new";
  readonly #handles = new Map<string, PostgresConversationHandle>();
  readonly #loading = new SingleFlight<string, PostgresConversationHandle | undefined>();
  /** Unloads under way: a `get` waits for the old handle's writes before reading the row again. */
  readonly #unloading = new Map<string, Promise<void>>();
  #count = 0;
  #countedAt = 0;
  #counting = false;
  /** Bumped by this process's creates and deletes: a count begun before one of them is not adopted. */
  #countEpoch = 0;
  #applied: number[] = [];

  constructor(url: string, options: PostgresStoreOptions = {}) {
    this.#url = withDefaultUser(url);
    this.#target = describeTarget(url);
    this.#poolSize = positiveInt(options.poolSize, DEFAULT_POOL_SIZE, "poolSize");
    this.#connectTimeoutMs = positiveInt(options.connectTimeoutMs, DEFAULT_CONNECT_TIMEOUT_MS, "connectTimeoutMs");
    this.#statementTimeoutMs = positiveInt(options.statementTimeoutMs, DEFAULT_STATEMENT_TIMEOUT_MS, "statementTimeoutMs");
    this.#countRefreshMs = positiveInt(options.countRefreshMs, DEFAULT_COUNT_REFRESH_MS, "countRefreshMs");
    this.#assetLimits = options.assetLimits ?? UNLIMITED_ASSETS;
    const onWarning = options.onWarning;
    this.#warn = (message) => {
      try {
        onWarning?.(message);
      } catch {
        // A failing logger must not fail the store.
      }
    };
  }

  /** host:port/database, as messages name this store (no password). */
  get target(): string {
    return this.#target;
  }

  /** The migration versions this open() applied (empty when the schema was already current). */
  get appliedMigrations(): readonly number[] {
    return this.#applied;
  }

  async open(): Promise<void> {
    if (this.#state !== "new") throw new Error("store was already opened");
    let pool: Pool;
    try {
      const { Pool } = await importCommonJs(import("pg"));
      pool = new Pool({
        connectionString: this.#url,
        max: this.#poolSize,
        connectionTimeoutMillis: this.#connectTimeoutMs,
        statement_timeout: this.#statementTimeoutMs,
        idle_in_transaction_session_timeout: this.#statementTimeoutMs,
        application_name: "agentwire",
      });
    } catch (error) {
      throw new StoreUnavailableError(`could not open the PostgreSQL store at ${this.#target}: ${describeDriverError(error)}`, { cause: error });
    }
    // Without a listener, an idle connection that breaks (a database restart) would crash the process.
    pool.on("error", (error) => this.#warn(`PostgreSQL store ${this.#target}: an idle connection failed (${describeDriverError(error)})`));
    try {
      this.#applied = await migrate(pool);
      const { rows } = await pool.query<{ count: number }>("SELECT count(*)::int AS count FROM agentwire_conversations");
      this.#count = rows[0].count;
      this.#countedAt = Date.now();
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw new StoreUnavailableError(`could not open the PostgreSQL store at ${this.#target}: ${describeDriverError(error)}`, { cause: error });
    }
    this.#db = new PostgresDatabase(pool, this.#target);
    this.#state = "open";
  }

  async close(): Promise<void> {
    if (this.#state !== "open") return;
    this.#state = "closed";
    await Promise.allSettled([...this.#loading.values(), ...this.#unloading.values()]);
    const handles = [...this.#handles.values()];
    this.#handles.clear();
    await Promise.all(handles.map((handle) => handle.retire("the store is closed")));
    await this.#db?.pool.end();
  }

  async create(conversation: Conversation): Promise<PostgresConversationHandle> {
    const db = this.#open();
    const { id, createdAt } = conversation;
    if (!isValidConversationId(id)) throw new Error(`invalid conversation id ${JSON.stringify(id)}`);
    const stored = { ...conversation, recordCount: 0 };
    // The primary key decides between concurrent creates, in this process or another.
    const inserted = await db.query<ConversationRow>(
      `create conversation ${id}`,
      `INSERT INTO agentwire_conversations (id, created_at, metadata, parent_id) VALUES ($1, $2, $3::json, $4)
       ON CONFLICT (id) DO NOTHING RETURNING ${CONVERSATION_COLUMNS}`,
      [id, createdAt, metadataJson(stored), conversation.parentConversationId ?? null],
    );
    if (inserted.length === 0) throw new ConversationExistsError(id);
    this.#counted(+1);
    // A handle still cached for the id belongs to a conversation another instance deleted: it must not write into this one.
    void this.#handles.get(id)?.retire(`conversation ${id} was deleted`);
    const handle = new PostgresConversationHandle(db, handleStateOf(inserted[0], []), this.#assetLimits);
    if (this.#state === "open") this.#handles.set(id, handle);
    return handle;
  }

  async get(id: string): Promise<PostgresConversationHandle | undefined> {
    this.#open();
    if (!isValidConversationId(id)) return undefined;
    const cached = this.#handles.get(id);
    if (cached) return cached;
    await this.#unloading.get(id);
    const loading = this.#loading.run(id, () => this.#load(id));
    return loading;
  }

  async #load(id: string): Promise<PostgresConversationHandle | undefined> {
    const db = this.#open();
    const [row] = await db.query<ConversationRow & { open_round: PostgresConversationHandle["openToolCalls"] }>(
      `load conversation ${id}`,
      LOAD_SQL,
      [id],
    );
    if (!row || this.#state !== "open") return undefined;
    // Created here meanwhile: that handle is the one.
    const existing = this.#handles.get(id);
    if (existing) return existing;
    const handle = new PostgresConversationHandle(db, handleStateOf(row, row.open_round), this.#assetLimits);
    this.#handles.set(id, handle);
    return handle;
  }

  async list(options: ListOptions): Promise<ConversationPage> {
    const db = this.#open();
    const size = Math.max(1, Math.floor(Number.isFinite(options.limit) ? options.limit : 1));
    const after = options.cursor === undefined ? undefined : decodeCursor(options.cursor);
    // One more than a page tells whether another follows. The row comparison walks the (created_at, id) index
    // (the children index with parentConversationId).
    const conditions: string[] = [];
    const values: unknown[] = [size + 1];
    if (after) {
      values.push(after.createdAt, after.id);
      conditions.push(`(created_at, id) < ($${values.length - 1}, $${values.length})`);
    }
    if (options.parentConversationId !== undefined) {
      values.push(options.parentConversationId);
      conditions.push(`parent_id = $${values.length}`);
    }
    const rows = await db.query<ConversationRow>(
      "list conversations",
      `SELECT ${CONVERSATION_COLUMNS} FROM agentwire_conversations ${conditions.length ? `WHERE ${conditions.join(" AND ")}` : ""}
       ORDER BY created_at DESC, id DESC LIMIT $1`,
      values,
    );
    this.#refreshCountIfStale();
    const page = rows.slice(0, size).map((row) => handleStateOf(row, []).conversation);
    const last = page[page.length - 1];
    return toPage(page, rows.length > size ? encodeCursor(last) : undefined);
  }

  async delete(id: string): Promise<boolean> {
    const db = this.#open();
    if (!isValidConversationId(id)) return false;
    // Records and assets go with the row (ON DELETE CASCADE). The row lock makes it wait for a write in progress.
    const deleted = await db.query(`delete conversation ${id}`, "DELETE FROM agentwire_conversations WHERE id = $1 RETURNING id", [id]);
    // A load that read the row before the delete committed must not leave its handle behind.
    await this.#loading.get(id)?.catch(() => undefined);
    const handle = this.#handles.get(id);
    this.#handles.delete(id);
    await handle?.retire(`conversation ${id} was deleted`);
    if (deleted.length === 0) return false;
    this.#counted(-1);
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

  /**
   * Takes the conversation for fencing token `token` (from issue 14's lease):
   * raises the row's fence to it and binds this process's handle to it, so
   * the handle's writes are refused once a higher token claims the row.
   * Rejects with FencedError (changing nothing) when the row already holds a
   * higher token; undefined when the conversation does not exist.
   */
  async claim(id: string, token: number): Promise<PostgresConversationHandle | undefined> {
    const db = this.#open();
    if (!Number.isSafeInteger(token) || token < 1) throw new RangeError("a fencing token is a positive safe integer");
    if (!isValidConversationId(id)) return undefined;
    const [row] = await db.query<{ fence: string }>(
      `claim conversation ${id}`,
      "UPDATE agentwire_conversations SET fence = GREATEST(fence, $2) WHERE id = $1 RETURNING fence",
      [id, token],
    );
    if (!row) return undefined;
    const current = Number(row.fence);
    if (current !== token) throw new FencedError(id, token, current);
    // At once, before anything else runs: writes already queued must carry the new token.
    this.#handles.get(id)?.bindFence(token);
    const handle = await this.get(id);
    handle?.bindFence(token);
    return handle;
  }

  count(): number {
    this.#refreshCountIfStale();
    return this.#count;
  }

  loadedCount(): number {
    return this.#handles.size;
  }

  /**
   * Always empty. The embedded store reports files it cannot parse; here
   * PostgreSQL checks every json value on the way in, and a transaction
   * writes a record and its count together or not at all, so no row can be
   * half-written. A database that cannot be read fails every request with a
   * StoreDatabaseError instead, which is not damage to one conversation.
   */
  damaged(): readonly DamagedConversation[] {
    return [];
  }

  #open(): PostgresDatabase {
    if (this.#state !== "open" || !this.#db) throw new Error(this.#state === "new" ? "store is not open" : "store is closed");
    return this.#db;
  }

  #counted(delta: number): void {
    this.#count = Math.max(0, this.#count + delta);
    this.#countEpoch++;
  }

  /** Asks the database in the background; the answer is kept unless this process created or deleted meanwhile. */
  #refreshCountIfStale(): void {
    if (this.#counting || this.#state !== "open" || Date.now() - this.#countedAt < this.#countRefreshMs) return;
    const db = this.#db!;
    const epoch = this.#countEpoch;
    this.#counting = true;
    db.query<{ count: number }>("count conversations", "SELECT count(*)::int AS count FROM agentwire_conversations").then(
      (rows) => {
        this.#counting = false;
        this.#countedAt = Date.now();
        if (this.#countEpoch === epoch) this.#count = rows[0].count;
      },
      (error: Error) => {
        this.#counting = false;
        this.#countedAt = Date.now();
        if (this.#state === "open") this.#warn(error.message);
      },
    );
  }
}

function positiveInt(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer`);
  return value;
}
