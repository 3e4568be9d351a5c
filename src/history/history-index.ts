/**
 * The index of other runtimes' sessions on this machine. Built at the first
 * history.* call (never on the start path: a home with thousands of
 * rollouts must not slow `agentwire serve`), from the cache of the last run
 * (index-cache.ts) for files unchanged since and by reading the others;
 * then kept current by a FolderWatcher per source. A changed file is read
 * again on its own; a file that cannot be read is a problem of its source,
 * never an error of the call. A source folder removed and made again is
 * another inode: each call notices it and watches the new one.
 */
import { readdir, readFile, stat } from "node:fs/promises";
import { homedir } from "node:os";
import { basename, join, relative, resolve, sep } from "node:path";
import type { HistoryConfig } from "../../protocol/config.js";
import { MAX_HISTORY_PROBLEMS, type HistoryProblem, type HistorySession, type HistorySource, type HistorySourceKind } from "../../protocol/history.js";
import type { Logger } from "../logging/logger.js";
import { parseClaudeTranscript } from "./claude-transcript.js";
import { parseCodexRollout } from "./codex-rollout.js";
import { FolderWatcher } from "./folder-watcher.js";
import type { ParsedSession } from "./history-items.js";
import { IndexCache, type CachedSession } from "./index-cache.js";

/** A change is read once the runtime has stopped writing for this long (it appends line by line). */
const SETTLE_MS = 40;
/** Files read at once while building. */
const READ_PARALLEL = 8;
/** The cache is written this long after the watcher's last change (a runtime writing a session changes it every few seconds). */
const SAVE_AFTER_MS = 5000;
/** Folders watched per source: Codex makes one a day, Claude Code one per project. */
const MAX_WATCHED_FOLDERS = 5000;

interface Root {
  kind: HistorySourceKind;
  path: string;
  exists: boolean;
  watcher: FolderWatcher | null;
  /** The watched folder's inode: a folder deleted and made again is another inode, whose watcher must be made anew. */
  ino: number | null;
  /** Problems by file, replaced when the file is read again. */
  problems: Map<string, string>;
  /** Sessions left out for history.maxSessions at the last scan. */
  overflow: number;
}

interface Indexed extends HistorySession {
  mtimeMs: number;
  size: number;
}

