import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import type { Conversation, ConversationRecord } from "../../protocol/index.js";
import { isValidConversationId } from "./conversation-id.js";
import type { RunState } from "./conversation-store.js";
import type { ListEntry } from "./list-page.js";
import { asStoreFileError, errorCode, isTransientIoError } from "./store-file-error.js";

/**
 * The shapes of the lowdb store's files and the checks that decide whether a
 * file read from disk can be trusted. A file that fails a check makes its
 * conversation damaged; the problem texts name files by their base name only,
 * because they reach clients.
 */

export const INDEX_FILE = "index.json";
export const META_FILE = "meta.json";

export interface IndexData {
  /** parentConversationId: set for sub-agents, so conversation.list { parentConversationId } reads no meta.json to filter. */
  conversations: (ListEntry & { parentConversationId?: string })[];
}

export interface MetaData {
  version: 1;
  conversation: Conversation;
  seqReserved: number;
  /**
   * Records per segment file when this meta was written, so a long
   * conversation loads without reading every segment. Absent in files of
   * earlier versions.
   */
  segments?: number[];
  /** Last error, last generation's outcome, auto-confirm budget. Absent in files of earlier versions. */
  runState?: RunState;
  /**
   * One more with every metadata write, to meta.json or to a journal line
   * (lowdb-journal.ts): of the two, the higher is the newer. Absent (0) in
   * files of earlier versions.
   */
  revision?: number;
}

export interface SegmentData {
  records: ConversationRecord[];
}

const SEGMENT_NAME = /^records-(\d{6,})\.json$/;

export function segmentFileName(index: number): string {
  return `records-${String(index).padStart(6, "0")}.json`;
}

/** The segment number a file name stands for, or undefined for any other file. */
export function segmentNumber(name: string): number | undefined {
  const match = SEGMENT_NAME.exec(name);
  if (!match) return undefined;
  const n = Number(match[1]);
  // records-0000001.json would alias records-000001.json: not ours.
  return segmentFileName(n) === name ? n : undefined;
}

/** Segment files must be numbered 0..n-1: a gap means records were lost. */
export function checkSegmentNumbers(numbers: readonly number[]): string | null {
  const sorted = [...numbers].sort((a, b) => a - b);
  for (let i = 0; i < sorted.length; i++) {
    if (sorted[i] !== i) return `${segmentFileName(i)} is missing (segment files must be numbered without gaps)`;
  }
  return null;
}

export function checkIndex(data: unknown): string | null {
  if (!isObject(data) || !Array.isArray(data.conversations)) return "expected {conversations: [...]}";
  const seen = new Set<string>();
  for (const entry of data.conversations) {
    if (
      !isObject(entry) ||
      !isValidConversationId(entry.id) ||
      typeof entry.createdAt !== "string" ||
      (entry.parentConversationId !== undefined && !isValidConversationId(entry.parentConversationId))
    ) {
      return `bad entry ${JSON.stringify(entry)}`;
    }
    if (seen.has(entry.id)) return `conversation ${entry.id} is listed twice`;
    seen.add(entry.id);
  }
  return null;
}

export function checkMeta(data: unknown): string | null {
  if (!isObject(data) || !isObject(data.conversation)) return "expected {conversation: {...}, seqReserved}";
  if (typeof data.seqReserved !== "number" || !Number.isFinite(data.seqReserved)) return "seqReserved is not a number";
  const conversation = data.conversation;
  if (typeof conversation.id !== "string") return "conversation.id is not a string";
  if (typeof conversation.createdAt !== "string") return "conversation.createdAt is not a string";
  if (typeof conversation.updatedAt !== "string") return "conversation.updatedAt is not a string";
  const count = conversation.recordCount;
  if (typeof count !== "number" || !Number.isInteger(count) || count < 0) return "conversation.recordCount is not a count";
  if (!isObject(conversation.settings)) return "conversation.settings is not an object";
  if (data.revision !== undefined && !(Number.isSafeInteger(data.revision) && (data.revision as number) >= 0)) return "revision is not a count";
  const segments = data.segments;
  if (segments !== undefined) {
    if (!Array.isArray(segments) || !segments.every((n) => Number.isInteger(n) && n >= 0)) return "segments is not a list of counts";
    if (segments.reduce((sum: number, n: number) => sum + n, 0) !== count) return "segments do not add up to conversation.recordCount";
  }
  return null;
}

export function checkSegment(data: unknown): string | null {
  if (!isObject(data) || !Array.isArray(data.records)) return "expected {records: [...]}";
  for (const [i, record] of data.records.entries()) {
    if (!isObject(record) || typeof record.id !== "string") return `record ${i} has no id`;
    if (record.type === "message") continue;
    // A compaction's summary (conversation.compact): stored like a message, never part of a tool round.
    if (record.type === "compaction" && typeof record.summary === "string") continue;
    if (record.type === "reasoning" && typeof record.content === "string") continue;
    if (record.type !== "tool_call" || typeof record.toolCallId !== "string") {
      return `record ${i} is not a message, tool_call, compaction or reasoning record`;
    }
  }
  return null;
}

/** A JSON file as read from disk: its data, or why it cannot be trusted. */
export type JsonFileRead<T> = { ok: true; data: T; bytes: number } | { ok: false; missing: boolean; problem: string };

/**
 * Reads and checks one store file. Content problems (missing, not JSON,
 * wrong shape) are returned as a problem text; failures of the machine
 * (EMFILE, EIO, …) say nothing about the content and throw StoreFileError.
 */
export async function readJsonFile<T>(
  path: string,
  name: string,
  check: (data: unknown) => string | null,
): Promise<JsonFileRead<T>> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if (isTransientIoError(error)) throw asStoreFileError(error, path, "cannot be read");
    const code = errorCode(error);
    if (code === "ENOENT") return { ok: false, missing: true, problem: `${name} is missing` };
    return { ok: false, missing: false, problem: `${name} cannot be read (${code ?? "unknown error"})` };
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    return { ok: false, missing: false, problem: `${name} is not valid JSON (${(error as Error).message})` };
  }
  const problem = check(data);
  if (problem !== null) return { ok: false, missing: false, problem: `${name} is damaged: ${problem}` };
  return { ok: true, data: data as T, bytes: text.length };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The start-up check of one conversation, cheap enough for every one of a
 * large data dir: meta.json reads and fits, and the first segment exists
 * when meta counts records. Null when nothing is wrong (or the machine, not
 * the files, failed: that is no verdict).
 */
export async function quickCheckConversation(dir: string, id: string): Promise<string | null> {
  try {
    const meta = await readJsonFile<MetaData>(join(dir, META_FILE), META_FILE, checkMeta);
    if (!meta.ok) return meta.problem;
    if (meta.data.conversation.id !== id) return `${META_FILE} describes conversation ${meta.data.conversation.id}`;
    const count = meta.data.conversation.recordCount;
    if (count === 0) return null;
    const first = segmentFileName(0);
    try {
      await stat(join(dir, first));
    } catch (error) {
      if (isTransientIoError(error)) return null;
      return `${first} is missing but ${META_FILE} counts ${plural(count, "record")}`;
    }
    return null;
  } catch {
    return null;
  }
}

export function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}
