/**
 * The skills of a workspace as the `{{skills}}` placeholder needs them,
 * kept between model calls while file watches say nothing changed.
 *
 * Every model call of a `{{skills}}` prompt (the default template's) read
 * the skills directories before its request could leave: a thread-pool round
 * trip or more per call (issue 27). Here a discovery's result is kept once
 * every directory it depends on is watched, and dropped on the first event:
 * a skill added, removed or edited on disk is read fresh by the next call.
 *
 * What is watched, all without recursion: the workspace (for `.agentwire`),
 * `.agentwire` (for `skills`), the skills directory itself (folders come and
 * go), and each of its folders (its SKILL.md); the same chain under the
 * user's config directory. A path that does not exist yet is seen being
 * created by the watch on its parent. The watches are set before the
 * discovery that fills the cache reads anything, so a change made meanwhile
 * marks that result stale and it is not kept.
 *
 * Kept only where an event cannot be late or missing: on Linux (inotify
 * queues the event within the syscall that changes the file, so it is read
 * in the same event-loop turn as anything that happened after the change;
 * see `get`), on a local filesystem (inotify does not see another machine's
 * changes on NFS or SMB), with no symlinked SKILL.md (an edit to its target
 * is not an event of the folder). Anywhere else, and when a watch cannot be
 * set (no watches left, too many skill folders), every call reads the
 * directories as before. Bounded: MAX_WORKSPACES entries, each with at most
 * MAX_WATCHED_FOLDERS folder watches plus its chains; the oldest is closed
 * first. Watches do not keep the process alive.
 *
 * Filled only once a workspace's skills are asked for a second time: a
 * process that makes one model call (a one-shot `agentwire chat "…"`) sets
 * no watch and reads the folders once, not twice. Watches would not pay
 * there, and they cost its exit: a process that exits with inotify watches
 * set may wait in the kernel for their release (an RCU grace period; 10–20
 * ms in a share of exits here). Filled after the first call, the fill raced
 * the one-shot's exit: in one alternated set of 20 one-shots, 13 ended 7–20
 * ms late, against none with the cache off.
 */
import { watch as fsWatch, type FSWatcher } from "node:fs";
import { lstat, readdir, realpath, statfs } from "node:fs/promises";
import { basename, dirname, join, relative, sep } from "node:path";
import { discoverSkills, SKILL_FILE, skillDirectories, type DiscoveredSkill } from "./discover-skills.js";

/** Workspaces (with their user directory) whose skills are kept at once; the least recently used goes first. */
export const MAX_WORKSPACES = 8;
/** Workspaces remembered as asked for once (the next ask fills the cache); the oldest is forgotten first. */
export const MAX_ASKED_ONCE = 64;
/** Skill folders watched per skills directory; a directory with more is read on every call. */
export const MAX_WATCHED_FOLDERS = 32;

/**
 * statfs `type` of filesystems whose changes are all local (inotify sees every one): ext2/3/4, xfs,
 * btrfs, tmpfs, overlayfs, zfs, f2fs, bcachefs, ramfs.
 */
const LOCAL_FILESYSTEMS = new Set([0xef53, 0x58465342, 0x9123683e, 0x01021994, 0x794c7630, 0x2fc12fc1, 0xf2f52010, 0xca451a4e, 0x858458f6]);

export type Skills = readonly Pick<DiscoveredSkill, "name" | "description">[];

export interface SkillsCacheOptions {
  /** Default: on Linux only (see the header). */
  enabled?: boolean;
  /** fs.watch; tests put one that fails here. */
  watch?: (path: string, listener: (event: string, filename: string | null) => void) => FSWatcher;
  /** Whether a path is on a filesystem whose every change inotify sees. */
  localFilesystem?: (path: string) => Promise<boolean>;
  /** For XDG_CONFIG_HOME (the user's skills directory); default process.env, as discoverSkills reads it. */
  env?: NodeJS.ProcessEnv;
}

interface Entry {
  skills: Skills | undefined;
  watchers: FSWatcher[];
  /** An event came (or a watch failed): the result may be out of date. */
  stale: boolean;
}

