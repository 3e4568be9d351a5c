import { open, readFile, rm, truncate, type FileHandle } from "node:fs/promises";
import type { ConversationRecord } from "../../protocol/index.js";
import { segmentFileName } from "./lowdb-file-checks.js";
import { asStoreFileError, errorCode, isTransientIoError } from "./store-file-error.js";

/**
 * A conversation's replace journal: record replaces of its last segment,
 * one JSON line each (`{"segment":n,"record":{…}}`), appended to one file
 * instead of rewriting the segment.
 *
 * Why: a tool call is replaced twice on its way (executing, then its
 * result), each time before anything else may happen. Rewriting the segment
 * is a temp file, its write and a rename over the old file — four thread-pool
 * round trips, and on ext4 the rename over an existing file starts the
 * data's writeback (auto_da_alloc: 0.2–0.3 ms against 0.05 ms for a rename
 * to a new name); ~0.8 ms per replace in the server on the bench machine.
 * An append to an open file is one write; it is on disk as much as a
 * renamed file is (in the page cache, no fsync). The file exists while it
 * holds lines, or once opened ahead of them (prepareReplaces); emptying it
 * removes it.
 *
 * Rules that keep a crash at any point readable as one of the states the
 * store acknowledged (the handle follows them):
 * - only the last segment is journaled, and the journal is emptied (that
 *   segment written whole first) before a newer segment is started or
 *   records are taken back (conversation.rewind);
 * - when the journaled segment is written whole (an append), the replaces
 *   that write carries are journaled first and the journal is emptied after:
 *   a crash between leaves lines whose values are the segment's own, so
 *   applying them again changes nothing;
 * - load applies the lines in order over the last segment (a record named
 *   by id; a line naming no record of it is ignored, one naming another
 *   segment is damage) and cuts off a last line a crash left half written,
 *   before anything is appended after it.
 */
export const JOURNAL_FILE = "replaced.jsonl";


/** What load found in the journal: the last value of each record it names, all of one segment. */
export interface JournalContent {
  segment: number;
  records: Map<string, ConversationRecord>;
  bytes: number;
}

export type JournalRead = { ok: true; content: JournalContent | null } | { ok: false; problem: string };

/**
 * Read a conversation's journal (none: null content). A last line without
 * its newline is what a crash mid-append leaves: it is cut off (the file is
 * truncated to the lines before it), never applied. Any other line that does
 * not parse, or names another segment than `lastSegment`, is damage.
 */
export async function readJournal(path: string, lastSegment: number): Promise<JournalRead> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if (errorCode(error) === "ENOENT") return { ok: true, content: null };
    if (isTransientIoError(error)) throw asStoreFileError(error, path, "cannot be read");
    return { ok: false, problem: `${JOURNAL_FILE} cannot be read (${errorCode(error) ?? "unknown error"})` };
  }
  const end = text.lastIndexOf("\n") + 1;
  const bytes = Buffer.byteLength(text.slice(0, end));
  if (end < text.length) {
    try {
      await truncate(path, bytes);
    } catch (error) {
      throw asStoreFileError(error, path, "could not be written");
    }
  }
  const records = new Map<string, ConversationRecord>();
  let segment = lastSegment;
  const lines = text.slice(0, end).split("\n");
  lines.pop();
  for (const [i, line] of lines.entries()) {
    const entry = parseLine(line);
    if (typeof entry === "string") return { ok: false, problem: `${JOURNAL_FILE} is damaged: line ${i + 1} ${entry}` };
    if (entry.segment !== lastSegment) {
      return { ok: false, problem: `${JOURNAL_FILE} is damaged: line ${i + 1} replaces a record of ${segmentFileName(entry.segment)}, not of the last segment` };
    }
    segment = entry.segment;
    records.set(entry.record.id, entry.record);
  }
  return { ok: true, content: records.size > 0 ? { segment, records, bytes } : null };
}

function parseLine(line: string): { segment: number; record: ConversationRecord } | string {
  let data: unknown;
  try {
    data = JSON.parse(line);
  } catch {
    return "is not valid JSON";
  }
  if (typeof data !== "object" || data === null) return "is not an object";
  const { segment, record } = data as { segment?: unknown; record?: unknown };
  if (!Number.isInteger(segment) || (segment as number) < 0) return "has no segment number";
  if (typeof record !== "object" || record === null || typeof (record as { id?: unknown }).id !== "string") return "has no record with an id";
  return { segment: segment as number, record: record as ConversationRecord };
}

/** Records of `records` with the journal's values in place of those it replaced. */
export function applyJournal(records: ConversationRecord[], journal: ReadonlyMap<string, ConversationRecord>): ConversationRecord[] {
  if (journal.size === 0) return records;
  return records.map((record) => journal.get(record.id) ?? record);
}

/**
 * The handle's side of the journal: the open file, and the records it holds
 * (a read of the segment from disk gets them laid over it). One writer: the
 * handle's commit queue.
 */
