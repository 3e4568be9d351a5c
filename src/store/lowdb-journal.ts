import { close as fsClose, ftruncate, open as fsOpen, write as fsWrite } from "node:fs";
import { readFile } from "node:fs/promises";
import type { ConversationRecord } from "../../protocol/index.js";
import { checkMeta, segmentFileName, type MetaData } from "./lowdb-file-checks.js";
import { AppendError, fileWriter } from "./file-writer.js";
import { readJournalLines } from "./journal-lines.js";
import { asStoreFileError } from "./store-file-error.js";
import { removeFile } from "./remove-file.js";

/**
 * A conversation's journal: the changes since its last segment and meta.json
 * were written whole, one JSON line per store write, appended to one file.
 * A line (`{"segment":n,"records":[…],"meta":{…}}`) holds the records a
 * write appended to or replaced in the last segment, and the metadata after
 * it (meta.json's content, with its revision); lines of earlier versions
 * (`{"segment":n,"record":{…}}`) hold one replace.
 *
 * Why: rewriting a segment and meta.json is a temp file, its write and a
 * rename over the old file, each — four thread-pool round trips, and on ext4
 * the rename over an existing file starts the data's writeback
 * (auto_da_alloc: 0.5–1 ms of kernel time per file on the bench machine,
 * a turn's end cost two of them). An append to an open file is one write; it
 * is on disk as much as a renamed file is (in the page cache, no fsync). So
 * a turn's end (its assistant record, usage totals and run state), a tool
 * call's executing and completed states, a seq reservation are one line
 * each. The file exists while it holds lines, or once opened ahead of them
 * (prepareReplaces); emptying it removes it. It is bounded by the segment
 * bound: past it, the segment and meta.json are written whole and the
 * journal emptied (compaction), as before a new segment starts, before
 * records are taken back and when the store closes.
 *
 * Rules that keep a crash at any point readable as one of the states the
 * store acknowledged (the handle follows them):
 * - only the last segment is journaled, and the journal is emptied (that
 *   segment and meta.json written whole first) before a newer segment is
 *   started or records are taken back (conversation.rewind);
 * - when the journaled segment is written whole, the changes that write
 *   carries are journaled first and the journal is emptied after: a crash
 *   between leaves lines whose values are the segment's own, so applying
 *   them again changes nothing;
 * - every metadata write, to meta.json or to a line, carries a revision one
 *   higher than the last: load takes whichever is newer, so a meta.json
 *   written while the journal still holds lines (it had no room left, or
 *   could not be emptied) is not undone by an older line;
 * - load applies the lines in order over the last segment: a record it
 *   holds is replaced, one it does not hold is appended (a line of an
 *   earlier version that names no record of it is ignored, as then); a line
 *   naming another segment is damage; a last line a crash left half written
 *   is cut off, before anything is appended after it — one write is one
 *   line, so a write is in the journal whole or not at all.
 */
export const JOURNAL_FILE = "replaced.jsonl";

/**
 * Bytes the journals of all loaded conversations may hold at once (their
 * records are kept in memory, outside the segment cache, for reads of the
 * segment from disk): a line that would pass it goes to the files whole
 * instead, so memory stays bounded however many conversations are loaded.
 */
export class JournalBudget {
  used = 0;
  constructor(readonly limit: number) {}
}

/** What the journal holds, read at load or written since: all of one segment. */
export interface JournalContent {
  segment: number;
  /** The last value of each record the lines name. */
  records: Map<string, ConversationRecord>;
  /** Ids of the records named by lines that may append, in the order first named: those the segment file lacks are appended, in this order. */
  order: Set<string>;
  /** The metadata of the last line carrying one. */
  meta: MetaData | null;
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
  const read = await readJournalLines(path, JOURNAL_FILE);
  if (!read.ok) return read;
  if (read.lines === null) return { ok: true, content: null };
  const { lines, bytes } = read;
  const content: JournalContent = { segment: lastSegment, records: new Map(), order: new Set(), meta: null, bytes };
  for (const [i, line] of lines.entries()) {
    const entry = parseLine(line);
    if (typeof entry === "string") return { ok: false, problem: `${JOURNAL_FILE} is damaged: line ${i + 1} ${entry}` };
    if (entry.segment !== lastSegment) {
      return { ok: false, problem: `${JOURNAL_FILE} is damaged: line ${i + 1} changes ${segmentFileName(entry.segment)}, not the last segment` };
    }
    take(content, entry.records, entry.appends);
    if (entry.meta) content.meta = entry.meta;
  }
  return { ok: true, content: content.records.size > 0 || content.meta ? content : null };
}