export class HistoryIndex {
  private readonly roots: Root[];
  private readonly byPath = new Map<string, Indexed>();
  private readonly byId = new Map<string, Indexed>();
  private built: Promise<void> | null = null;
  /** A source being scanned again (its folder appeared, or its watcher failed): concurrent calls wait for the one scan. */
  private readonly rescans = new Map<Root, Promise<void>>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /** Re-reads run one at a time, so two changes of one file never race. */
  private queue: Promise<void> = Promise.resolve();
  private closed = false;
  private readonly cache: IndexCache | null;
  /** What the cache file held at the build: a file whose mtime and size still match is not read again. */
  private remembered = new Map<string, CachedSession>();
  private saveTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly config: HistoryConfig,
    private readonly log: Logger,
    env: NodeJS.ProcessEnv = process.env,
    home: string = homedir(),
    /** Where the index is kept between runs (in server.dataDir); undefined: every run reads every file. */
    cacheFile?: string,
  ) {
    this.cache = cacheFile ? new IndexCache(cacheFile, log) : null;
    const codexHome = config.codexHome ?? env.CODEX_HOME ?? join(home, ".codex");
    const claudeProjects = config.claudeProjects ?? (env.CLAUDE_CONFIG_DIR ? join(env.CLAUDE_CONFIG_DIR, "projects") : join(home, ".claude", "projects"));
    const root = (kind: HistorySourceKind, path: string): Root => ({ kind, path: resolve(path), exists: false, watcher: null, ino: null, problems: new Map(), overflow: 0 });
    this.roots = [root("codex", join(codexHome, "sessions")), root("claude", claudeProjects)];
  }

  get enabled(): boolean {
    return this.config.enabled;
  }

  async sources(): Promise<HistorySource[]> {
    await this.ready();
    return this.roots.map((root) => {
      const problems: HistoryProblem[] = [...root.problems].map(([path, message]) => ({ path, message }));
      if (root.overflow > 0) problems.unshift({ path: root.path, message: `${root.overflow} older session${root.overflow === 1 ? "" : "s"} not indexed (history.maxSessions is ${this.config.maxSessions})` });
      let sessionCount = 0;
      for (const session of this.byPath.values()) if (session.source === root.kind) sessionCount++;
      return { kind: root.kind, path: root.path, exists: root.exists, sessionCount, problemCount: problems.length, problems: problems.slice(0, MAX_HISTORY_PROBLEMS) };
    });
  }

  /** Every indexed session, most recently updated first. */
  async sessions(): Promise<HistorySession[]> {
    await this.ready();
    return [...this.byPath.values()].sort(newestFirst).map(({ mtimeMs: _m, size: _s, ...session }) => session);
  }

  /**
   * The session with this id, read again whole for an import: undefined
   * when the index has none, `problem` when its file can no longer be read
   * within the bounds.
   */
  async read(id: string): Promise<{ session: HistorySession; parsed: ParsedSession } | { problem: string } | undefined> {
    await this.ready();
    const session = this.byId.get(id);
    if (!session) return undefined;
    const info = await stat(session.path).catch(() => undefined);
    if (!info?.isFile()) return { problem: `the session's file ${session.path} is gone` };
    if (info.size > this.config.maxFileBytes) return { problem: `the session's file has grown past history.maxFileBytes (${info.size} > ${this.config.maxFileBytes} bytes)` };
    const text = await readFile(session.path, "utf8").catch(() => undefined);
    if (text === undefined) return { problem: `the session's file ${session.path} cannot be read` };
    return { session, parsed: parseFile(session.source, session.path, text, this.config.maxLineBytes) };
  }

  close(): void {
    this.closed = true;
    if (this.saveTimer) clearTimeout(this.saveTimer);
    for (const root of this.roots) root.watcher?.close();
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  /** Built once; a source whose folder appeared since (or whose watcher failed) is scanned now. */
  private async ready(): Promise<void> {
    if (!this.config.enabled || this.closed) return;
    this.built ??= this.build();
    await this.built;
    for (const root of this.roots) {
      if (root.watcher && (await inodeOf(root.path)) !== root.ino) {
        // Removed (and perhaps made again) since it was watched: inotify does not follow a new folder of the same name.
        root.watcher.close();
        root.watcher = null;
      }
      if (root.watcher) continue;
      let rescan = this.rescans.get(root);
      if (!rescan) {
        rescan = (async () => {
          await this.scan(root);
        })().finally(() => this.rescans.delete(root));
        this.rescans.set(root, rescan);
      }
      await rescan;
    }
  }

  private async build(): Promise<void> {
    if (this.cache) this.remembered = await this.cache.load();
    await Promise.all(this.roots.map((root) => this.scan(root)));
    this.remembered.clear();
    await this.flush();
  }

  /** Writes the cache now (after the build, and a while after the watcher changed something). */
  async flush(): Promise<void> {
    if (this.saveTimer) clearTimeout(this.saveTimer);
    this.saveTimer = null;
    // Closed: the data dir may be on its way out (a test's, a server stopping); the next run reads what changed.
    if (!this.cache || this.closed) return;
    const entries: CachedSession[] = [];
    for (const session of this.byPath.values()) {
      const root = this.roots.find((r) => r.kind === session.source)!;
      const problem = root.problems.get(session.path);
      entries.push(problem ? { ...session, problem } : session);
    }
    await this.cache.save(entries);
  }

  private saveSoon(): void {
    if (!this.cache || this.saveTimer || this.closed) return;
    this.saveTimer = setTimeout(() => void this.flush(), SAVE_AFTER_MS).unref();
  }

  private async scan(root: Root): Promise<void> {
    root.exists = await isDirectory(root.path);
    if (!root.exists) {
      for (const session of [...this.byPath.values()]) if (session.source === root.kind) this.forget(session.path);
      root.problems.clear();
      root.overflow = 0;
      return;
    }
    // Watched before the walk: a file written during the walk is seen by one or the other.
    await this.watch(root);
    const files = await sessionFiles(root);
    const present = new Set(files);
    for (const session of [...this.byPath.values()]) if (session.source === root.kind && !present.has(session.path)) this.forget(session.path);
    const stats = (await Promise.all(files.map(async (path) => ({ path, info: await stat(path).catch(() => undefined) })))).filter((f) => f.info !== undefined);
    stats.sort((a, b) => b.info!.mtimeMs - a.info!.mtimeMs);
    const budget = Math.max(0, this.config.maxSessions - this.countOther(root.kind));
    root.overflow = Math.max(0, stats.length - budget);
    const kept = stats.slice(0, budget);
    for (let i = 0; i < kept.length; i += READ_PARALLEL) {
      await Promise.all(kept.slice(i, i + READ_PARALLEL).map(({ path }) => this.refresh(root, path)));
    }
  }

  private countOther(kind: HistorySourceKind): number {
    let n = 0;
    for (const session of this.byPath.values()) if (session.source !== kind) n++;
    return n;
  }

  private async watch(root: Root): Promise<void> {
    if (root.watcher) return;
    const watcher = new FolderWatcher(root.path, {
      // Claude Code: <project>/, and <project>/<session>/subagents/ for sub-agents' transcripts.
      maxDepth: root.kind === "codex" ? 4 : 3,
      maxFolders: MAX_WATCHED_FOLDERS,
      onFile: (path) => {
        if (isSessionFile(root, path)) this.schedule(root, path);
      },
      onRootError: (error) => {
        // The folder went away or the watch limit was hit: scanned and watched again at the next call.
        this.log.warn(`history: stopped watching ${root.path}`, error);
        watcher.close();
        if (root.watcher === watcher) root.watcher = null;
      },
    });
    try {
      const ino = await inodeOf(root.path);
      await watcher.start();
      root.watcher = watcher;
      root.ino = ino;
    } catch (error) {
      watcher.close();
      this.log.warn(`history: cannot watch ${root.path}; it is read again at each history.* call until it can be`, error);
    }
  }

  private schedule(root: Root, path: string): void {
    clearTimeout(this.timers.get(path));
    this.timers.set(
      path,
      setTimeout(() => {
        this.timers.delete(path);
        this.queue = this.queue
          .then(() => this.refresh(root, path))
          .then(() => this.saveSoon())
          .catch((error: unknown) => this.log.warn(`history: could not index ${path}`, error));
      }, SETTLE_MS).unref(),
    );
  }

  /** Reads one file again (or forgets it when it is gone), keeping the index within maxSessions. */
  private async refresh(root: Root, path: string): Promise<void> {
    if (this.closed) return;
    const info = await stat(path).catch(() => undefined);
    const known = this.byPath.get(path);
    if (!info?.isFile()) {
      this.forget(path);
      root.problems.delete(path);
      return;
    }
    if (known && known.mtimeMs === info.mtimeMs && known.size === info.size) return;
    const cached = this.remembered.get(path);
    if (cached && cached.source === root.kind && cached.mtimeMs === info.mtimeMs && cached.size === info.size) {
      const { problem, ...session } = cached;
      if (problem) root.problems.set(path, problem);
      else root.problems.delete(path);
      return this.add(session);
    }
    if (info.size > this.config.maxFileBytes) {
      this.forget(path);
      root.problems.set(path, `larger than history.maxFileBytes (${info.size} > ${this.config.maxFileBytes} bytes): not read`);
      return;
    }
    const text = await readFile(path, "utf8").catch((error: NodeJS.ErrnoException) => {
      root.problems.set(path, `cannot be read: ${error.code ?? error.message}`);
      return undefined;
    });
    if (text === undefined) return this.forget(path);
    const parsed = parseFile(root.kind, path, text, this.config.maxLineBytes);
    const problem = lineProblems(parsed);
    if (problem) root.problems.set(path, problem);
    else root.problems.delete(path);
    const fileTime = new Date(info.mtimeMs).toISOString();
    // A sub-agent's lines carry its parent's sessionId: its own id is its file's name.
    const subAgent = isSubAgentFile(root.kind, path);
    const sessionId = subAgent ? basename(path, ".jsonl") : (parsed.sessionId ?? fileSessionId(path));
    const parentSession = subAgent ? (parsed.sessionId ?? subAgentFolderSession(root, path)) : undefined;
    const session: Indexed = {
      id: `${root.kind}:${sessionId}`,
      ...(parentSession ? { parentId: `${root.kind}:${parentSession}` } : {}),
      source: root.kind,
      title: parsed.title,
      cwd: parsed.cwd,
      model: parsed.model,
      createdAt: parsed.createdAt ?? fileTime,
      updatedAt: parsed.updatedAt ?? fileTime,
      messageCount: parsed.messageCount,
      path,
      mtimeMs: info.mtimeMs,
      size: info.size,
    };
    this.add(session);
  }

  private add(session: Indexed): void {
    const { path } = session;
    this.forget(path);
    const clash = this.byId.get(session.id);
    // One id in two files (a copied rollout): the newer file speaks for it.
    if (clash && clash.mtimeMs > session.mtimeMs) return;
    if (clash) this.forget(clash.path);
    this.byPath.set(path, session);
    this.byId.set(session.id, session);
    if (this.byPath.size > this.config.maxSessions) this.evictOldest();
  }

  private forget(path: string): void {
    const known = this.byPath.get(path);
    if (!known) return;
    this.byPath.delete(path);
    if (this.byId.get(known.id) === known) this.byId.delete(known.id);
  }

  private evictOldest(): void {
    let oldest: Indexed | undefined;
    for (const session of this.byPath.values()) if (!oldest || session.mtimeMs < oldest.mtimeMs) oldest = session;
    if (!oldest) return;
    this.forget(oldest.path);
    const root = this.roots.find((r) => r.kind === oldest.source);
    if (root) root.overflow++;
  }
}