export class ReplaceJournal {
  #file: FileHandle | null = null;
  /** An open on its way (`open` is also called outside the commit queue): whatever removes or closes the file waits for it. */
  #opening: Promise<FileHandle> | null = null;
  /** A removal on its way: an open waits for it. */
  #removing: Promise<void> | null = null;
  #segment = -1;
  #records = new Map<string, ConversationRecord>();
  #bytes = 0;
  /** A failed append could not be cut off: nothing more is appended until the journal is emptied. */
  #dirty = false;

  constructor(
    readonly path: string,
    content: JournalContent | null,
    /**
     * Bytes past which a replace writes the segment whole instead (and empties the journal): the
     * store's segment bound, since past it rewriting the segment costs less than the journal holds
     * (and bounds the journal's memory and its reading at load).
     */
    private readonly maxBytes: number,
  ) {
    if (content) {
      this.#segment = content.segment;
      this.#records = content.records;
      this.#bytes = content.bytes;
    }
  }

  /** The segment the journal holds replaces of; -1 when it is empty. */
  get segment(): number {
    return this.#records.size > 0 ? this.#segment : -1;
  }

  get records(): ReadonlyMap<string, ConversationRecord> {
    return this.#records;
  }

  /** Whether `bytes` more bytes keep it within its bound. */
  hasRoom(bytes: number): boolean {
    return !this.#dirty && this.#bytes + bytes <= this.maxBytes;
  }

  /** The lines `append` would write for these records. */
  static lines(segment: number, records: Iterable<ConversationRecord>): string {
    let text = "";
    for (const record of records) text += `${JSON.stringify({ segment, record })}\n`;
    return text;
  }

  /**
   * Open the file before its first append, so that append is one write
   * (LowdbConversationHandle.prepareReplaces). Rejects as fs.open does.
   */
  open(): Promise<FileHandle> {
    if (this.#file) return Promise.resolve(this.#file);
    this.#opening ??= (async () => {
      try {
        // Not the file being removed: appends to it would land in no file.
        while (this.#removing) await this.#removing;
        // "a": O_APPEND, every write lands at the end.
        const file = await open(this.path, "a");
        this.#file = file;
        return file;
      } finally {
        this.#opening = null;
      }
    })();
    return this.#opening;
  }

  /** Close the file (after an open on its way); the next append opens it again. */
  async close(): Promise<void> {
    while (this.#opening) await this.#opening.catch(() => undefined);
    const file = this.#file;
    this.#file = null;
    await file?.close().catch(() => undefined);
  }

  /**
   * Let go of the file and remove it; an open asked for meanwhile waits.
   * Rejects as rm does. Closed first: Windows keeps a removed file's name
   * taken while it is open, and the next round's open would fail.
   */
  async #remove(): Promise<void> {
    while (this.#opening) await this.#opening.catch(() => undefined);
    const file = this.#file;
    this.#file = null;
    const removing = (async () => {
      await file?.close().catch(() => undefined);
      await rm(this.path, { force: true });
    })();
    this.#removing = removing.then(noop, noop);
    try {
      await removing;
    } finally {
      this.#removing = null;
    }
  }

  /**
   * Append the records' lines (`text`, from `lines`); resolves once written.
   * A failed or short write is cut off again (the file as before, and no
   * file when this append created it) and rejects with StoreFileError.
   */
  async append(segment: number, records: readonly ConversationRecord[], text: string): Promise<void> {
    const data = Buffer.from(text);
    const before = this.#bytes;
    const opened = this.#file === null && this.#opening === null;
    try {
      // Opened by the round's first replace (or ahead of it), closed when emptied.
      const file = await this.open();
      const { bytesWritten } = await file.write(data, 0, data.length);
      if (bytesWritten !== data.length) throw Object.assign(new Error(`short write to ${this.path} (${bytesWritten} of ${data.length} bytes)`), { code: "ENOSPC" });
    } catch (error) {
      await this.#undo(before, opened);
      throw asStoreFileError(error, this.path, "could not be written");
    }
    this.#segment = segment;
    this.#bytes += data.length;
    for (const record of records) this.#records.set(record.id, record);
  }

  /** Cut a failed append off again; a file it created goes altogether (an empty journal is the same as none). */
  async #undo(length: number, opened: boolean): Promise<void> {
    const file = this.#file;
    if (!file) return;
    if (opened && length === 0) {
      await this.#remove().catch(() => (this.#dirty = true));
      return;
    }
    await file.truncate(length).catch(() => (this.#dirty = true));
  }

  /**
   * Empty it, once its segment was written whole with every value it held:
   * the file goes (none is left between rounds, nor held open). On failure
   * (StoreFileError) it keeps its lines, which then hold the segment's own
   * values.
   */
  async clear(): Promise<void> {
    while (this.#opening) await this.#opening.catch(() => undefined);
    if (this.#bytes === 0 && !this.#dirty && this.#file === null) return;
    try {
      await this.#remove();
    } catch (error) {
      throw asStoreFileError(error, this.path, "could not be removed");
    }
    this.#records = new Map();
    this.#bytes = 0;
    this.#segment = -1;
    this.#dirty = false;
  }
}

function noop(): void {}