interface Line {
  segment: number;
  records: ConversationRecord[];
  /** Whether a record the segment lacks is appended (lines of this version) or ignored (one-replace lines of earlier ones). */
  appends: boolean;
  meta: MetaData | null;
}

function parseLine(line: string): Line | string {
  let data: unknown;
  try {
    data = JSON.parse(line);
  } catch {
    return "is not valid JSON";
  }
  if (typeof data !== "object" || data === null) return "is not an object";
  const { segment, record, records, meta } = data as { segment?: unknown; record?: unknown; records?: unknown; meta?: unknown };
  if (!Number.isInteger(segment) || (segment as number) < 0) return "has no segment number";
  let metaData: MetaData | null = null;
  if (meta !== undefined) {
    const problem = checkMeta(meta);
    if (problem) return `has metadata that does not fit: ${problem}`;
    metaData = meta as MetaData;
  }
  if (records !== undefined) {
    if (!Array.isArray(records) || !records.every(hasId)) return "has records without an id";
    return { segment: segment as number, records, appends: true, meta: metaData };
  }
  if (!hasId(record)) return "has no record with an id";
  return { segment: segment as number, records: [record], appends: false, meta: metaData };
}

function hasId(record: unknown): record is ConversationRecord {
  return typeof record === "object" && record !== null && typeof (record as { id?: unknown }).id === "string";
}

function take(content: Pick<JournalContent, "records" | "order">, records: readonly ConversationRecord[], appends: boolean): void {
  for (const record of records) {
    // A Set keeps the order ids were first added in.
    if (appends) content.order.add(record.id);
    content.records.set(record.id, record);
  }
}

/**
 * The segment's records as the journal leaves them: the file's records with
 * the journal's values in place of those it replaced, then the records it
 * appended that the file lacks, in order.
 */
export function overlay(records: readonly ConversationRecord[], journal: Pick<JournalContent, "records" | "order">): ConversationRecord[] {
  if (journal.records.size === 0) return records as ConversationRecord[];
  const out = records.map((record) => journal.records.get(record.id) ?? record);
  if (journal.order.size === 0) return out;
  const inFile = new Set(records.map((record) => record.id));
  for (const id of journal.order) if (!inFile.has(id)) out.push(journal.records.get(id)!);
  return out;
}

/**
 * The handle's side of the journal: the open file, and what it holds (a
 * read of the segment from disk gets it laid over). One writer: the
 * handle's commit queue.
 */
export class ConversationJournal {
  /** The file's descriptor while it is held open (hold); a line alone opens and closes its own. */
  #fd: number | null = null;
  /** An open on its way (`hold` is called outside the commit queue): whatever removes or closes the file waits for it. */
  #opening: Promise<number> | null = null;
  /** A removal on its way: an open waits for it. */
  #removing: Promise<void> | null = null;
  #segment = -1;
  #records = new Map<string, ConversationRecord>();
  #order = new Set<string>();
  #meta: MetaData | null = null;
  #bytes = 0;
  /** A failed append could not be cut off: nothing more is appended until the journal is emptied. */
  #dirty = false;
  /** Opened ahead of a tool round's replaces (hold): stays open while lines ask to. */
  #held = false;

  constructor(
    readonly path: string,
    content: JournalContent | null,
    /**
     * Bytes past which a write goes to the segment and meta.json whole instead (and empties the
     * journal): the store's segment bound, since past it rewriting the segment costs less than the
     * journal holds (and bounds the journal's memory and its reading at load).
     */
    private readonly maxBytes: number,
    /** Shared by the store's journals; what load found counts against it too. */
    private readonly budget: JournalBudget,
  ) {
    if (content) {
      this.#segment = content.segment;
      this.#records = content.records;
      this.#order = content.order;
      this.#meta = content.meta;
      this.#bytes = content.bytes;
      budget.used += content.bytes;
    }
  }

  /** The segment the journal holds lines of; -1 when it is empty. */
  get segment(): number {
    return this.#bytes > 0 ? this.#segment : -1;
  }

