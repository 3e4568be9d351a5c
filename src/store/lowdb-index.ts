import { copyFile, readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { CommitQueue, settleGroup, type Queued } from "./commit-queue.js";
import { isValidConversationId } from "./conversation-id.js";
import { INDEX_FILE, META_FILE, checkIndex, checkMeta, readJsonFile, type IndexData, type MetaData } from "./lowdb-file-checks.js";
import { LowdbFile } from "./lowdb-file.js";
import { compareNewestFirst, type ListEntry } from "./list-page.js";
import { mapBounded } from "./bounded-map.js";
import { asStoreFileError } from "./store-file-error.js";

type IndexOp = { kind: "add"; id: string; createdAt: string; parent?: string } | { kind: "remove"; id: string };

/** One conversation as the index knows it: when it was created and, for a sub-agent, its parent. */
interface IndexEntry {
  createdAt: string;
  parent?: string;
}

/**
 * `index.json`: which conversations exist and when each was created (what
 * listing needs), rewritten on create and delete only. The in-memory copy is
 * what the file says: creates and deletes queued together share one write,
 * and are adopted only once it is on disk.
 */
export class ConversationIndex {
  readonly #file: LowdbFile<IndexData>;
  /** id → createdAt (and parent), as on disk. */
  #entries: Map<string, IndexEntry>;
  #sorted: ListEntry[] | null = null;
  /** Sorted children by parent id, built on demand (dropped on every change, like #sorted). */
  #children = new Map<string, ListEntry[]>();
  readonly #queue = new CommitQueue<IndexOp>((queue) => this.#step(queue));

  private constructor(file: LowdbFile<IndexData>, entries: Map<string, IndexEntry>) {
    this.#file = file;
    this.#entries = entries;
  }

  /**
   * Reads the index. A damaged one must not keep the server down: it is set
   * aside as `index.json.damaged-<time>` and rebuilt from the conversation
   * folders (a folder whose meta cannot be read is indexed all the same, with
   * the folder's mtime as creation time, so it can be listed as damaged and
   * deleted).
   */
  static async open(dataDir: string, warn: (message: string) => void): Promise<ConversationIndex> {
    const path = join(dataDir, INDEX_FILE);
    const file = new LowdbFile<IndexData>(path);
    const read = await readJsonFile<IndexData>(path, INDEX_FILE, checkIndex);
    if (read.ok) {
      const entries = read.data.conversations.map((e) => [e.id, { createdAt: e.createdAt, parent: e.parentConversationId }] as const);
      return new ConversationIndex(file, new Map(entries));
    }
    if (read.missing) return new ConversationIndex(file, new Map());

    const entries = await rebuild(join(dataDir, "conversations"));
    // Copied aside, then replaced in one rename: if anything fails on the way,
    // the damaged index is still where the next start will find (and rebuild) it.
    const aside = `${INDEX_FILE}.damaged-${new Date().toISOString().replace(/[:.]/g, "-")}`;
    try {
      await copyFile(path, join(dataDir, aside));
    } catch (error) {
      throw asStoreFileError(error, path, "is damaged and could not be set aside");
    }
    const index = new ConversationIndex(file, entries);
    await file.write(index.#data(entries));
    warn(`${read.problem}; set aside as ${aside} and rebuilt from ${entries.size} conversation folders`);
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

  /** Newest first (see compareNewestFirst). */
  sorted(): readonly ListEntry[] {
    this.#sorted ??= [...this.#entries].map(([id, { createdAt }]) => ({ id, createdAt })).sort(compareNewestFirst);
    return this.#sorted;
  }

  /** The sub-agents of `parent`, newest first. */
  children(parent: string): readonly ListEntry[] {
    let found = this.#children.get(parent);
    if (!found) {
      found = [...this.#entries]
        .filter(([, entry]) => entry.parent === parent)
        .map(([id, { createdAt }]) => ({ id, createdAt }))
        .sort(compareNewestFirst);
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

  async #step(queue: Queued<IndexOp>[]): Promise<void> {
    const group = queue.splice(0);
    const next = new Map(this.#entries);
    for (const { op } of group) {
      if (op.kind === "add") next.set(op.id, { createdAt: op.createdAt, ...(op.parent !== undefined ? { parent: op.parent } : {}) });
      else next.delete(op.id);
    }
    await settleGroup(group, () => this.#file.write(this.#data(next)), () => this.#adopt(next));
  }

  #adopt(entries: Map<string, IndexEntry>): void {
    this.#entries = entries;
    this.#sorted = null;
    this.#children.clear();
  }

  #data(entries: Map<string, IndexEntry>): IndexData {
    return {
      conversations: [...entries].map(([id, { createdAt, parent }]) => ({ id, createdAt, ...(parent !== undefined ? { parentConversationId: parent } : {}) })),
    };
  }
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
