import { readdir } from "node:fs/promises";
import { join } from "node:path";
import type { ConversationRecord, ToolCallRecord } from "../../protocol/index.js";
import {
  META_FILE,
  checkMeta,
  checkSegment,
  checkSegmentNumbers,
  plural,
  readJsonFile,
  segmentFileName,
  segmentNumber,
  type MetaData,
  type SegmentData,
} from "./lowdb-file-checks.js";
import { JOURNAL_FILE, overlay, readJournal, revisionOf, type JournalContent } from "./lowdb-journal.js";
import type { CachedSegment } from "./segment-cache.js";
import { asStoreFileError, errorCode, isTransientIoError } from "./store-file-error.js";

/** What a handle keeps in memory: small, whatever the conversation's length. */
export interface HandleState {
  readonly meta: Omit<MetaData, "version">;
  /** Records per segment file, oldest first. */
  readonly segmentCounts: readonly number[];
  /** JSON bytes of the last segment's records, to close it on size. */
  readonly lastSegmentBytes: number;
  /** Tool calls after the last assistant message, oldest first. */
  readonly openRound: readonly OpenCall[];
  readonly openToolCalls: readonly ToolCallRecord[];
}

export interface OpenCall {
  readonly record: ToolCallRecord;
  /** The segment holding it, so replacing it needs no search. */
  readonly segment: number;
}

export function stateOf(fields: Omit<HandleState, "openToolCalls">): HandleState {
  return { ...fields, openToolCalls: fields.openRound.map((call) => call.record) };
}

export type LoadOutcome =
  | {
      ok: true;
      state: HandleState;
      tail: { segment: number; value: CachedSegment } | null;
      /** meta.json counts fewer records than the segments hold: the next meta write must fix it. */
      metaBehind: boolean;
      /** Changes of the last segment and metadata its files do not hold yet (lowdb-journal.ts). */
      journal: JournalContent | null;
      /** The newest metadata revision on disk: the next write's is one higher. */
      revision: number;
    }
  | { ok: false; problem: string };

/**
 * Reads a conversation's files and decides whether they can be trusted.
 * Content problems come back as a problem text; machine failures throw
 * StoreFileError. Segments are read one at a time and dropped, except the
 * last one, which the next append needs.
 *
 * A conversation of at most `fullCheckSegments` segments is read whole:
 * every segment is checked, counted and scanned for the open round. A longer
 * one is read from its end only: meta.json's per-segment counts stand for
 * the segments it knows, except its last (meta is written after its segment,
 * so that one and any newer may hold more), and older segments are read
 * only as far back as the last assistant message. The others are checked
 * when first read (a damaged one then fails that read, as damaged).
 *
 * Segments are written before meta, so a crash can leave more records than
 * meta counts: normal, the segments win. Fewer means records were lost.
 * The metadata is meta.json's, or the journal's last line's when that is
 * newer; the journal's records are laid over the last segment.
 */
