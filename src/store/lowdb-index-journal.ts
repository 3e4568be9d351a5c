import { removeFile } from "./remove-file.js";
import { isValidConversationId } from "./conversation-id.js";
import { AppendError, appendLine } from "./file-writer.js";
import { readJournalLines } from "./journal-lines.js";
import { asStoreFileError } from "./store-file-error.js";

/**
 * The changes to index.json since it was last written whole, one JSON line
 * per index write (the creates and deletes queued together):
 * `{"changes":[{"add":ID,"createdAt":…,"parentConversationId"?:…},{"remove":ID}]}`.
 *
 * Why: index.json lists every conversation, so rewriting it for each create
 * and delete cost time in proportion to the conversations stored, on the
 * main thread (JSON.stringify) where every stream waits: measured with
 * 100,000 stored (8.7 MB), a conversation.create took 130 ms and held other
 * clients' requests ~100 ms. A line costs the same at 10 or 100,000.
 *
 * Rules that keep a crash at any point readable as a state the store
 * acknowledged (lowdb-index.ts follows them), as for a conversation's
 * journal (lowdb-journal.ts):
 * - a change is acknowledged once its line is written (page cache, no
 *   fsync), as a rewritten index.json was;
 * - index.json is written whole (with every change so far) before the
 *   journal is emptied, so a crash between leaves lines it already holds:
 *   applying a line again changes nothing (an add sets, a remove deletes);
 * - one write is one line, so a write's changes are there entirely or not
 *   at all: a last line a crash left half written is cut off at load, never
 *   applied; any other line that does not parse is damage (the index is then
 *   rebuilt from the conversation folders, as for a damaged index.json);
 * - an append that failed and could not be cut off again leaves the file
 *   "dirty": the next write is index.json whole, and the journal is removed.
 */
export const INDEX_JOURNAL_FILE = "index-changes.jsonl";

export type IndexChange = { kind: "add"; id: string; createdAt: string; parent?: string } | { kind: "remove"; id: string };

export type IndexJournalRead = { ok: true; changes: IndexChange[]; lines: number; bytes: number } | { ok: false; problem: string };

/** Reads the journal (none: no changes), cutting off a last line left without its newline. */
export async function readIndexJournal(path: string): Promise<IndexJournalRead> {
  const read = await readJournalLines(path, INDEX_JOURNAL_FILE);
  if (!read.ok) return read;
  const lines = read.lines ?? [];
  const changes: IndexChange[] = [];
  for (const [i, line] of lines.entries()) {
    const parsed = parseLine(line);
    if (typeof parsed === "string") return { ok: false, problem: `${INDEX_JOURNAL_FILE} is damaged: line ${i + 1} ${parsed}` };
    changes.push(...parsed);
  }
  return { ok: true, changes, lines: lines.length, bytes: read.bytes };
}

function parseLine(line: string): IndexChange[] | string {
  let data: unknown;
  try {
    data = JSON.parse(line);
  } catch {
    return "is not valid JSON";
  }
  const changes = (data as { changes?: unknown } | null)?.changes;
  if (!Array.isArray(changes) || changes.length === 0) return "has no changes";
  const out: IndexChange[] = [];
  for (const change of changes) {
    const { add, remove, createdAt, parentConversationId: parent } = (change ?? {}) as Record<string, unknown>;
    if (isValidConversationId(remove) && add === undefined) {
      out.push({ kind: "remove", id: remove });
    } else if (isValidConversationId(add) && typeof createdAt === "string" && (parent === undefined || isValidConversationId(parent))) {
      out.push({ kind: "add", id: add, createdAt, ...(parent !== undefined ? { parent } : {}) });
    } else {
      return `has a change that does not fit: ${JSON.stringify(change)}`;
    }
  }
  return out;
}

/** The changes as one journal line. */
export function indexJournalLine(changes: readonly IndexChange[]): string {
  const entries = changes.map((change) =>
    change.kind === "remove"
      ? { remove: change.id }
      : { add: change.id, createdAt: change.createdAt, ...(change.parent !== undefined ? { parentConversationId: change.parent } : {}) },
  );
  return `${JSON.stringify({ changes: entries })}\n`;
}

export class IndexJournal {
  #lines: number;
  #bytes: number;
  #dirty = false;

  constructor(
    readonly path: string,
    read: { lines: number; bytes: number } = { lines: 0, bytes: 0 },
  ) {
    this.#lines = read.lines;
    this.#bytes = read.bytes;
  }

  /** Lines written since index.json was last written whole. */
  get lines(): number {
    return this.#lines;
  }

  /** Whether the file may end in part of a failed line: the next write must be index.json whole. */
  get dirty(): boolean {
    return this.#dirty;
  }

  /** Appends the changes as one line; rejects with StoreFileError (the line cut off again when it could be). */
  async append(changes: readonly IndexChange[]): Promise<void> {
    const text = indexJournalLine(changes);
    try {
      await appendLine(this.path, text, this.#bytes);
    } catch (error) {
      if (error instanceof AppendError && !error.cutOff) this.#dirty = true;
      throw asStoreFileError(error instanceof AppendError ? error.failure : error, this.path, "could not be written");
    }
    this.#lines++;
    this.#bytes += Buffer.byteLength(text);
  }

  /** Removes the file, once index.json holds every change it carried; rejects with StoreFileError, leaving it dirty. */
  async clear(): Promise<void> {
    if (this.#lines === 0 && this.#bytes === 0 && !this.#dirty) return;
    try {
      await removeFile(this.path);
    } catch (error) {
      this.#dirty = true;
      throw asStoreFileError(error, this.path, "could not be removed");
    }
    this.#lines = 0;
    this.#bytes = 0;
    this.#dirty = false;
  }
}
