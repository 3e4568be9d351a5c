/**
 * Watches a folder tree for session files: one non-recursive fs.watch per
 * folder, added as folders appear. Node 20's `recursive: true` on Linux is
 * emulated in JavaScript with one watcher per *file* and a synchronous walk
 * of the whole tree when it starts: for a Codex home with thousands of
 * rollouts that is thousands of inotify watches and a blocked event loop.
 * Runtimes write one folder per project (Claude Code) or per day (Codex),
 * so a watcher per folder is a few dozen or hundred. chokidar does the same
 * and more (polling, globbing) that this does not need.
 */
import { type FSWatcher, watch } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";

export interface FolderWatcherOptions {
  /** Folders below the root that are watched: 1 for <root>/<project>/, 3 for <root>/YYYY/MM/DD/. */
  maxDepth: number;
  /** Most folders watched at once (each holds an inotify watch). */
  maxFolders: number;
  /** A .jsonl file under a watched folder changed, appeared or went away. */
  onFile(path: string): void;
  /** The root's watcher failed (the folder was removed): the caller starts again later. */
  onRootError(error: Error): void;
}

export class FolderWatcher {
  private readonly watchers = new Map<string, FSWatcher>();
  private closed = false;

  constructor(
    private readonly root: string,
    private readonly options: FolderWatcherOptions,
  ) {}

  /** Watches the root and every folder under it (to maxDepth); files already there are not announced. */
  async start(): Promise<void> {
    await this.addTree(this.root, 0, false);
  }

  close(): void {
    this.closed = true;
    for (const watcher of this.watchers.values()) watcher.close();
    this.watchers.clear();
  }

  /**
   * Watches `dir`, then walks it: a folder that appears is walked once it is
   * watched, and what was written into it before the watch is announced
   * (mkdir -p a/b/c and a file in c may all happen before a's watcher runs).
   */
  private async addTree(dir: string, depth: number, announce: boolean): Promise<void> {
    if (this.closed || this.watchers.has(dir) || this.watchers.size >= this.options.maxFolders) return;
    // A name the watcher announced may be a file (Claude Code's agent-<id>.meta.json): fs.watch would watch it too.
    if (depth > 0 && !(await stat(dir).catch(() => undefined))?.isDirectory()) return;
    if (this.closed || this.watchers.has(dir)) return;
    try {
      const watcher = watch(dir, { persistent: false }, (_event, name) => {
        if (name === null || this.closed) return;
        const path = join(dir, name.toString());
        if (path.endsWith(".jsonl")) this.options.onFile(path);
        else if (depth < this.options.maxDepth) void this.addTree(path, depth + 1, true);
      });
      watcher.on("error", (error) => {
        watcher.close();
        this.watchers.delete(dir);
        if (dir === this.root) this.options.onRootError(error);
      });
      this.watchers.set(dir, watcher);
    } catch (error) {
      // Not a folder (a file without .jsonl), or gone already.
      if (dir === this.root) throw error;
      return;
    }
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory() && depth < this.options.maxDepth) await this.addTree(path, depth + 1, announce);
      else if (announce && entry.isFile() && entry.name.endsWith(".jsonl")) this.options.onFile(path);
    }
  }
}
