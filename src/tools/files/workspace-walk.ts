/**
 * A walk over part of the workspace as git would see it: `.git/` is never
 * entered, and `.gitignore` files — the workspace root's, those of the
 * directories above where the walk starts, and every nested one met on the
 * way — hide what they ignore, with git's precedence (a deeper file's rule,
 * including a `!negation`, overrides a shallower one; an ignored directory is
 * not entered, so nothing below it can be re-included). Symlinks are reported
 * but never followed: a walk cannot loop, or leave the workspace.
 */
import { readdir, readFile } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import ignore, { type Ignore } from "ignore";
import { throwIfStopped } from "./file-tool-run.js";

export type EntryKind = "file" | "dir" | "symlink" | "other";

export interface WalkEntry {
  kind: EntryKind;
  /** Workspace-relative, `/`-separated. */
  display: string;
  /** Relative to where the walk started, `/`-separated (what a glob is matched against). */
  fromStart: string;
  /** Absolute path on disk. */
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
    const dir = above.slice(0, depth).join("/");
    const level = await loadRules(join(root, ...above.slice(0, depth)), dir);
    if (level) levels.push(level);
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
  let entries;
  try {
    entries = await readdir(dirReal, { withFileTypes: true });
  } catch {
    return; // Unreadable (permissions) or gone meanwhile: nothing to show from it.
  }
  throwIfStopped(signal);
  const own = await loadRules(dirReal, dirRel);
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

async function loadRules(dirReal: string, dirRel: string): Promise<IgnoreLevel | null> {
  let text: string;
  try {
    text = await readFile(join(dirReal, ".gitignore"), "utf8");
  } catch {
    return null;
  }
  return { dir: dirRel, rules: ignore().add(text) };
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