const newestFirst = (a: HistorySession, b: HistorySession) => (a.updatedAt === b.updatedAt ? (a.id < b.id ? -1 : 1) : a.updatedAt < b.updatedAt ? 1 : -1);

/**
 * Codex: any .jsonl under sessions/ (date folders). Claude Code:
 * <project>/<session>.jsonl, and sub-agents' transcripts: <project>/agent-<id>.jsonl
 * (before Claude Code 2.1.2) or <project>/<session>/subagents/agent-<id>.jsonl.
 */
function isSessionFile(root: Root, path: string): boolean {
  if (!path.endsWith(".jsonl")) return false;
  const parts = relative(root.path, path).split(sep);
  if (parts[0] === ".." || parts.length === 0) return false;
  if (root.kind === "codex") return true;
  return parts.length === 2 || (parts.length === 4 && parts[2] === "subagents" && basename(path).startsWith("agent-"));
}

function isSubAgentFile(kind: HistorySourceKind, path: string): boolean {
  return kind === "claude" && basename(path).startsWith("agent-");
}

/** The session a sub-agent's transcript in <project>/<session>/subagents/ belongs to, when its lines do not say. */
function subAgentFolderSession(root: Root, path: string): string | undefined {
  const parts = relative(root.path, path).split(sep);
  return parts.length === 4 ? parts[1] : undefined;
}

