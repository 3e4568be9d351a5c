/**
 * A walk over part of the workspace as git would see it: `.git/` is never
 * entered, and `.gitignore` files — the workspace root's, those of the
 * directories above where the walk starts, and every nested one met on the
 * way — hide what they ignore, with git's precedence (a deeper file's rule,
 * including a `!negation`, overrides a shallower one; an ignored directory is
 * not entered, so nothing below it can be re-included). Symlinks are reported
 * but never followed: a walk cannot loop, or leave the workspace. Every
 * directory is opened and verified through workspace-open.ts before its
 * entries are read from the descriptor, so a directory swapped for a symlink
 * out while the walk runs is not listed (below the start it is skipped; the
 * start itself is refused).
 */
import { join, relative, sep } from "node:path";
import type { Ignore } from "ignore";
import type IgnoreFactory from "ignore";
import { importCommonJs } from "../../lazy-commonjs.js";
import { throwIfStopped } from "./file-tool-run.js";
import { openWorkspaceDirectory, readUpTo, type WorkspaceDirectory } from "./workspace-open.js";

/**
 * Most bytes of one .gitignore read; rules past it (from the last whole line
 * within it) are not applied. Real ones are a few KiB; the cap bounds a
 * .gitignore of 100 MB — and every rule costs time for every path tested.
 */
export const GITIGNORE_MAX_BYTES = 64 * 1024;

export type EntryKind = "file" | "dir" | "symlink" | "other";

export interface WalkEntry {
  kind: EntryKind;
  /** Workspace-relative, `/`-separated. */
  display: string;
  /** Relative to where the walk started, `/`-separated (what a glob is matched against). */
  fromStart: string;
  /** Absolute path on disk, as listed: open it through workspace-open.ts, which checks it still leads there. */
  real: string;
}

/** The rules of one .gitignore, and the directory (workspace-relative, "" for the root) they belong to. */
interface IgnoreLevel {
  dir: string;
  rules: Ignore;
}

/** Directories are walked depth first in name order, so a listing reads like a tree and is stable. */
export async function* walkWorkspace(root: string, start: string, signal: AbortSignal): AsyncGenerator<WalkEntry> {
  const startRel = toPosix(relative(root, start));
  const levels: IgnoreLevel[] = [];
  // Rules of the directories above the start apply below it too.
  const above = startRel === "" ? [] : startRel.split("/");
  for (let depth = 0; depth < above.length; depth++) {
    const dirRel = above.slice(0, depth).join("/");
    let dir: WorkspaceDirectory;
    try {
      dir = await openWorkspaceDirectory(join(root, ...above.slice(0, depth)), dirRel === "" ? "." : dirRel);
    } catch {
      continue; // Swapped or gone meanwhile: the start's own open decides whether the walk goes on.
    }
    try {
      const level = await loadRules(dir, dirRel);
      if (level) levels.push(level);
    } finally {
      await dir.close();
    }
  }
  yield* walkDirectory(root, startRel, startRel, levels, signal);
}

async function* walkDirectory(
  root: string,
  dirRel: string,
  startRel: string,
  inherited: IgnoreLevel[],
  signal: AbortSignal,
): AsyncGenerator<WalkEntry> {
  throwIfStopped(signal);
  const dirReal = dirRel === "" ? root : join(root, ...dirRel.split("/"));
  const isStart = dirRel === startRel;
  let dir: WorkspaceDirectory;
  try {
    dir = await openWorkspaceDirectory(dirReal, dirRel === "" ? "." : dirRel);
  } catch (error) {
    // The start was asked for: say why it cannot be listed. Below it, a directory that is
    // unreadable, gone or swapped for a symlink meanwhile has nothing to show.
    if (isStart) throw error;
    return;
  }
  let entries;
  let own: IgnoreLevel | null;
  try {
    entries = await dir.entries();
    throwIfStopped(signal);
    own = await loadRules(dir, dirRel);
  } catch (error) {
    if (isStart || signal.aborted) throw error;
    return;
  } finally {
    // Closed before anything is yielded: a deep tree does not hold a descriptor per level.
    await dir.close();
  }
  const levels = own ? [...inherited, own] : inherited;
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    throwIfStopped(signal);
    if (entry.name === ".git") continue;
    const kind: EntryKind = entry.isSymbolicLink() ? "symlink" : entry.isDirectory() ? "dir" : entry.isFile() ? "file" : "other";
    const display = dirRel === "" ? entry.name : `${dirRel}/${entry.name}`;
    if (isIgnored(levels, display, kind === "dir")) continue;
    const fromStart = startRel === "" ? display : display.slice(startRel.length + 1);
    yield { kind, display, fromStart, real: join(dirReal, entry.name) };
    if (kind === "dir") yield* walkDirectory(root, display, startRel, levels, signal);
  }
}

/**
 * The rules of the directory's .gitignore, read through the open directory:
 * only a regular file (a FIFO would block the read, /dev/zero would never
 * end), never through a symlink (git does not follow a symlinked .gitignore
 * in the working tree either), at most GITIGNORE_MAX_BYTES. A hard link is
 * accepted here: its text only decides which names are shown.
 */
async function loadRules(dir: WorkspaceDirectory, dirRel: string): Promise<IgnoreLevel | null> {
  let bytes: Buffer;
  try {
    const file = await dir.openFile(".gitignore", { allowHardLinks: true });
    try {
      bytes = await readUpTo(file.handle, GITIGNORE_MAX_BYTES + 1);
    } finally {
      await file.close();
    }
  } catch {
    return null; // None, or not one to read: no rules.
  }
  if (bytes.length > GITIGNORE_MAX_BYTES) bytes = bytes.subarray(0, bytes.lastIndexOf(10, GITIGNORE_MAX_BYTES - 1) + 1);
  // The ignore package (~14 KB) is loaded with the first .gitignore read, not with the server.
  const ignore = (await importCommonJs(import("ignore"))) as unknown as typeof IgnoreFactory;
  return { dir: dirRel, rules: ignore().add(bytes.toString("utf8")) };
}

/** git's verdict: the deepest .gitignore with a rule about the path decides. */
function isIgnored(levels: IgnoreLevel[], display: string, isDir: boolean): boolean {
  let ignored = false;
  for (const level of levels) {
    const rel = level.dir === "" ? display : display.slice(level.dir.length + 1);
    const verdict = level.rules.test(isDir ? `${rel}/` : rel);
    if (verdict.ignored) ignored = true;
    else if (verdict.unignored) ignored = false;
  }
  return ignored;
}

function toPosix(path: string): string {
  return sep === "/" ? path : path.split(sep).join("/");
}
