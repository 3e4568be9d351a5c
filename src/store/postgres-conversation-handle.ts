import type { Conversation, ConversationRecord, ToolCallRecord } from "../../protocol/index.js";
import { ASSET_ID_PATTERN } from "../../protocol/index.js";
import { checkAssetQuota, UNLIMITED_ASSETS, type AssetLimits } from "./asset-quota.js";
import { CommitQueue, type Queued } from "./commit-queue.js";
import { TruncateConflictError, type AssetInfo, type ConversationDocument, type ConversationHandle, type RunState } from "./conversation-store.js";
import { FencedError } from "./fenced-error.js";
import { StoreRefusal, type PostgresDatabase, type Query } from "./postgres-database.js";
import { QueuedConversationHandle, type WriteOp } from "./queued-handle.js";
import {
  CONVERSATION_COLUMNS,
  OPEN_ROUND_SQL,
  conversationOf,
  keyOf,
  metadataJson,
  recordColumns,
  type ConversationRow,
  type OpenRoundRow,
  type RecordColumns,
} from "./postgres-record-rows.js";

type Op = WriteOp | { kind: "refresh" };

/** What a handle shows: the committed state of its row, adopted after each commit. */
export interface PostgresHandleState {
  conversation: Conversation;
  seqReserved: number;
  runState: RunState | null;
  openToolCalls: readonly ToolCallRecord[];
}

/** Mutations one transaction carries at most: a burst of appends costs a few round trips, not one each. */
const MAX_GROUP = 256;

/** The conversation's row is gone: deleted, here or by another instance. */
class ConversationGone extends StoreRefusal {}

/** What a transaction knows about a stored record its group names: where it is and what kind it was. */
interface Known {
  position: number;
  assistant: boolean;
  tool: boolean;
}

/**
 * One open conversation of the PostgreSQL store.
 *
 * Mutations go through a CommitQueue: whatever is queued when the previous
 * transaction ends goes into the next one. A transaction locks the
 * conversation's row (`FOR UPDATE`), so writers in other processes queue
 * behind it; positions are the row's record_count, read under that lock, so
 * concurrent appenders never leave a gap or share a position. The handle
 * adopts the new state only after COMMIT (durable first, visible second);
 * a refused mutation (a duplicate id, an unknown record) is refused alone,
 * a failed transaction refuses every mutation it carried.
 *
 * The row it locks is also the freshest truth: if another process appended
 * meanwhile, the handle takes its counts and metadata from the row, and
 * reads the open round of tool calls again.
 *
 * Fencing: once the store has claimed the conversation for this handle with
 * a token, every write checks under the row lock that the row's fence is
 * still that token, and is refused with FencedError otherwise.
 */
export class PostgresConversationHandle extends QueuedConversationHandle<Op> implements ConversationHandle {
  readonly #db: PostgresDatabase;
  readonly #id: string;
  readonly #queue = new CommitQueue<Op>((queue) => this.#step(queue));
  readonly #assetWrites = new Set<Promise<unknown>>();
  #state: PostgresHandleState;
  #fence: number | undefined;

  readonly #assetLimits: AssetLimits;

  constructor(db: PostgresDatabase, state: PostgresHandleState, assetLimits: AssetLimits = UNLIMITED_ASSETS) {
    super();
    this.#db = db;
    this.#id = state.conversation.id;
    this.#state = state;
    this.#assetLimits = assetLimits;
  }

  get conversation(): Conversation {
    return this.#state.conversation;
  }

  get seqReserved(): number {
    return this.#state.seqReserved;
  }

  get recordCount(): number {
    return this.#state.conversation.recordCount;
  }

  get runState(): RunState | null {
    return this.#state.runState;
  }

  get openToolCalls(): readonly ToolCallRecord[] {
    return this.#state.openToolCalls;
  }

  /** The token this handle's writes must still hold; undefined when the conversation was never claimed here. */
  get fence(): number | undefined {
    return this.#fence;
  }

  /**
   * Catches up with writes other instances made: counts, metadata, seq
   * reservation, run state and open round from the database. In order with
   * this handle's own mutations; writes nothing. (Every write catches up by
   * itself; this is for an instance that only reads a conversation another
   * one owns.)
   */
  refresh(): Promise<void> {
    return this.push({ kind: "refresh" });
  }