function parseFile(kind: HistorySourceKind, path: string, text: string, maxLineBytes: number): ParsedSession {
  return kind === "codex" ? parseCodexRollout(text, maxLineBytes) : parseClaudeTranscript(text, maxLineBytes, isSubAgentFile(kind, path));
}

async function sessionFiles(root: Root): Promise<string[]> {
  const entries = await readdir(root.path, { recursive: root.kind === "codex", withFileTypes: true }).catch(() => []);
  const files: string[] = [];
  if (root.kind === "codex") {
    for (const entry of entries) if (entry.isFile()) files.push(join(entry.parentPath ?? entry.path, entry.name));
  } else {
    for (const project of entries) {
      if (!project.isDirectory()) continue;
      const inner = await readdir(join(root.path, project.name), { withFileTypes: true }).catch(() => []);
      for (const entry of inner) {
        if (entry.isFile()) files.push(join(root.path, project.name, entry.name));
        else if (entry.isDirectory()) {
          // A session's folder: its sub-agents' transcripts (Claude Code 2.1.2 and later).
          const subagents = join(root.path, project.name, entry.name, "subagents");
          for (const agent of await readdir(subagents, { withFileTypes: true }).catch(() => [])) if (agent.isFile()) files.push(join(subagents, agent.name));
        }
      }
    }
  }
  return files.filter((path) => isSessionFile(root, path));
}

/** The session id in a file name: Claude Code's `<id>.jsonl`, Codex's `rollout-<time>-<uuid>.jsonl`. */
function fileSessionId(path: string): string {
  const name = basename(path, ".jsonl");
  return /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.exec(name)?.[0] ?? name;
}

function lineProblems(parsed: ParsedSession): string | undefined {
  const parts: string[] = [];
  const lines = (ns: number[]) => `${ns.slice(0, 5).join(", ")}${ns.length > 5 ? ", …" : ""}`;
  if (parsed.damaged.length > 0) parts.push(`${parsed.damaged.length} damaged line${parsed.damaged.length === 1 ? "" : "s"} (not JSON, or too long): ${lines(parsed.damaged)}`);
  if (parsed.unknown.length > 0) parts.push(`${parsed.unknown.length} line${parsed.unknown.length === 1 ? "" : "s"} of an unknown type: ${lines(parsed.unknown)}`);
  return parts.length > 0 ? parts.join("; ") : undefined;
}

async function inodeOf(path: string): Promise<number | null> {
  const info = await stat(path).catch(() => undefined);
  return info?.isDirectory() ? info.ino : null;
}

async function isDirectory(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isDirectory() ?? false;
}
