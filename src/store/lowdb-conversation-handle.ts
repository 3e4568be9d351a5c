import { join } from "node:path";
import type { Conversation, ConversationRecord, ToolCallRecord } from "../../protocol/index.js";
import type { AssetReservation } from "./asset-quota.js";
import { CommitQueue, settleGroup, type Queued } from "./commit-queue.js";
import { TruncateConflictError, type AssetInfo, type ConversationDamagedError, type ConversationDocument, type ConversationHandle, type RunState } from "./conversation-store.js";
import { LowdbAssets } from "./lowdb-assets.js";
import { isAssistantMessage, jsonSize, recordsBytes, stateOf, type HandleState, type OpenCall } from "./lowdb-conversation-load.js";
import { META_FILE, checkSegment, readJsonFile, segmentFileName, type MetaData, type SegmentData } from "./lowdb-file-checks.js";
import { LowdbFile } from "./lowdb-file.js";
import { ConversationJournal, JOURNAL_FILE, overlay, type JournalBudget, type JournalContent } from "./lowdb-journal.js";
import { QueuedConversationHandle, type WriteOp } from "./queued-handle.js";
import type { CachedSegment, SegmentCache } from "./segment-cache.js";
import { removeFile } from "./remove-file.js";

/** What a handle needs from its store. */
export interface HandleContext {
  readonly dir: string;
  readonly cache: SegmentCache;
  readonly segmentSize: number;
  readonly segmentBytes: number;
  /** The journal's bound (0: none). */
  readonly journalBytes: number;
  /** What all loaded conversations' journals may hold in memory together. */
  readonly journalBudget: JournalBudget;
  /** Records the conversation as damaged; returns the error to throw. */
  damaged(problem: string): ConversationDamagedError;
  /** Reserves the bytes of an asset (replacing one of `replacedBytes`) with the store's quota; throws AssetQuotaError over it. */
  reserveAssetBytes(bytes: number, replacedBytes: number): Promise<AssetReservation>;
}

type Op = WriteOp;

/** What load found on disk beside the state (lowdb-conversation-load.ts). */
export interface LoadedFiles {
  readonly tail: { segment: number; value: CachedSegment } | null;
  readonly metaBehind: boolean;
  readonly journal: JournalContent | null;
  readonly revision: number;
}

/** JSON of `{"records":[]}` around the records. */
const SEGMENT_OVERHEAD = 16;

/**
 * One loaded conversation of the lowdb store.
 *
 * Mutations go through a CommitQueue: each step builds the next state beside
 * the committed one, writes it, and adopts it only once the write is durable
 * (a failed step leaves the committed state as it was). A step is one line
 * appended to the journal (lowdb-journal.ts) while it has room, else it
 * writes at most one segment file, then meta:
 *
 * - records: the queued appends that fit in the last segment (or start a new
 *   one) and the queued replaces of records in that same segment, with the
 *   metadata changes queued behind them (a turn's end: its assistant
 *   record, usage totals and run state). Written whole, the segment is the
 *   truth; if it is written but meta is not, the records are stored all the
 *   same (load recounts them), the step succeeds and the next meta write
 *   carries the count.
 * - metadata: the queued update/reserveSeq/updateRunState calls, in one write.
 *
 * Records live in the store-wide SegmentCache, or on disk; the handle keeps
 * HandleState only.
 */
export class LowdbConversationHandle extends QueuedConversationHandle implements ConversationHandle {
  readonly #ctx: HandleContext;
  readonly #owner: number;
  readonly #meta: LowdbFile<MetaData>;
  readonly #assets: LowdbAssets;
  readonly #queue = new CommitQueue<Op>((queue) => this.#step(queue));
  #state: HandleState;
  /** Meta on disk lags the committed state (its write failed after the segment's succeeded). */
  #metaBehind: boolean;
  /** Bumped by every segment commit: a disk read begun before one must not be cached after it. */
  #epoch = 0;
  readonly #reads = new Map<number, { epoch: number; promise: Promise<CachedSegment> }>();
  /** A truncation is removing segment files (see #readSegment). */
  #truncating = false;
  /** One writer per document file (LowdbFile's rule). */
  readonly #documents = new Map<ConversationDocument, LowdbFile<{ value: unknown }>>();
  /** Changes of the last segment and metadata, appended rather than rewriting files (lowdb-journal.ts). */
  readonly #journal: ConversationJournal;
  /** The last metadata revision written (or tried): the next write's is one higher. */
  #revision: number;