const defaultWatch = (path: string, listener: (event: string, filename: string | null) => void) =>
  fsWatch(path, { persistent: false }, listener);

async function onLocalFilesystem(path: string): Promise<boolean> {
  try {
    return LOCAL_FILESYSTEMS.has((await statfs(path)).type);
  } catch {
    return false;
  }
}

const discoverNames = async (workspace: string, env: NodeJS.ProcessEnv | undefined): Promise<Skills> =>
  (await discoverSkills({ workspace, env })).skills.map(({ name, description }) => ({ name, description }));

export class SkillsCache {
  private readonly entries = new Map<string, Entry>();
  /** Fills under way, by key (one at a time per key). */
  private readonly filling = new Map<string, Promise<void>>();
  /** Keys whose skills were read once and not kept: asked again, they are (see the header). */
  private readonly askedOnce = new Set<string>();
  private readonly enabled: boolean;
  private readonly watch: NonNullable<SkillsCacheOptions["watch"]>;
  private readonly localFilesystem: (path: string) => Promise<boolean>;
  private readonly env: NodeJS.ProcessEnv | undefined;

  constructor(options: SkillsCacheOptions = {}) {
    this.enabled = options.enabled ?? process.platform === "linux";
    this.watch = options.watch ?? defaultWatch;
    this.localFilesystem = options.localFilesystem ?? onLocalFilesystem;
    this.env = options.env;
  }

  /**
   * The workspace's skills: kept ones when nothing changed since they were
   * read, else `read()` (the caller's fresh discovery), after which the cache
   * is filled in the background for the next call.
   */
  async get(workspace: string, read: () => Promise<Skills>): Promise<Skills> {
    const key = this.key(workspace);
    const entry = this.entries.get(key);
    if (entry?.skills && !entry.stale) {
      // A change made before this call was asked for has its inotify event queued already; the event is
      // read in this turn's poll phase, which may run its callbacks after ours: let them run first.
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (!entry.stale) {
        this.entries.delete(key);
        this.entries.set(key, entry); // most recently used last
        return entry.skills;
      }
    }
    const skills = await read();
    if (this.enabled && !this.filling.has(key)) {
      if (entry || this.askedOnce.delete(key)) {
        const fill = this.fill(key, workspace).finally(() => this.filling.delete(key));
        this.filling.set(key, fill);
      } else {
        this.askedOnce.add(key);
        if (this.askedOnce.size > MAX_ASKED_ONCE) this.askedOnce.delete(this.askedOnce.values().next().value!);
      }
    }
    return skills;
  }

  /** Resolves when the fills under way have ended (tests). */
  async settled(): Promise<void> {
    while (this.filling.size > 0) await Promise.all(this.filling.values());
  }

  /** Watches open now, over every entry (tests). */
  get watchCount(): number {
    let count = 0;
    for (const entry of this.entries.values()) count += entry.watchers.length;
    return count;
  }

  /** Close every watch and forget every entry. */
  close(): void {
    for (const entry of this.entries.values()) this.drop(entry);
    this.entries.clear();
    this.askedOnce.clear();
  }

  /**
   * The workspace's skill directories, joined: what an entry is kept under. Asked on every model call,
   * so the last keys are kept by workspace, each with the variables the user's directory comes from
   * (XDG_CONFIG_HOME, else the home directory's .config: os.homedir() reads the process's HOME first).
   */
  private key(workspace: string): string {
    const xdg = (this.env ?? process.env).XDG_CONFIG_HOME;
    const home = process.env.HOME;
    const known = this.keys.get(workspace);
    if (known !== undefined && known.xdg === xdg && known.home === home) return known.key;
    const key = skillDirectories({ workspace, env: this.env }).map((d) => d.dir).join("\0");
    if (this.keys.size >= MAX_ASKED_ONCE) this.keys.clear();
    this.keys.set(workspace, { xdg, home, key });
    return key;
  }

  private readonly keys = new Map<string, { xdg: string | undefined; home: string | undefined; key: string }>();

  private drop(entry: Entry): void {
    entry.stale = true;
    for (const watcher of entry.watchers) watcher.close();
    entry.watchers.length = 0;
  }

