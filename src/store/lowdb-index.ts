import { copyFile, readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { CommitQueue, settleGroup, type Queued } from "./commit-queue.js";
import { isValidConversationId } from "./conversation-id.js";
import { INDEX_FILE, META_FILE, checkIndex, checkMeta, readJsonFile, type IndexData, type MetaData } from "./lowdb-file-checks.js";
import { LowdbFile } from "./lowdb-file.js";
import { compareNewestFirst, type ListEntry } from "./list-page.js";
import { mapBounded } from "./bounded-map.js";
import { asStoreFileError } from "./store-file-error.js";

type IndexOp = { kind: "add"; id: string; createdAt: string } | { kind: "remove"; id: string };

/**
 * `index.json`: which conversations exist and when each was created (what
 * listing needs), rewritten on create and delete only. The in-memory copy is
 * what the file says: creates and deletes queued together share one write,
 * and are adopted only once it is on disk.
 */
export class ConversationIndex {
  readonly #file: LowdbFile<IndexData>;
  /** id → createdAt, as on disk. */
  #entries: Map<string, string>;
  #sorted: ListEntry[] | null = null;
  readonly #queue = new CommitQueue<IndexOp>((queue) => this.#step(queue));

  private constructor(file: LowdbFile<IndexData>, entries: Map<string, string>) {
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
    if (read.ok) return new ConversationIndex(file, new Map(read.data.conversations.map((e) => [e.id, e.createdAt])));
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
    this.#sorted ??= [...this.#entries].map(([id, createdAt]) => ({ id, createdAt })).sort(compareNewestFirst);
    return this.#sorted;
  }

  add(id: string, createdAt: string): Promise<void> {
    return this.#queue.push({ kind: "add", id, createdAt });
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
      if (op.kind === "add") next.set(op.id, op.createdAt);
      else next.delete(op.id);
    }
    await settleGroup(group, () => this.#file.write(this.#data(next)), () => this.#adopt(next));
  }

  #adopt(entries: Map<string, string>): void {
    this.#entries = entries;
    this.#sorted = null;
  }

  #data(entries: Map<string, string>): IndexData {
    return { conversations: [...entries].map(([id, createdAt]) => ({ id, createdAt })) };
  }
}

async function rebuild(conversationsDir: string): Promise<Map<string, string>> {
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
      const createdAt = meta.ok && meta.data.conversation.id === id ? meta.data.conversation.createdAt : info.mtime.toISOString();
      return [id, createdAt] as const;
    } catch (error) {
      throw asStoreFileError(error, dir, "cannot be read");
    }
  });
  return new Map(found.filter((entry) => entry !== null));
}