  /** Whether it holds records (the segment file lacks their values). */
  get hasRecords(): boolean {
    return this.#records.size > 0;
  }

  /** The metadata of its last line carrying one (meta.json lacks it, or is newer). */
  get meta(): MetaData | null {
    return this.#meta;
  }

  get content(): Pick<JournalContent, "records" | "order"> {
    return { records: this.#records, order: this.#order };
  }

  /** Whether a line of `bytes` more bytes keeps it within its bound. */
  hasRoom(bytes: number): boolean {
    return !this.#dirty && this.maxBytes > 0 && this.#bytes + bytes <= this.maxBytes && this.budget.used + bytes <= this.budget.limit;
  }

  /** The line `append` would write: one store write. */
  static line(segment: number, records: readonly ConversationRecord[], meta: MetaData | null): string {
    return `${JSON.stringify(meta ? { segment, records, meta } : { segment, records })}\n`;
  }

  /**
   * Open the file ahead of lines that follow one another soon (a tool
   * round's replaces, LowdbConversationHandle.prepareReplaces), so each is
   * one write; it stays open while the lines written say more follow.
   * Rejects as fs.open does.
   */
  async hold(): Promise<void> {
    if (this.maxBytes === 0) return;
    this.#held = true;
    await this.#open();
  }

  #open(): Promise<number> {
    if (this.#fd !== null) return Promise.resolve(this.#fd);
    this.#opening ??= (async () => {
      try {
        // Not the file being removed: appends to it would land in no file.
        while (this.#removing) await this.#removing;
        const fd = await openFd(this.path);
        this.#fd = fd;
        return fd;
      } finally {
        this.#opening = null;
      }
    })();
    return this.#opening;
  }

  /** Close the file if it is held open (after an open on its way); the next line opens it again. */
  async close(): Promise<void> {
    while (this.#opening) await this.#opening.catch(() => undefined);
    const fd = this.#fd;
    this.#fd = null;
    this.#held = false;
    if (fd !== null) await closeFd(fd).catch(noop);
  }

  /**
   * Let go of the file and remove it; an open asked for meanwhile waits.
   * Rejects as rm does. Closed first: Windows keeps a removed file's name
   * taken while it is open, and the next round's open would fail.
   */
  async #remove(): Promise<void> {
    const removing = (async () => {
      await this.close();
      await removeFile(this.path);
    })();
    this.#removing = removing.then(noop, noop);
    try {
      await removing;
    } finally {
      this.#removing = null;
    }
  }