  private async fill(key: string, workspace: string): Promise<void> {
    const old = this.entries.get(key);
    if (old) {
      this.drop(old);
      this.entries.delete(key);
    }
    const entry: Entry = { skills: undefined, watchers: [], stale: false };
    try {
      const kept = await this.watchAll(entry, workspace);
      if (!kept || entry.stale) return this.drop(entry);
      const skills = await discoverNames(workspace, this.env);
      // Read after every watch was set: an event since means it may already be out of date.
      if (entry.stale) return this.drop(entry);
      entry.skills = skills;
    } catch {
      return this.drop(entry);
    }
    this.entries.set(key, entry);
    for (const [oldest, evicted] of this.entries) {
      if (this.entries.size <= MAX_WORKSPACES) break;
      this.drop(evicted);
      this.entries.delete(oldest);
    }
  }

  /** Sets every watch the entry depends on; false when its skills cannot be kept (read them on every call). */
  private async watchAll(entry: Entry, workspace: string): Promise<boolean> {
    const onEvent = (wanted: string | undefined, self: string) => (_event: string, filename: string | null) => {
      // Only the name the chain goes on with matters (the workspace sees every edit at its top level), and the
      // watched path itself going (Linux names it by its own name then).
      if (wanted === undefined || filename === null || filename === wanted || filename === self) this.drop(entry);
    };
    const add = (path: string, wanted: string | undefined): boolean => {
      let watcher: FSWatcher;
      try {
        watcher = this.watch(path, onEvent(wanted, basename(path)));
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === "ENOENT" || code === "ENOTDIR") return false;
        throw error; // no watches left, or none possible here: not kept
      }
      watcher.on("error", () => this.drop(entry));
      entry.watchers.push(watcher);
      return true;
    };
    const [ownDir, userDir] = skillDirectories({ workspace, env: this.env });
    // The chain of each: its root (the workspace, the user's config directory), then down to the skills directory.
    for (const { dir, root } of [
      { dir: ownDir!.dir, root: workspace },
      { dir: userDir!.dir, root: dirname(dirname(userDir!.dir)) },
    ]) {
      const top = await nearestExisting(root);
      // A path reached through a symlink could be pointed elsewhere without an event; an unwatchable filesystem misses events.
      if (top === undefined || !(await this.localFilesystem(top))) return false;
      const steps = relative(top, dir).split(sep).filter((step) => step !== "");
      let path = top;
      let exists = true;
      for (const [i, step] of steps.entries()) {
        if (!add(path, step)) {
          if (i === 0) return false; // the top went since it was found: nothing would see it come back
          exists = false; // not there: its parent's watch sees it created
          break;
        }
        path = join(path, step);
      }
      if (!exists || !add(dir, undefined)) continue;
      let folders: string[];
      try {
        folders = (await readdir(dir, { withFileTypes: true }))
          .filter((e) => !e.name.startsWith(".") && (e.isDirectory() || e.isSymbolicLink()))
          .map((e) => e.name);
      } catch {
        return false;
      }
      if (folders.length > MAX_WATCHED_FOLDERS) return false;
      for (const folder of folders) {
        const folderPath = join(dir, folder);
        // A symlink to a file where a folder was expected is no skill; a folder gone meanwhile is an event of dir.
        if (!add(folderPath, SKILL_FILE)) continue;
        const file = await lstat(join(folderPath, SKILL_FILE)).catch(() => undefined);
        if (file?.isSymbolicLink()) return false;
      }
    }
    return true;
  }
}

/**
 * `path`, or its nearest ancestor that exists (a missing user config directory is watched for from its
 * parent); undefined when that one is reached through a symlink (or none can be read).
 */
async function nearestExisting(path: string): Promise<string | undefined> {
  for (let current = path; ; ) {
    const real = await realpath(current).catch((error: NodeJS.ErrnoException) => (error.code === "ENOENT" ? null : undefined));
    if (real !== null) return real === current ? current : undefined;
    const parent = dirname(current);
    if (parent === current) return undefined;
    current = parent;
  }
}

/** The cache `{{skills}}` reads through (prompt-values.ts). */
export const skillsCache = new SkillsCache();