  /** Called by the store's claim once the row holds `token`: writes queued from now on check it. */
  bindFence(token: number): void {
    this.#fence = token;
  }

  async readRecords(from = 0, to = Number.POSITIVE_INFINITY): Promise<ConversationRecord[]> {
    this.assertUsable("read");
    // Only what this handle has seen committed: a read never runs ahead of recordCount.
    const count = this.recordCount;
    const start = clamp(Math.floor(from), 0, count);
    const end = clamp(Math.floor(to), start, count);
    if (end <= start) return [];
    const rows = await this.#db.query<{ body: ConversationRecord }>(
      `read records of conversation ${this.#id}`,
      "SELECT body FROM agentwire_records WHERE conversation_id = $1 AND position >= $2 AND position < $3 ORDER BY position",
      [this.#id, start, end],
    );
    return rows.map((row) => row.body);
  }

  async findToolCall(toolCallId: string): Promise<ToolCallRecord | undefined> {
    this.assertUsable("read");
    const open = this.#state.openToolCalls;
    for (let i = open.length - 1; i >= 0; i--) if (open[i].toolCallId === toolCallId) return open[i];
    const rows = await this.#db.query<{ body: ToolCallRecord }>(
      `find tool call in conversation ${this.#id}`,
      `SELECT body FROM agentwire_records WHERE conversation_id = $1 AND tool_call_id = $2 AND position < $3
       ORDER BY position DESC LIMIT 1`,
      [this.#id, keyOf(toolCallId), this.recordCount],
    );
    return rows[0]?.body;
  }

  async readDocument(name: ConversationDocument): Promise<unknown> {
    this.assertUsable("read");
    const rows = await this.#db.query<{ body: unknown }>(
      `read the ${name} of conversation ${this.#id}`,
      "SELECT body FROM agentwire_documents WHERE conversation_id = $1 AND name = $2",
      [this.#id, name],
    );
    return rows[0]?.body;
  }