  /** `loaded`: what load found beside the state; none for a conversation just created. */
  constructor(ctx: HandleContext, state: HandleState, loaded: LoadedFiles | null) {
    super();
    this.#journal = new ConversationJournal(join(ctx.dir, JOURNAL_FILE), loaded?.journal ?? null, ctx.journalBytes, ctx.journalBudget);
    this.#ctx = ctx;
    this.#owner = ctx.cache.newOwner();
    this.#meta = new LowdbFile<MetaData>(join(ctx.dir, META_FILE));
    this.#assets = new LowdbAssets(ctx.dir, ctx.reserveAssetBytes);
    this.#state = state;
    this.#metaBehind = loaded?.metaBehind ?? false;
    this.#revision = loaded?.revision ?? 0;
    if (loaded?.tail) ctx.cache.put(this.#owner, loaded.tail.segment, loaded.tail.value);
  }

  get conversation(): Conversation {
    return this.#state.meta.conversation;
  }

  get seqReserved(): number {
    return this.#state.meta.seqReserved;
  }

  get recordCount(): number {
    return this.#state.meta.conversation.recordCount;
  }

  get runState(): RunState | null {
    return this.#state.meta.runState ?? null;
  }

  get openToolCalls(): readonly ToolCallRecord[] {
    return this.#state.openToolCalls;
  }

  /** The journal's file opens now, off the approval's path (see ConversationHandle.prepareReplaces). */
  prepareReplaces(): void {
    if (this.retiredReason !== null) return;
    this.#journal.hold().catch(() => undefined); // the first append tries again, and reports
  }

  gather(): void {
    this.#queue.gather();
  }

  async readRecords(from = 0, to = Number.POSITIVE_INFINITY): Promise<ConversationRecord[]> {
    this.assertUsable("read");
    const { segmentCounts, meta } = this.#state;
    const count = meta.conversation.recordCount;
    const start = clamp(Math.floor(from), 0, count);
    const end = clamp(Math.floor(to), start, count);
    const out: ConversationRecord[] = [];
    let segmentStart = 0;
    for (let segment = 0; segment < segmentCounts.length && segmentStart < end; segment++) {
      const n = segmentCounts[segment];
      if (segmentStart + n > start) {
        const { records } = await this.#segment(segment, n);
        const stop = Math.min(end - segmentStart, n);
        for (let i = Math.max(start - segmentStart, 0); i < stop; i++) out.push(records[i]);
      }
      segmentStart += n;
    }
    return out;
  }

  async findToolCall(toolCallId: string): Promise<ToolCallRecord | undefined> {
    this.assertUsable("read");
    const { openRound, segmentCounts } = this.#state;
    for (let i = openRound.length - 1; i >= 0; i--) {
      if (openRound[i].record.toolCallId === toolCallId) return openRound[i].record;
    }
    for (let segment = segmentCounts.length - 1; segment >= 0; segment--) {
      const { records } = await this.#segment(segment, segmentCounts[segment]);
      for (let i = segmentCounts[segment] - 1; i >= 0; i--) {
        const record = records[i];
        if (record.type === "tool_call" && record.toolCallId === toolCallId) return record;
      }
    }
    return undefined;
  }

  async readDocument(name: ConversationDocument): Promise<unknown> {
    this.assertUsable("read");
    const file = documentFileName(name);
    const read = await readJsonFile<{ value: unknown }>(join(this.#ctx.dir, file), file, (data) =>
      typeof data === "object" && data !== null && "value" in data ? null : "expected {value: …}",
    );
    if (read.ok) return read.data.value;
    if (read.missing) return undefined;
    throw this.#ctx.damaged(read.problem);
  }

  async writeDocument(name: ConversationDocument, value: unknown): Promise<void> {
    if (this.retiredReason !== null) throw this.refusal("change");
    let file = this.#documents.get(name);
    if (!file) this.#documents.set(name, (file = new LowdbFile(join(this.#ctx.dir, documentFileName(name)))));
    if (value === undefined) {
      await file.write({ value: null }).then(() => removeFile(file.path));
      return;
    }
    await file.write({ value });
  }

  putAsset(info: AssetInfo, bytes: Uint8Array): Promise<void> {
    if (this.retiredReason !== null) return Promise.reject(this.refusal("change"));
    return this.#assets.put(info, bytes);
  }

  async assetInfo(assetId: string): Promise<AssetInfo | undefined> {
    this.assertUsable("read");
    return this.#assets.info(assetId);
  }

  async readAsset(assetId: string): Promise<{ info: AssetInfo; bytes: Buffer } | undefined> {
    this.assertUsable("read");
    return this.#assets.read(assetId);
  }

  /**
   * Ends the handle: later calls fail; resolves once the mutations queued
   * before are settled. With `flush`, a meta file left behind by a failed
   * write gets one more try.
   */
  async retire(reason: string, flush: boolean): Promise<void> {
    this.retiredReason ??= reason;
    // Asset writes too: a deletion removes the folder only after them.
    await Promise.all([this.#queue.idle(), this.#assets.idle()]);
    // A server stopped cleanly leaves its segments whole (an older version reads them as they are); a failure keeps the journal, which load reads.
    // An empty journal's file (opened ahead of replaces that never came) goes too; one that could not be compacted stays.
    if (flush) await this.#compactJournal().then(() => this.#journal.clear()).catch(() => undefined);
    await this.#journal.close();
    this.#journal.release();
    if (flush && this.#metaBehind) {
      await this.#writeMeta(this.#state).then(
        () => (this.#metaBehind = false),
        () => undefined,
      );
    }
    this.#ctx.cache.dropOwner(this.#owner);
  }


  protected enqueue(op: Op): Promise<void> {
    return this.#queue.push(op);
  }

  #step(queue: Queued<Op>[]): Promise<void> {
    const { op } = queue[0];
    if (op.kind === "truncate") return this.#commitTruncate(queue.shift()!, op.from, op.ifCount);
    return isMetaOp(op) ? this.#commitMeta(queue) : this.#commitRecords(queue);
  }

  /**
   * Remove the records from `from` on. meta.json is written first, with the
   * lower count: until the segment files follow, a crash leaves more records
   * in them than meta counts, which load takes as a crash between a segment
   * write and its meta write, and counts them back. Later segments go newest
   * first, so the segment numbers never have a gap. A crash part way thus
   * leaves a prefix of the records, at least the `from` kept, never a
   * damaged conversation (test/store/store-truncate.test.ts); its caller was
   * not answered.
   */
  async #commitTruncate(item: Queued<Op>, from: number, ifCount: number | undefined): Promise<void> {
    const state = this.#state;
    const counts = state.segmentCounts;
    const total = state.meta.conversation.recordCount;
    if (ifCount !== undefined && ifCount !== total) return item.reject(new TruncateConflictError(ifCount, total));
    if (from >= total) return item.resolve();
    try {
      // Journal lines name the last segment; it may go or shrink now.
      await this.#compactJournal();
    } catch (error) {
      item.reject(error);
      return;
    }
    let segment = 0;
    let start = 0;
    while (start + counts[segment] <= from) start += counts[segment++];
    let next: HandleState;
    let records: ConversationRecord[];
    try {
      records = (await this.#segment(segment, counts[segment])).records.slice(0, from - start);
      const segmentCounts = [...counts.slice(0, segment), records.length];
      const openRound = await this.#scanOpenRound(segmentCounts, segment, records);
      const conversation = { ...state.meta.conversation, recordCount: from, updatedAt: new Date().toISOString() };
      next = stateOf({ meta: { ...state.meta, conversation }, segmentCounts, lastSegmentBytes: recordsBytes(records), openRound });
      await this.#writeMeta(next);
      this.#metaBehind = false;
      this.#truncating = true;
      for (let s = counts.length - 1; s > segment; s--) await removeFile(join(this.#ctx.dir, segmentFileName(s)));
      await new LowdbFile<SegmentData>(join(this.#ctx.dir, segmentFileName(segment))).write({ records });
    } catch (error) {
      this.#truncating = false;
      // A failure after meta was written leaves files a load reads back as before the truncation (see above);
      // this handle's view must not run ahead of them, so it stays as it was too.
      item.reject(error);
      return;
    }
    this.#state = next;
    this.#truncating = false;
    this.#epoch++;
    this.#ctx.cache.dropOwner(this.#owner);
    this.#ctx.cache.put(this.#owner, segment, { records, bytes: recordsBytes(records) + SEGMENT_OVERHEAD });
    item.resolve();
  }

  async #commitMeta(queue: Queued<Op>[]): Promise<void> {
    const group: Queued<Op>[] = [];
    while (queue.length > 0 && isMetaOp(queue[0].op)) group.push(queue.shift()!);
    const next = withMetaOps(this.#state, group);
    if (next === this.#state) {
      for (const item of group) item.resolve();
      return;
    }
    const last = next.segmentCounts.length - 1;
    if (this.#journals(last)) {
      const meta = this.#metaData(next, this.#revision + 1);
      const text = ConversationJournal.line(last, [], meta);
      if (this.#journal.hasRoom(text.length)) {
        this.#revision++;
        await settleGroup(group, () => this.#journal.append(last, [], meta, text, next.openRound.length > 0), () => this.#adoptMeta(next));
        return;
      }
    }
    await settleGroup(group, () => this.#writeMeta(next), () => this.#adoptMeta(next));
  }

  /** Whether a write of segment `target` (and the metadata) can be a journal line: the last segment, one there is. */
  #journals(target: number): boolean {
    return target >= 0 && target === this.#state.segmentCounts.length - 1 && (this.#journal.segment < 0 || this.#journal.segment === target);
  }

  /** meta.json written whole, with the next revision. */
  #writeMeta(state: HandleState): Promise<void> {
    return this.#meta.write(this.#metaData(state, ++this.#revision));
  }

  #adoptMeta(next: HandleState): void {
    this.#state = next;
    this.#metaBehind = false;
  }

  async #commitRecords(queue: Queued<Op>[]): Promise<void> {
    const state = this.#state;
    const counts = state.segmentCounts;
    const lastIndex = counts.length - 1;
    const first = queue[0];
    const firstOp = first.op as Extract<Op, { record: ConversationRecord }>;
    let target: number;
    let base: CachedSegment;
    // The first append's size, measured once (a JSON.stringify of the record) for both uses below.
    let firstSize: number | undefined;
    try {
      if (firstOp.kind === "append") {
        const size = (firstSize = jsonSize(firstOp.record));
        target = lastIndex >= 0 && this.#hasRoom(counts[lastIndex], state.lastSegmentBytes, size) ? lastIndex : lastIndex + 1;
        base = target === lastIndex ? await this.#segment(target, counts[target]) : { records: [], bytes: SEGMENT_OVERHEAD };
      } else {
        const found = await this.#locate(firstOp.record.id);
        if (found === undefined) {
          queue.shift();
          first.reject(new Error(`record ${firstOp.record.id} is not in the conversation`));
          return;
        }
        target = found;
        base = await this.#segment(target, counts[target]);
      }
    } catch (error) {
      queue.shift();
      first.reject(error);
      return;
    }

    const isLast = target >= lastIndex;
    const baseCount = counts[target] ?? 0;
    const records = base.records.slice(0, baseCount);
    const positions = new Map(records.map((record, i) => [record.id, i]));
    const openIds = new Set(state.openRound.map((call) => call.record.id));
    let bytes = base.bytes;
    let lastBytes = target === lastIndex ? state.lastSegmentBytes : 0;
    let round: OpenCall[] = [...state.openRound];
    let rescan = false;
    let updatedAt: string | null = null;
    let appended = 0;
    /** The group's replaces, the last value of each record. */
    const replaced = new Map<string, ConversationRecord>();
    const group: Queued<Op>[] = [];
    while (queue.length > 0) {
      const item = queue[0];
      const { op } = item;
      if (op.kind === "append") {
        if (!isLast) break;
        const size = item === first && firstSize !== undefined ? firstSize : jsonSize(op.record);
        if (positions.has(op.record.id) || openIds.has(op.record.id)) {
          queue.shift();
          item.reject(new Error(`record ${op.record.id} is already in the conversation`));
          continue;
        }
        if (records.length > 0 && !this.#hasRoom(records.length, lastBytes, size)) break;
        positions.set(op.record.id, records.length);
        records.push(op.record);
        bytes += size + 1;
        lastBytes += size;
        updatedAt = op.record.timestamp;
        appended++;
        if (isAssistantMessage(op.record)) round = [];
        else if (op.record.type === "tool_call") round.push({ record: op.record, segment: target });
      } else if (op.kind === "replace") {
        const offset = positions.get(op.record.id);
        if (offset === undefined) break;
        const old = records[offset];
        const delta = jsonSize(op.record) - jsonSize(old);
        records[offset] = op.record;
        replaced.set(op.record.id, op.record);
        bytes += delta;
        if (isLast) lastBytes += delta;
        const i = round.findIndex((call) => call.record.id === op.record.id);
        if (i >= 0 && op.record.type === "tool_call") round[i] = { record: op.record, segment: target };
        else if (isAssistantMessage(old) !== isAssistantMessage(op.record) || old.type !== op.record.type) rescan = true;
      } else {
        break;
      }
      queue.shift();
      group.push(item);
    }
    if (group.length === 0) return;

    const segmentCounts = [...counts];
    segmentCounts[target] = records.length;
    let next: HandleState;
    try {
      if (rescan) round = await this.#scanOpenRound(segmentCounts, target, records);
      const conversation =
        appended > 0
          ? { ...state.meta.conversation, recordCount: state.meta.conversation.recordCount + appended, updatedAt: updatedAt! }
          : state.meta.conversation;
      next = stateOf({
        meta: { ...state.meta, conversation },
        segmentCounts,
        lastSegmentBytes: isLast ? lastBytes : state.lastSegmentBytes,
        openRound: round,
      });
    } catch (error) {
      for (const item of group) item.reject(error);
      return;
    }
    // The records the group replaced that were there before it (final values); those it appended follow them in a line.
    const replacedBefore: ConversationRecord[] = [];
    for (const record of replaced.values()) if (positions.get(record.id)! < baseCount) replacedBefore.push(record);
    if (this.#journals(target)) {
      const changed = appended > 0 ? [...replacedBefore, ...records.slice(baseCount)] : replacedBefore;
      if (await this.#journalRecords(queue, group, next, target, changed, appended > 0, { records, bytes })) return;
    }
    try {
      await this.#writeRecords(target, lastIndex, records, replacedBefore);
    } catch (error) {
      for (const item of group) item.reject(error);
      return;
    }
    // The segment is durable: these mutations have happened, whatever meta does.
    // Metadata changes queued meanwhile (a turn's usage totals and run state) ride on the meta write an append makes anyway:
    // one write for the turn's end instead of one per change.
    const riders: Queued<Op>[] = [];
    if (appended > 0) while (queue.length > 0 && isMetaOp(queue[0].op)) riders.push(queue.shift()!);
    let adopted = next;
    // The journal's metadata, newer than meta.json's, goes only once meta.json holds what it held.
    const journaled = target >= lastIndex && this.#journal.segment >= 0;
    if (appended > 0 || this.#metaBehind || (journaled && this.#journal.meta !== null)) {
      const withRiders = riders.length > 0 ? withMetaOps(next, riders) : null;
      let failure: unknown;
      this.#metaBehind = await this.#writeMeta(withRiders ?? next).then(
        () => false,
        (error: unknown) => {
          failure = error;
          return true;
        },
      );
      if (withRiders && !this.#metaBehind) adopted = withRiders;
      // A failed meta write rejects the metadata changes it carried (they are not stored); the records are.
      for (const item of riders) {
        if (this.#metaBehind) item.reject(failure);
        else item.resolve();
      }
    }
    // Its lines now hold the segment's own values and metadata no newer than meta.json's (or, after a failed cut-off,
    // nothing acknowledged); a failure to empty it leaves lines load applies again to the same result.
    if (journaled && !this.#metaBehind) await this.#journal.clear().catch(() => undefined);
    this.#state = adopted;
    this.#epoch++;
    this.#ctx.cache.put(this.#owner, target, { records, bytes });
    for (const item of group) item.resolve();
  }

  /**
   * A group of the last segment written as one journal line, with the
   * metadata changes queued behind it (a turn's usage totals and run state,
   * queued in the same event-loop turn as its record: see
   * ConversationHandle.gather). False, with nothing taken or written, when
   * the line would take the journal past its bound.
   */
  async #journalRecords(
    queue: Queued<Op>[],
    group: readonly Queued<Op>[],
    next: HandleState,
    target: number,
    changed: readonly ConversationRecord[],
    appended: boolean,
    segment: CachedSegment,
  ): Promise<boolean> {
    const riders: Queued<Op>[] = [];
    while (queue.length > 0 && isMetaOp(queue[0].op)) riders.push(queue.shift()!);
    const adopted = riders.length > 0 ? withMetaOps(next, riders) : next;
    const meta = appended || adopted !== next || this.#metaBehind ? this.#metaData(adopted, this.#revision + 1) : null;
    const text = ConversationJournal.line(target, changed, meta);
    if (!this.#journal.hasRoom(text.length)) {
      queue.unshift(...riders);
      return false;
    }
    if (meta) this.#revision++;
    try {
      await this.#journal.append(target, changed, meta, text, adopted.openRound.length > 0);
    } catch (error) {
      for (const item of group) item.reject(error);
      for (const item of riders) item.reject(error);
      return true;
    }
    if (meta) this.#metaBehind = false;
    this.#state = adopted;
    this.#epoch++;
    this.#ctx.cache.put(this.#owner, target, segment);
    for (const item of group) item.resolve();
    for (const item of riders) item.resolve();
    return true;
  }

  /**
   * Write a group's segment whole (the journal had no room for it, or it is
   * not the last segment). The order of the journal's rules
   * (lowdb-journal.ts): a segment newer than the journal's starts only once
   * the journal is emptied; the journal's own segment, written whole, has the
   * group's records journaled first (the caller empties the journal once
   * meta.json is written too).
   */
  async #writeRecords(target: number, lastIndex: number, records: ConversationRecord[], replacedBefore: readonly ConversationRecord[]): Promise<void> {
    const journal = this.#journal;
    if (target > lastIndex) await this.#compactJournal();
    // Only records there before the group: a crash before the segment write must not leave the group's appends in a line.
    if (target === lastIndex && journal.segment === target && replacedBefore.length > 0) {
      await journal.append(target, replacedBefore, null, ConversationJournal.line(target, replacedBefore, null), true);
    }
    // A LowdbFile per write is safe: this queue is the only writer of the conversation's files.
    await new LowdbFile<SegmentData>(join(this.#ctx.dir, segmentFileName(target))).write({ records });
  }

  /** Write the journal's segment (its committed records) and meta.json whole, as far as it holds either, and empty the journal. */
  async #compactJournal(): Promise<void> {
    const segment = this.#journal.segment;
    if (segment < 0) return;
    if (this.#journal.hasRecords) {
      const count = this.#state.segmentCounts[segment];
      const { records } = await this.#segment(segment, count);
      await new LowdbFile<SegmentData>(join(this.#ctx.dir, segmentFileName(segment))).write({ records: records.slice(0, count) });
    }
    if (this.#journal.meta !== null) {
      await this.#writeMeta(this.#state);
      this.#metaBehind = false;
    }
    await this.#journal.clear();
  }

  #hasRoom(count: number, bytes: number, size: number): boolean {
    return count < this.#ctx.segmentSize && bytes + size <= this.#ctx.segmentBytes;
  }

  /** The segment holding a record: the open round knows its own; others are searched newest first. */
  async #locate(recordId: string): Promise<number | undefined> {
    const { openRound, segmentCounts } = this.#state;
    const open = openRound.find((call) => call.record.id === recordId);
    if (open) return open.segment;
    for (let segment = segmentCounts.length - 1; segment >= 0; segment--) {
      const { records } = await this.#segment(segment, segmentCounts[segment]);
      for (let i = 0; i < segmentCounts[segment]; i++) if (records[i].id === recordId) return segment;
    }
    return undefined;
  }

  /** The open round from scratch (a replace changed which record is the last assistant message). */
  async #scanOpenRound(counts: readonly number[], changed: number, changedRecords: readonly ConversationRecord[]): Promise<OpenCall[]> {
    const round: OpenCall[] = [];
    for (let segment = counts.length - 1; segment >= 0; segment--) {
      const records = segment === changed ? changedRecords : (await this.#segment(segment, counts[segment])).records;
      for (let i = counts[segment] - 1; i >= 0; i--) {
        const record = records[i];
        if (isAssistantMessage(record)) return round.reverse();
        if (record.type === "tool_call") round.push({ record, segment });
      }
    }
    return round.reverse();
  }

  /** A committed segment, from the cache or the disk (holding at least `count` records). */
  async #segment(segment: number, count: number): Promise<CachedSegment> {
    const cached = this.#ctx.cache.get(this.#owner, segment);
    if (cached) return cached;
    const epoch = this.#epoch;
    let reading = this.#reads.get(segment);
    if (!reading || reading.epoch !== epoch) {
      const promise = this.#readSegment(segment, count);
      const entry = { epoch, promise };
      reading = entry;
      this.#reads.set(segment, entry);
      const forget = () => {
        if (this.#reads.get(segment) === entry) this.#reads.delete(segment);
      };
      promise.then(forget, forget);
    }
    const value = await reading.promise;
    if (this.#epoch === epoch && this.retiredReason === null) this.#ctx.cache.put(this.#owner, segment, value);
    return value;
  }

  async #readSegment(segment: number, count: number): Promise<CachedSegment> {
    const name = segmentFileName(segment);
    const read = await readJsonFile<SegmentData>(join(this.#ctx.dir, name), name, checkSegment);
    // Not damage: a truncation removed or shortened it while this read was on its way.
    const raced = this.#truncating || segment >= this.#state.segmentCounts.length || count > this.#state.segmentCounts[segment];
    if (raced && (!read.ok ? read.missing : read.data.records.length < count)) {
      throw new Error(`records of ${name} were taken back (conversation.rewind) while they were being read`);
    }
    if (!read.ok) throw this.#ctx.damaged(read.problem);
    // The file lacks the changes the journal holds for it.
    const records = segment === this.#journal.segment ? overlay(read.data.records, this.#journal.content) : read.data.records;
    if (records.length < count) throw this.#ctx.damaged(`${name} holds ${records.length} records, ${count} were stored in it`);
    return { records, bytes: records === read.data.records ? read.bytes : recordsBytes(records) + records.length + SEGMENT_OVERHEAD };
  }

  #metaData(state: HandleState, revision: number): MetaData {
    return {
      version: 1,
      conversation: state.meta.conversation,
      seqReserved: state.meta.seqReserved,
      segments: [...state.segmentCounts],
      ...(state.meta.runState ? { runState: state.meta.runState } : {}),
      revision,
    };
  }
}

/** The file of a conversation document (ConversationHandle.readDocument), beside meta.json. */
function documentFileName(name: ConversationDocument): string {
  return `document-${name}.json`;
}

/** `state` with the metadata operations applied in order; `state` itself when none changes anything. */
function withMetaOps(state: HandleState, items: readonly Queued<Op>[]): HandleState {
  let { conversation, seqReserved, runState } = state.meta;
  let changed = false;
  for (const { op } of items) {
    if (op.kind === "update") {
      // createdAt orders the index; recordCount is the store's own count. updatedAt never goes back: an update
      // computed before an append it is written with carries the older time.
      const updatedAt = op.conversation.updatedAt > conversation.updatedAt ? op.conversation.updatedAt : conversation.updatedAt;
      conversation = { ...op.conversation, createdAt: conversation.createdAt, recordCount: conversation.recordCount, updatedAt };
      changed = true;
    } else if (op.kind === "reserve" && op.upTo > seqReserved) {
      seqReserved = op.upTo;
      changed = true;
    } else if (op.kind === "runState") {
      runState = op.state;
      changed = true;
    }
  }
  return changed ? stateOf({ ...state, meta: { conversation, seqReserved, runState } }) : state;
}

/** Operations written to meta.json alone (no segment). */
function isMetaOp(op: Op): boolean {
  return op.kind === "update" || op.kind === "reserve" || op.kind === "runState";
}

function clamp(value: number, min: number, max: number): number {
  if (Number.isNaN(value)) return min;
  return Math.min(Math.max(value, min), max);
}
