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
    }
  | { ok: false; problem: string };

/**
 * Reads a conversation's files and decides whether they can be trusted.
 * Segments are read one at a time (validated, counted, scanned for the open
 * round) and dropped, except the last one, which the next append needs.
 * Content problems come back as a problem text; machine failures throw
 * StoreFileError.
 *
 * Segments are written before meta, so a crash can leave more records than
 * meta counts: normal, the segments win. Fewer means records were lost.
 */
export async function loadConversation(dir: string, id: string): Promise<LoadOutcome> {
  const metaRead = await readJsonFile<MetaData>(join(dir, META_FILE), META_FILE, checkMeta);
  if (!metaRead.ok) return metaRead;
  const meta = metaRead.data;
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

  const ids = new Set<string>();
  const segmentCounts: number[] = [];
  let openRound: OpenCall[] = [];
  let last: { segment: number; value: CachedSegment; records: readonly ConversationRecord[] } | null = null;
  for (let segment = 0; segment < numbers.length; segment++) {
    const name = segmentFileName(segment);
    const read = await readJsonFile<SegmentData>(join(dir, name), name, checkSegment);
    if (!read.ok) return read;
    const { records } = read.data;
    for (const record of records) {
      if (ids.has(record.id)) return { ok: false, problem: `record id ${record.id} appears twice (in ${name})` };
      ids.add(record.id);
      if (record.type === "message" && record.role === "assistant") openRound = [];
      else if (record.type === "tool_call") openRound.push({ record, segment });
    }
    segmentCounts.push(records.length);
    last = { segment, value: { records, bytes: read.bytes }, records };
  }

  const total = ids.size;
  const counted = meta.conversation.recordCount;
  if (total < counted) {
    return { ok: false, problem: `${META_FILE} counts ${plural(counted, "record")}, the segment files hold ${total}` };
  }
  let conversation = meta.conversation;
  if (total !== counted) {
    // The crash came between a segment write and its meta write.
    const newest = last!.records.at(-1)?.timestamp ?? conversation.updatedAt;
    conversation = {
      ...conversation,
      recordCount: total,
      updatedAt: newest > conversation.updatedAt ? newest : conversation.updatedAt,
    };
  }
  const lastSegmentBytes = last ? recordsBytes(last.records) : 0;
  return {
    ok: true,
    state: stateOf({ meta: { conversation, seqReserved: meta.seqReserved }, segmentCounts, lastSegmentBytes, openRound }),
    tail: last && { segment: last.segment, value: last.value },
    metaBehind: total !== counted,
  };
}

export function jsonSize(value: unknown): number {
  return JSON.stringify(value)?.length ?? 0;
}

export function recordsBytes(records: readonly ConversationRecord[]): number {
  let sum = 0;
  for (const record of records) sum += jsonSize(record);
  return sum;
}