  /**
   * A row of agentwire_documents, written under the conversation row's lock
   * after checking the fence (as every other write): an instance that lost
   * the conversation cannot overwrite what its new owner keeps. A deleted
   * conversation has no row to lock.
   */
  async writeDocument(name: ConversationDocument, value: unknown): Promise<void> {
    if (this.retiredReason !== null) throw this.refusal("change");
    const fence = this.#fence;
    await this.#db.transaction(`store the ${name} of conversation ${this.#id}`, async (query) => {
      const [row] = await query<{ fence: string }>("SELECT fence FROM agentwire_conversations WHERE id = $1 FOR NO KEY UPDATE", [this.#id]);
      if (!row) throw new ConversationGone(`cannot change conversation: conversation ${this.#id} was deleted`);
      if (fence !== undefined && Number(row.fence) !== fence) throw new FencedError(this.#id, fence, Number(row.fence));
      if (value === undefined) {
        await query("DELETE FROM agentwire_documents WHERE conversation_id = $1 AND name = $2", [this.#id, name]);
        return;
      }
      await query(
        `INSERT INTO agentwire_documents (conversation_id, name, body) VALUES ($1, $2, $3::json)
         ON CONFLICT (conversation_id, name) DO UPDATE SET body = EXCLUDED.body`,
        [this.#id, name, JSON.stringify(value)],
      );
    });
  }

  putAsset(info: AssetInfo, bytes: Uint8Array): Promise<void> {
    if (this.retiredReason !== null) return Promise.reject(this.refusal("change"));
    const work = this.#putAsset({ ...info }, Buffer.from(bytes));
    this.#assetWrites.add(work);
    const forget = () => this.#assetWrites.delete(work);
    work.then(forget, forget);
    return work;
  }

  async assetInfo(assetId: string): Promise<AssetInfo | undefined> {
    this.assertUsable("read");
    if (!ASSET_ID_PATTERN.test(assetId)) return undefined;
    const rows = await this.#db.query<{ info: AssetInfo }>(
      `read asset ${assetId} of conversation ${this.#id}`,
      "SELECT info FROM agentwire_assets WHERE conversation_id = $1 AND asset_id = $2",
      [this.#id, assetId],
    );
    return rows[0]?.info;
  }

  async readAsset(assetId: string): Promise<{ info: AssetInfo; bytes: Buffer } | undefined> {
    this.assertUsable("read");
    if (!ASSET_ID_PATTERN.test(assetId)) return undefined;
    const rows = await this.#db.query<{ info: AssetInfo; bytes: Buffer }>(
      `read asset ${assetId} of conversation ${this.#id}`,
      "SELECT info, bytes FROM agentwire_assets WHERE conversation_id = $1 AND asset_id = $2",
      [this.#id, assetId],
    );
    return rows[0] && { info: rows[0].info, bytes: rows[0].bytes };
  }

  /** Ends the handle: later calls fail; resolves once the mutations begun before have settled. */
  async retire(reason: string): Promise<void> {
    this.retiredReason ??= reason;
    await Promise.all([this.#queue.idle(), Promise.allSettled([...this.#assetWrites])]);
  }

  protected enqueue(op: Op): Promise<void> {
    return this.#queue.push(op);
  }

  /**
   * One transaction: lock the conversation's row, check the fence and both
   * quotas, insert, then add the bytes to the store-wide usage row, checking
   * it again under that row's lock. Uploads to one conversation queue on its
   * row (its bytes are summed under the lock); uploads anywhere in the
   * cluster meet at the usage row only for the last statement, so one large
   * insert does not hold the others. A refusal rolls everything back.
   */
  async #putAsset(info: AssetInfo, bytes: Buffer): Promise<void> {
    if (!ASSET_ID_PATTERN.test(info.assetId)) throw new Error(`invalid asset id ${JSON.stringify(info.assetId)}`);
    const fence = this.#fence;
    const limits = this.#assetLimits;
    await this.#db.transaction(`store asset ${info.assetId} of conversation ${this.#id}`, async (query) => {
      // FOR NO KEY UPDATE, the lock an UPDATE of the row takes: a claim waits until this asset is in (or this
      // waits for the claim), and two uploads to this conversation take turns, so its sum below is exact.
      const [row] = await query<{ fence: string }>("SELECT fence FROM agentwire_conversations WHERE id = $1 FOR NO KEY UPDATE", [this.#id]);
      if (!row) throw new ConversationGone(`cannot change conversation: conversation ${this.#id} was deleted`);
      if (fence !== undefined && Number(row.fence) !== fence) throw new FencedError(this.#id, fence, Number(row.fence));
      const [held] = await query<{ conversation: string; replaced: string; total: string }>(
        `SELECT COALESCE(sum(octet_length(bytes)), 0) AS conversation,
                COALESCE(sum(octet_length(bytes)) FILTER (WHERE asset_id = $2), 0) AS replaced,
                (SELECT bytes FROM agentwire_asset_usage) AS total
         FROM agentwire_assets WHERE conversation_id = $1`,
        [this.#id, info.assetId],
      );
      const adding = bytes.length - Number(held.replaced);
      // Refused here, before the bytes travel, when it is over already; checked again under the usage row's lock.
      checkAssetQuota(limits, Number(held.conversation), Number(held.total), adding);
      await query(
        `INSERT INTO agentwire_assets (conversation_id, asset_id, info, bytes) VALUES ($1, $2, $3::json, $4)
         ON CONFLICT (conversation_id, asset_id) DO UPDATE SET info = EXCLUDED.info, bytes = EXCLUDED.bytes`,
        [this.#id, info.assetId, JSON.stringify(info), bytes],
      );
      const [usage] = await query<{ bytes: string }>("UPDATE agentwire_asset_usage SET bytes = bytes + $1 RETURNING bytes", [adding]);
      checkAssetQuota(limits, Number(held.conversation), Number(usage.bytes) - adding, adding);
    });
  }

  async #step(queue: Queued<Op>[]): Promise<void> {
    // A truncation goes in a transaction of its own: the appends around it count positions from the row.
    const cut = queue.findIndex((item) => item.op.kind === "truncate");
    const group = queue.splice(0, cut === 0 ? 1 : cut > 0 ? Math.min(cut, MAX_GROUP) : MAX_GROUP);
    let outcome: { state: PostgresHandleState; refused: Map<Queued<Op>, Error> };
    try {
      outcome = await this.#db.transaction(`write conversation ${this.#id}`, (query) => this.#write(query, group));
    } catch (error) {
      for (const item of group) item.reject(error);
      return;
    }
    // Committed: visible now, and every mutation it carried resolves.
    this.#state = outcome.state;
    for (const item of group) {
      const refusal = outcome.refused.get(item);
      if (refusal) item.reject(refusal);
      else item.resolve();
    }
  }

  /** One transaction for a group of mutations, applied in call order. */
  async #write(query: Query, group: readonly Queued<Op>[]): Promise<{ state: PostgresHandleState; refused: Map<Queued<Op>, Error> }> {
    const id = this.#id;
    const fence = this.#fence;
    // A group of refreshes only reads: no lock, and a handle that lost its fence may still catch up.
    const writes = group.some(({ op }) => op.kind !== "refresh");
    const [row] = await query<ConversationRow>(
      `SELECT ${CONVERSATION_COLUMNS} FROM agentwire_conversations WHERE id = $1${writes ? " FOR UPDATE" : ""}`,
      [id],
    );
    if (!row) throw new ConversationGone(`cannot change conversation: conversation ${id} was deleted`);
    if (writes && fence !== undefined && Number(row.fence) !== fence) throw new FencedError(id, fence, Number(row.fence));

    const base = row.record_count;
    // Another process wrote since this handle last looked: its open round is stale.
    let round: ToolCallRecord[] | null = base === this.recordCount ? [...this.#state.openToolCalls] : null;
    const known = await this.#knownRecords(query, group);
    const refused = new Map<Queued<Op>, Error>();
    const inserts: RecordColumns[] = [];
    const replaces = new Map<number, RecordColumns>();
    let metadata = row.metadata;
    let runState = row.run_state;
    let reserve = Number(row.seq_reserved);
    let dirty = false;
    let truncateFrom: number | undefined;

    for (const item of group) {
      const { op } = item;
      if (op.kind === "append") {
        const columns = recordColumns(op.record);
        if (known.has(columns.key)) {
          refused.set(item, new Error(`record ${op.record.id} is already in the conversation`));
          continue;
        }
        known.set(columns.key, { position: base + inserts.length, assistant: columns.assistant, tool: columns.toolCallKey !== null });
        inserts.push(columns);
        metadata = { ...metadata, updatedAt: op.record.timestamp };
        if (round && columns.assistant) round = [];
        else if (round && op.record.type === "tool_call") round.push(op.record);
      } else if (op.kind === "replace") {
        const columns = recordColumns(op.record);
        const at = known.get(columns.key);
        if (at === undefined) {
          refused.set(item, new Error(`record ${op.record.id} is not in the conversation`));
          continue;
        }
        if (at.position >= base) inserts[at.position - base] = columns;
        else replaces.set(at.position, columns);
        const tool = columns.toolCallKey !== null;
        if (at.assistant !== columns.assistant || at.tool !== tool) {
          // The record changed kind: where the open round starts may have moved.
          round = null;
        } else if (round && op.record.type === "tool_call") {
          const i = round.findIndex((call) => call.id === op.record.id);
          if (i >= 0) round[i] = op.record;
        }
        known.set(columns.key, { ...at, assistant: columns.assistant, tool });
      } else if (op.kind === "update") {
        const { createdAt: _createdAt, recordCount: _count, ...rest } = op.conversation;
        // updatedAt never goes back: an update computed before an append of its group carries the older time.
        const updatedAt = rest.updatedAt > metadata.updatedAt ? rest.updatedAt : metadata.updatedAt;
        metadata = { ...rest, id, createdAt: row.created_at, updatedAt };
        dirty = true;
      } else if (op.kind === "reserve") {
        if (op.upTo > reserve) {
          reserve = op.upTo;
          dirty = true;
        }
      } else if (op.kind === "runState") {
        runState = op.state;
        dirty = true;
      } else if (op.kind === "truncate") {
        // Alone in its group (see #step).
        if (op.ifCount !== undefined && op.ifCount !== base) {
          refused.set(item, new TruncateConflictError(op.ifCount, base));
          continue;
        }
        if (op.from < base) truncateFrom = op.from;
      }
    }
    if (truncateFrom !== undefined) {
      await query("DELETE FROM agentwire_records WHERE conversation_id = $1 AND position >= $2", [id, truncateFrom]);
      metadata = { ...metadata, updatedAt: new Date().toISOString() };
      round = null;
      dirty = true;
    }

    if (inserts.length > 0) {
      await query(
        `INSERT INTO agentwire_records (conversation_id, position, id, body, assistant, tool_call_id)
         SELECT $1, p, k, b::json, a, t FROM unnest($2::int[], $3::text[], $4::text[], $5::bool[], $6::text[]) AS r(p, k, b, a, t)`,
        [
          id,
          inserts.map((_, i) => base + i),
          inserts.map((r) => r.key),
          inserts.map((r) => r.body),
          inserts.map((r) => r.assistant),
          inserts.map((r) => r.toolCallKey),
        ],
      );
    }
    if (replaces.size > 0) {
      const entries = [...replaces];
      await query(
        `UPDATE agentwire_records AS r SET body = v.b::json, assistant = v.a, tool_call_id = v.t
         FROM unnest($2::int[], $3::text[], $4::bool[], $5::text[]) AS v(p, b, a, t)
         WHERE r.conversation_id = $1 AND r.position = v.p`,
        [id, entries.map(([p]) => p), entries.map(([, r]) => r.body), entries.map(([, r]) => r.assistant), entries.map(([, r]) => r.toolCallKey)],
      );
    }
    const recordCount = truncateFrom ?? base + inserts.length;
    if (dirty || inserts.length > 0) {
      await query(
        `UPDATE agentwire_conversations
         SET record_count = $2, metadata = $3::json, seq_reserved = GREATEST(seq_reserved, $4), run_state = $5::json
         WHERE id = $1`,
        [id, recordCount, metadataJson({ ...metadata, recordCount }), reserve, runState === null ? null : JSON.stringify(runState)],
      );
    }
    if (round === null) round = (await query<OpenRoundRow>(OPEN_ROUND_SQL, [id])).map((r) => r.body);
    return {
      state: {
        conversation: conversationOf({ ...row, metadata, record_count: recordCount }),
        seqReserved: reserve,
        runState,
        openToolCalls: round,
      },
      refused,
    };
  }

  /**
   * Positions and kinds of the records the group's appends and replaces name
   * that are stored already. A statement of its own, after the row lock: under
   * READ COMMITTED it sees what the writer we waited for committed, where a
   * subquery in the locking SELECT would read the snapshot from before the wait.
   */
  async #knownRecords(query: Query, group: readonly Queued<Op>[]): Promise<Map<string, Known>> {
    const keys = new Set<string>();
    for (const { op } of group) if (op.kind === "append" || op.kind === "replace") keys.add(keyOf(op.record.id));
    const known = new Map<string, Known>();
    if (keys.size === 0) return known;
    const rows = await query<{ id: string; position: number; assistant: boolean; tool: boolean }>(
      `SELECT id, position, assistant, tool_call_id IS NOT NULL AS tool FROM agentwire_records
       WHERE conversation_id = $1 AND id = ANY($2::text[])`,
      [this.#id, [...keys]],
    );
    for (const row of rows) known.set(row.id, { position: row.position, assistant: row.assistant, tool: row.tool });
    return known;
  }
}

/** A handle's state from its row and its open round, as loaded. */
export function handleStateOf(row: ConversationRow, openRound: readonly ToolCallRecord[]): PostgresHandleState {
  return {
    conversation: conversationOf(row),
    seqReserved: Number(row.seq_reserved),
    runState: row.run_state,
    openToolCalls: openRound,
  };
}

function clamp(value: number, min: number, max: number): number {
  if (Number.isNaN(value)) return min;
  return Math.min(Math.max(value, min), max);
}