export async function loadConversation(dir: string, id: string, fullCheckSegments: number): Promise<LoadOutcome> {
  const metaRead = await readJsonFile<MetaData>(join(dir, META_FILE), META_FILE, checkMeta);
  if (!metaRead.ok) return metaRead;
  let meta = metaRead.data;
  if (meta.conversation.id !== id) return { ok: false, problem: `${META_FILE} describes conversation ${meta.conversation.id}` };

  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if (isTransientIoError(error)) throw asStoreFileError(error, dir, "cannot be listed");
    return { ok: false, problem: `its folder cannot be listed (${errorCode(error) ?? "unknown error"})` };
  }
  const numbers = names.map(segmentNumber).filter((n) => n !== undefined);
  const gap = checkSegmentNumbers(numbers);
  if (gap) return { ok: false, problem: gap };
  const segmentTotal = numbers.length;
  const journalRead = await readJournal(join(dir, JOURNAL_FILE), segmentTotal - 1);
  if (!journalRead.ok) return journalRead;
  const journal = journalRead.content;
  const revision = Math.max(revisionOf(meta), journal?.meta ? revisionOf(journal.meta) : 0);
  // The journal's metadata is newer than meta.json unless meta.json was written after it (see lowdb-journal.ts).
  if (journal?.meta && revisionOf(journal.meta) > revisionOf(meta)) {
    if (journal.meta.conversation.id !== id) return { ok: false, problem: `${JOURNAL_FILE} describes conversation ${journal.meta.conversation.id}` };
    meta = journal.meta;
  }

  // Segments whose counts meta.json vouches for, and which need no reading now.
  const known = meta.segments ?? [];
  const trusted = segmentTotal > fullCheckSegments && known.length > 0 && known.length <= segmentTotal ? known.length - 1 : 0;
  const segmentCounts: number[] = known.slice(0, trusted);
  const ids = new Set<string>();
  let openRound: OpenCall[] = [];
  let roundClosed = false;
  let last: { segment: number; value: CachedSegment; records: readonly ConversationRecord[] } | null = null;
  const read = async (segment: number): Promise<readonly ConversationRecord[] | string> => {
    const name = segmentFileName(segment);
    const file = await readJsonFile<SegmentData>(join(dir, name), name, checkSegment);
    if (!file.ok) return file.problem;
    const records = journal && segment === journal.segment ? overlay(file.data.records, journal) : file.data.records;
    for (const record of records) {
      if (ids.has(record.id)) return `record id ${record.id} appears twice (in ${name})`;
      ids.add(record.id);
    }
    // The cache's measure of a segment: its file's size, or what the journal's records make it.
    const bytes = records === file.data.records ? file.bytes : recordsBytes(records) + records.length + 16;
    if (segment === segmentTotal - 1) last = { segment, value: { records, bytes }, records };
    return records;
  };

  for (let segment = trusted; segment < segmentTotal; segment++) {
    const records = await read(segment);
    if (typeof records === "string") return { ok: false, problem: records };
    for (const record of records) {
      if (isAssistantMessage(record)) {
        openRound = [];
        roundClosed = true;
      } else if (record.type === "tool_call") {
        openRound.push({ record, segment });
      }
    }
    segmentCounts.push(records.length);
  }
  // The open round may reach back into segments meta vouches for.
  for (let segment = trusted - 1; segment >= 0 && !roundClosed; segment--) {
    const records = await read(segment);
    if (typeof records === "string") return { ok: false, problem: records };
    if (records.length !== known[segment]) {
      return { ok: false, problem: `${segmentFileName(segment)} holds ${records.length} records, ${META_FILE} counts ${known[segment]}` };
    }
    const earlier: OpenCall[] = [];
    for (let i = records.length - 1; i >= 0 && !roundClosed; i--) {
      const record = records[i];
      if (isAssistantMessage(record)) roundClosed = true;
      else if (record.type === "tool_call") earlier.push({ record, segment });
    }
    openRound = [...earlier.reverse(), ...openRound];
  }

  const total = segmentCounts.reduce((sum, n) => sum + n, 0);
  const counted = meta.conversation.recordCount;
  if (total < counted) {
    return { ok: false, problem: `${META_FILE} counts ${plural(counted, "record")}, the segment files hold ${total}` };
  }
  const tail = last as { segment: number; value: CachedSegment; records: readonly ConversationRecord[] } | null;
  let conversation = meta.conversation;
  if (total !== counted) {
    // The crash came between a segment write and its meta write.
    const newest = tail?.records.at(-1)?.timestamp ?? conversation.updatedAt;
    conversation = {
      ...conversation,
      recordCount: total,
      updatedAt: newest > conversation.updatedAt ? newest : conversation.updatedAt,
    };
  }
  // Loaded here, not with the store: its schemas bring records.ts (and what it imports), which the start does not need.
  const { readRunState } = await import("./lowdb-run-state.js");
  return {
    ok: true,
    state: stateOf({
      meta: { conversation, seqReserved: meta.seqReserved, runState: readRunState(meta.runState) ?? undefined },
      segmentCounts,
      lastSegmentBytes: tail ? recordsBytes(tail.records) : 0,
      openRound,
    }),
    tail: tail && { segment: tail.segment, value: tail.value },
    metaBehind: total !== counted,
    journal,
    revision,
  };
}

export function isAssistantMessage(record: ConversationRecord): boolean {
  return record.type === "message" && record.role === "assistant";
}

export function jsonSize(value: unknown): number {
  return JSON.stringify(value)?.length ?? 0;
}

export function recordsBytes(records: readonly ConversationRecord[]): number {
  let sum = 0;
  for (const record of records) sum += jsonSize(record);
  return sum;
}
