import { copyFile, readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { CommitQueue, settleGroup, type Queued } from "./commit-queue.js";
import { isValidConversationId } from "./conversation-id.js";
import { INDEX_FILE, META_FILE, checkIndex, checkMeta, readJsonFile, type IndexData, type MetaData } from "./lowdb-file-checks.js";
import { LowdbFile } from "./lowdb-file.js";
import { INDEX_JOURNAL_FILE, IndexJournal, readIndexJournal, type IndexChange } from "./lowdb-index-journal.js";
import { compareNewestFirst, type ListEntry } from "./list-page.js";
import { mapBounded } from "./bounded-map.js";
import { asStoreFileError } from "./store-file-error.js";
import { removeFile } from "./remove-file.js";

/** A change, or (at a clean stop) a request to write index.json whole and empty the journal. */
type IndexOp = IndexChange | { kind: "compact" };

/**
 * The journal is written into index.json (and emptied) once it holds this
 * many lines, or a quarter as many as there are conversations when that is
 * more: what a start replays stays small next to index.json itself, and the
 * whole write (its JSON.stringify on the main thread grows with the
 * conversations stored) comes at most once per that many creates and deletes.
 */
export const INDEX_JOURNAL_MIN_LINES = 1024;

/** One conversation as the index knows it: when it was created and, for a sub-agent, its parent. */
interface IndexEntry {
  createdAt: string;
  parent?: string;
}

/**
 * `index.json`: which conversations exist and when each was created (what
 * listing needs), with the creates and deletes since it was last written
 * whole in its journal (lowdb-index-journal.ts). The in-memory copy is what
 * the files say: creates and deletes queued together share one write (a
 * journal line, or index.json whole when the journal is full), and are
 * adopted only once it is on disk.
 */
export class ConversationIndex {
  readonly #file: LowdbFile<IndexData>;
  readonly #journal: IndexJournal;
  /** id → createdAt (and parent), as on disk. */
  readonly #entries: Map<string, IndexEntry>;
  /** Every entry, newest first: built on the first list, then kept up to date by each change. */
  #sorted: ListEntry[] | null = null;
  /** Sorted children by parent id, each built on its first list, then kept up to date like #sorted. */
  readonly #children = new Map<string, ListEntry[]>();
  readonly #queue = new CommitQueue<IndexOp>((queue) => this.#step(queue));

  private constructor(
    file: LowdbFile<IndexData>,
    journal: IndexJournal,
    entries: Map<string, IndexEntry>,
    private readonly warn: (message: string) => void,
  ) {
    this.#file = file;
    this.#journal = journal;
    this.#entries = entries;
  }

  /**
   * Reads the index: index.json, then its journal's changes over it. A
   * damaged one must not keep the server down: the damaged file is set aside
   * as `<name>.damaged-<time>` and the index rebuilt from the conversation
   * folders (a folder whose meta cannot be read is indexed all the same, with
   * the folder's mtime as creation time, so it can be listed as damaged and
   * deleted).
   */
  static async open(dataDir: string, warn: (message: string) => void): Promise<ConversationIndex> {
    const path = join(dataDir, INDEX_FILE);
    const journalPath = join(dataDir, INDEX_JOURNAL_FILE);
    const file = new LowdbFile<IndexData>(path);
    const read = await readJsonFile<IndexData>(path, INDEX_FILE, checkIndex);
    const changes = read.ok || read.missing ? await readIndexJournal(journalPath) : null;
    if ((read.ok || read.missing) && changes?.ok) {
      const entries = new Map<string, IndexEntry>();
      if (read.ok) for (const e of read.data.conversations) entries.set(e.id, entryOf(e.createdAt, e.parentConversationId));
      for (const change of changes.changes) apply(entries, change);
      return new ConversationIndex(file, new IndexJournal(journalPath, changes), entries, warn);
    }

    const entries = await rebuild(join(dataDir, "conversations"));
    // Copied aside, then replaced in one rename: if anything fails on the way,
    // the damaged file is still where the next start will find (and rebuild) it.
    const [damagedPath, damagedName, problem] = !read.ok && !read.missing ? [path, INDEX_FILE, read.problem] : [journalPath, INDEX_JOURNAL_FILE, (changes as { problem: string }).problem];
    const aside = `${damagedName}.damaged-${new Date().toISOString().replace(/[:.]/g, "-")}`;
    try {
      await copyFile(damagedPath, join(dataDir, aside));
    } catch (error) {
      throw asStoreFileError(error, damagedPath, "is damaged and could not be set aside");
    }
    const index = new ConversationIndex(file, new IndexJournal(journalPath), entries, warn);
    await file.write(index.#data(entries));
    // The folders are the whole index: a journal (damaged or not) has nothing to add once index.json is rewritten from them.
    try {
      await removeFile(journalPath);
    } catch (error) {
      throw asStoreFileError(error, journalPath, "could not be removed");
    }
    warn(`${problem}; set aside as ${aside} and rebuilt from ${entries.size} conversation folders`);
    return index;
  }

  has(id: string): boolean {
    return this.#entries.has(id);
  }

  get size(): number {
    return this.#entries.size;
  }

  ids(): string[] {
    return [...this.#entries.keys()];
  }

  /** Newest first (see compareNewestFirst). Read it at once: the next change updates it in place. */
  sorted(): readonly ListEntry[] {
    this.#sorted ??= this.#list(() => true).sort(compareNewestFirst);
    return this.#sorted;
  }

  /** The sub-agents of `parent`, newest first. */
  children(parent: string): readonly ListEntry[] {
    let found = this.#children.get(parent);
    if (!found) {
      found = this.#list((entry) => entry.parent === parent).sort(compareNewestFirst);
      this.#children.set(parent, found);
    }
    return found;
  }

  add(id: string, createdAt: string, parent?: string): Promise<void> {
    return this.#queue.push({ kind: "add", id, createdAt, ...(parent !== undefined ? { parent } : {}) });
  }

  remove(id: string): Promise<void> {
    return this.#queue.push({ kind: "remove", id });
  }

  /** Resolves once every queued change is settled. */
  idle(): Promise<void> {
    return this.#queue.idle();
  }

  /**
   * At a clean stop: index.json written whole and the journal emptied, so the
   * data dir is index.json alone again (what versions before the journal read).
   * Settles every queued change first; a failure is logged, not thrown: the
   * journal still holds what index.json lacks, and the next start reads it.
   */
  async close(): Promise<void> {
    try {
      await this.#queue.push({ kind: "compact" });
    } catch (error) {
      this.warn(`the conversation index's changes could not be written into ${INDEX_FILE} at stop (${(error as Error).message}); ${INDEX_JOURNAL_FILE} keeps them`);
    }
  }

  async #step(queue: Queued<IndexOp>[]): Promise<void> {
    const group = queue.splice(0);
    const changes = group.flatMap(({ op }) => (op.kind === "compact" ? [] : [op]));
    const journal = this.#journal;
    const whole =
      journal.dirty ||
      (changes.length === 0 ? journal.lines > 0 : journal.lines >= Math.max(INDEX_JOURNAL_MIN_LINES, Math.ceil(this.#entries.size / 4)));
    if (!whole) {
      if (changes.length === 0) return settleGroup(group, async () => {}, () => {});
      return settleGroup(group, () => journal.append(changes), () => this.#apply(changes));
    }
    const next = new Map(this.#entries);
    for (const change of changes) apply(next, change);
    let written = false;
    await settleGroup(
      group,
      () => this.#file.write(this.#data(next)),
      () => {
        written = true;
        this.#apply(changes);
      },
    );
    // index.json now holds every line: emptying the journal may fail (it stays dirty, and the next write is whole again).
    if (written) await journal.clear().catch((error: Error) => this.warn(error.message));
  }

  /** Adopts changes that are on disk, keeping the sorted lists up to date rather than sorting every entry again. */
  #apply(changes: readonly IndexChange[]): void {
    for (const change of changes) {
      const before = this.#entries.get(change.id);
      if (before) {
        const entry = { id: change.id, createdAt: before.createdAt };
        if (this.#sorted) removeSorted(this.#sorted, entry);
        const siblings = before.parent !== undefined ? this.#children.get(before.parent) : undefined;
        if (siblings) removeSorted(siblings, entry);
      }
      apply(this.#entries, change);
      if (change.kind === "add") {
        const entry = { id: change.id, createdAt: change.createdAt };
        if (this.#sorted) insertSorted(this.#sorted, entry);
        const siblings = change.parent !== undefined ? this.#children.get(change.parent) : undefined;
        if (siblings) insertSorted(siblings, { ...entry });
      }
    }
  }

  /**
   * The entries `keep` picks, as list entries. Through forEach: spreading the map makes an
   * [id, entry] array per entry first (with 100,000 stored, 50 ms against 7 to build the list).
   */
  #list(keep: (entry: IndexEntry) => boolean): ListEntry[] {
    const out: ListEntry[] = [];
    this.#entries.forEach((entry, id) => {
      if (keep(entry)) out.push({ id, createdAt: entry.createdAt });
    });
    return out;
  }

  #data(entries: Map<string, IndexEntry>): IndexData {
    const conversations: IndexData["conversations"] = [];
    entries.forEach(({ createdAt, parent }, id) => {
      conversations.push(parent !== undefined ? { id, createdAt, parentConversationId: parent } : { id, createdAt });
    });
    return { conversations };
  }
}

function entryOf(createdAt: string, parent: string | undefined): IndexEntry {
  return parent !== undefined ? { createdAt, parent } : { createdAt };
}

function apply(entries: Map<string, IndexEntry>, change: IndexChange): void {
  if (change.kind === "add") entries.set(change.id, entryOf(change.createdAt, change.parent));
  else entries.delete(change.id);
}

/** Where `entry` is, or belongs, in a newest-first list (binary search). */
function position(sorted: readonly ListEntry[], entry: ListEntry): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareNewestFirst(sorted[mid]!, entry) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function insertSorted(sorted: ListEntry[], entry: ListEntry): void {
  sorted.splice(position(sorted, entry), 0, entry);
}

function removeSorted(sorted: ListEntry[], entry: ListEntry): void {
  const at = position(sorted, entry);
  if (at < sorted.length && compareNewestFirst(sorted[at]!, entry) === 0) sorted.splice(at, 1);
}

async function rebuild(conversationsDir: string): Promise<Map<string, IndexEntry>> {
  let names: string[];
  try {
    names = await readdir(conversationsDir);
  } catch (error) {
    throw asStoreFileError(error, conversationsDir, "cannot be listed");
  }
  const found = await mapBounded(names.filter(isValidConversationId), 16, async (id) => {
    const dir = join(conversationsDir, id);
    try {
      const info = await stat(dir);
      if (!info.isDirectory()) return null;
      const meta = await readJsonFile<MetaData>(join(dir, META_FILE), META_FILE, checkMeta);
      const ok = meta.ok && meta.data.conversation.id === id;
      const createdAt = ok ? meta.data.conversation.createdAt : info.mtime.toISOString();
      const parent = ok ? meta.data.conversation.parentConversationId : undefined;
      return [id, { createdAt, ...(typeof parent === "string" && isValidConversationId(parent) ? { parent } : {}) }] as const;
    } catch (error) {
      throw asStoreFileError(error, dir, "cannot be read");
    }
  });
  return new Map(found.filter((entry) => entry !== null));
}