  /**
   * Append one line (`text`, from `line`, of these records and metadata);
   * resolves once written. A failed or short write is cut off again (the
   * file as before, and no file when the journal was empty) and rejects
   * with StoreFileError. A line opens the file, writes and closes it (on
   * the store's writer thread once it runs: file-writer.ts), unless the file
   * is held open (hold) and `keepOpen` (more lines follow soon: a tool
   * round's calls): a descriptor per loaded conversation would count
   * against the process's limit, and an open file keeps its file system
   * from being remounted read-only.
   */
  async append(segment: number, records: readonly ConversationRecord[], meta: MetaData | null, text: string, keepOpen: boolean): Promise<void> {
    const before = this.#bytes;
    const keep = keepOpen && this.#held;
    let length: number;
    if (this.#fd === null && this.#opening === null && !keep) {
      // A line alone: on the store's writer thread once it runs (file-writer.ts), else here with a descriptor of its own.
      const writer = fileWriter();
      const off = writer.append(this.path, text, before);
      length = Buffer.byteLength(text);
      try {
        await (off ?? writer.appendingHere(this.#appendOwn(text, before)));
      } catch (error) {
        if (error instanceof AppendError && !error.cutOff) this.#dirty = true;
        throw asStoreFileError(error instanceof AppendError ? error.failure : error, this.path, "could not be written");
      }
    } else {
      const data = Buffer.from(text);
      length = data.length;
      let fd: number | null = null;
      try {
        fd = await this.#open();
        const written = await writeFd(fd, data);
        if (written !== data.length) throw Object.assign(new Error(`short write to ${this.path} (${written} of ${data.length} bytes)`), { code: "ENOSPC" });
      } catch (error) {
        await this.#undo(before, fd);
        throw asStoreFileError(error, this.path, "could not be written");
      }
    }
    this.#segment = segment;
    this.#bytes += length;
    this.budget.used += length;
    take({ records: this.#records, order: this.#order }, records, true);
    if (meta) this.#meta = meta;
    if (!keep) await this.close();
  }

  /** A line's open, write and close on this thread; a failure is cut off again and rejects with AppendError. */
  async #appendOwn(text: string, before: number): Promise<void> {
    const data = Buffer.from(text);
    const fd = await openFd(this.path).catch((error: Error) => Promise.reject(new AppendError(error, true)));
    try {
      const written = await writeFd(fd, data);
      if (written !== data.length) throw Object.assign(new Error(`short write to ${this.path} (${written} of ${data.length} bytes)`), { code: "ENOSPC" });
    } catch (error) {
      let cutOff = true;
      if (before > 0) await truncateFd(fd, before).catch(() => (cutOff = false));
      await closeFd(fd).catch(noop);
      if (before === 0) await removeFile(this.path).catch(() => (cutOff = false));
      throw new AppendError(error as Error, cutOff);
    }
    await closeFd(fd).catch(noop);
  }

  /** Cut a failed append to the held-open file off again (an empty journal's file goes altogether: it is the same as none). */
  async #undo(length: number, fd: number | null): Promise<void> {
    if (fd === null) return;
    if (length === 0) {
      await this.#remove().catch(() => (this.#dirty = true));
      return;
    }
    await truncateFd(fd, length).catch(() => (this.#dirty = true));
  }

  /**
   * Empty it, once its segment and meta.json were written whole with every
   * value it held: the file goes (none is left between rounds, nor held
   * open). On failure (StoreFileError) it keeps its lines, which then hold
   * the segment's own values, and metadata no newer than meta.json's.
   */
  async clear(): Promise<void> {
    while (this.#opening) await this.#opening.catch(() => undefined);
    if (this.#bytes === 0 && !this.#dirty && this.#fd === null) return;
    try {
      await this.#remove();
    } catch (error) {
      throw asStoreFileError(error, this.path, "could not be removed");
    }
    this.#forget();
  }

  /** Let go of what it holds in memory (the handle is done with it; its file stays as it is). */
  release(): void {
    this.#forget();
  }

  #forget(): void {
    this.budget.used -= this.#bytes;
    this.#records = new Map();
    this.#order = new Set();
    this.#meta = null;
    this.#bytes = 0;
    this.#segment = -1;
    this.#dirty = false;
  }
}

/**
 * The newest metadata of a conversation whose files are not loaded: its
 * journal's last metadata line when that is newer than meta.json (a crash
 * left the journal), else `meta` itself. Reads only; a line it cannot parse
 * is passed over (load decides what the journal's damage means).
 */
export async function newestMeta(path: string, meta: MetaData): Promise<MetaData> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch {
    return meta;
  }
  const lines = text.split("\n");
  // The last piece is a half-written line or empty: never applied.
  lines.pop();
  for (let i = lines.length - 1; i >= 0; i--) {
    const entry = parseLine(lines[i]);
    if (typeof entry !== "string" && entry.meta) {
      const newer = revisionOf(entry.meta) > revisionOf(meta) && entry.meta.conversation.id === meta.conversation.id;
      return newer ? entry.meta : meta;
    }
  }
  return meta;
}

/** A metadata write's revision; files of earlier versions have none (0). */
export function revisionOf(meta: MetaData): number {
  return meta.revision ?? 0;
}

function noop(): void {}

/*
 * fs's callback calls, promised here: a line's open, write and close cost the main thread a third to a
 * half of what fs/promises' FileHandle costs (measured, 250 lines at once: ~8–26 µs a line against ~50).
 */
function openFd(path: string): Promise<number> {
  // "a": O_APPEND, every write lands at the end.
  return new Promise((resolve, reject) => fsOpen(path, "a", (error, fd) => (error ? reject(error) : resolve(fd))));
}

function writeFd(fd: number, data: Buffer): Promise<number> {
  return new Promise((resolve, reject) => fsWrite(fd, data, 0, data.length, null, (error, written) => (error ? reject(error) : resolve(written))));
}

function closeFd(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fsClose(fd, (error) => (error ? reject(error) : resolve())));
}

function truncateFd(fd: number, length: number): Promise<void> {
  return new Promise((resolve, reject) => ftruncate(fd, length, (error) => (error ? reject(error) : resolve())));
}
