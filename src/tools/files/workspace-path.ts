/**
 * Confinement of file tool paths to the conversation's workspace.
 *
 * A path the model gives is resolved against the workspace and checked twice
 * before anything is read or written: lexically (no `..` or absolute path
 * that lands outside), then on disk, through `realpath`, so a symlink that
 * leads outside is refused too. A path that does not exist yet (a new file)
 * is judged by its nearest existing ancestor directory. Callers then open
 * the resolved real path through workspace-open.ts, which verifies that the
 * object opened is the one at that path: a path can change between this
 * check and the open (a directory swapped for a symlink), so this check alone
 * confines nothing.
 */
import { lstat, realpath } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { FileToolError } from "./file-tool-error.js";

export interface WorkspacePath {
  /** The workspace's real path. */
  root: string;
  /** The real path on disk (symlinks resolved), inside the workspace's real path. */
  real: string;
  /** The path relative to the workspace, with `/` separators, for messages and diffs ("." for the workspace itself). */
  display: string;
  /** Whether something exists at the path. */
  exists: boolean;
}

/** The workspace's real path; refuses a workspace that is missing or not a directory. */
export async function workspaceRoot(cwd: string): Promise<string> {
  if (!isAbsolute(cwd)) throw new FileToolError("the conversation's workspace is not an absolute path");
  let root: string;
  try {
    root = await realpath(cwd);
  } catch {
    throw new FileToolError("the conversation's workspace directory does not exist");
  }
  const info = await lstat(root);
  if (!info.isDirectory()) throw new FileToolError("the conversation's workspace is not a directory");
  return root;
}

/**
 * Resolves `input` (relative to the workspace, or absolute) to a path inside
 * it, or throws a FileToolError that says why not. Nothing is created.
 */
export async function resolveInWorkspace(cwd: string, input: string): Promise<WorkspacePath> {
  if (input.includes("\0")) throw new FileToolError("the path contains a NUL character");
  const root = await workspaceRoot(cwd);
  // The workspace as the client named it may itself go through a symlink;
  // an absolute path written either way is accepted.
  const lexical = resolve(cwd, input);
  const viaCwd = inside(cwd, lexical);
  const viaRoot = inside(root, lexical);
  if (viaCwd === null && viaRoot === null) {
    throw new FileToolError(`"${input}" is outside the conversation's workspace`);
  }
  const display = toDisplay((viaCwd ?? viaRoot)!);
  const onDisk = viaCwd !== null ? join(root, viaCwd) : lexical;

  const real = await realpathOrMissing(onDisk, input);
  if (real !== null) {
    if (inside(root, real) === null) throw new FileToolError(`"${input}" leads outside the conversation's workspace (through a symlink)`);
    return { root, real, display, exists: true };
  }
  // Nothing there. A dangling symlink would send a write wherever it points: refuse it.
  if (await isSymlink(onDisk)) {
    throw new FileToolError(`"${input}" is a symlink whose target does not exist; file tools do not write through it`);
  }
  // A new file: its nearest existing ancestor decides, and the missing rest is appended to that ancestor's real path.
  let ancestor = dirname(onDisk);
  let missing = [basename(onDisk)];
  for (;;) {
    const realAncestor = await realpathOrMissing(ancestor, input);
    if (realAncestor !== null) {
      if (inside(root, realAncestor) === null) {
        throw new FileToolError(`"${input}" leads outside the conversation's workspace (through a symlink)`);
      }
      return { root, real: join(realAncestor, ...missing), display, exists: false };
    }
    if (await isSymlink(ancestor)) {
      throw new FileToolError(`"${input}" goes through a symlink whose target does not exist`);
    }
    const parent = dirname(ancestor);
    if (parent === ancestor) throw new FileToolError(`"${input}" has no existing ancestor directory`);
    missing = [basename(ancestor), ...missing];
    ancestor = parent;
  }
}

/** `path` relative to `base` when it is `base` or below it, else null. */
function inside(base: string, path: string): string | null {
  const rel = relative(base, path);
  if (rel === "") return "";
  if (isAbsolute(rel) || rel === ".." || rel.startsWith(`..${sep}`)) return null;
  return rel;
}

function toDisplay(rel: string): string {
  return rel === "" ? "." : rel.split(sep).join("/");
}

/** `input` names the path in messages: the real one is a server path the model need not see. */
async function realpathOrMissing(path: string, input: string): Promise<string | null> {
  try {
    return await realpath(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return null;
    if (code === "ENOTDIR") throw new FileToolError(`a part of "${input}" is a file, not a directory`);
    if (code === "ELOOP") throw new FileToolError(`"${input}" goes through a loop of symlinks`);
    throw error;
  }
}

async function isSymlink(path: string): Promise<boolean> {
  try {
    return (await lstat(path)).isSymbolicLink();
  } catch {
    return false;
  }
}
