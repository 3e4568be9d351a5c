/**
 * Opening workspace paths so that the confinement check holds for the object
 * actually opened — the one primitive every file tool and file attachments
 * go through.
 *
 * Why: workspace-path.ts checks a *path* (realpath inside the workspace), but
 * a path is looked up again by every later system call. A process that
 * swaps a workspace directory for a symlink to outside (a rename exchange)
 * between the check and the open made the open land outside. So here the
 * object is opened first and judged afterwards:
 *
 * - Opened with O_NOFOLLOW (the last component is never a symlink; the path
 *   given is the checked real path, which had none), O_NONBLOCK (opening a
 *   FIFO never waits for a writer: a blocked open holds one of libuv's four
 *   threads, and four of them froze every store write of the server) and
 *   O_NOCTTY.
 * - Verified on the descriptor: /proc/self/fd/N names where the opened object
 *   really is (the kernel's path of the object, not a new lookup of the
 *   name); it must be exactly the path that was checked, or the open is
 *   refused. fstat then refuses anything but a regular file (or a directory,
 *   where one is asked for), and a regular file with more than one hard link
 *   unless allowed (another name of the same file may be outside).
 * - Everything after that goes through the descriptor: reads from the handle,
 *   a directory's entries through /proc/self/fd/N, and names inside a
 *   directory through /proc/self/fd/N/<name>. The kernel resolves that magic
 *   link to the opened directory itself, so /proc/self/fd/N/<name> works like
 *   openat(N, name): whatever the path names meanwhile, the name is looked up
 *   in the directory that was verified.
 *
 * Writes are made of the last point: a temporary file is created with
 * O_CREAT|O_EXCL|O_NOFOLLOW as /proc/self/fd/D/<temp> in the verified parent
 * directory D and renamed to /proc/self/fd/D/<name>. Both names are looked up
 * in D, the directory object, never through the workspace path again, so a
 * swap of any directory on the path after D was verified changes which
 * *name* D has, not where the temporary file or the rename go; and the
 * rename replaces <name> itself even if it became a symlink meanwhile (rename
 * never follows its last component). For the file to land outside, D itself
 * would have to be moved outside the workspace, which takes write access to a
 * directory outside — with that, nothing we do here matters.
 *
 * Without /proc (macOS), the descriptor is compared with what the path names
 * now (device and inode) and names are joined to the path: that narrows the
 * window but cannot close it. The server's platform, Linux, always has /proc.
 */
import { constants, existsSync, type Dirent, type Stats } from "node:fs";
import { lstat, mkdir, open, readdir, readlink, rename, unlink, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { FileToolError, rethrowFsError } from "./file-tool-error.js";

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK, O_NOCTTY, O_DIRECTORY } = constants;

const FILE_FLAGS = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;
const DIRECTORY_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK;
const CREATE_FLAGS = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;

export interface OpenFileOptions {
  /**
   * Accept a regular file with more than one hard link (config
   * `tools.files.allowHardLinks`). A hard link inside the workspace may be
   * another name of a file outside it, which no path check can see.
   */
  allowHardLinks: boolean;
}

/** A regular file of the workspace, open for reading, verified. */
export interface WorkspaceFile {
  handle: FileHandle;
  /** fstat of the descriptor. */
  size: number;
  /** Permission bits, kept when the file is rewritten. */
  mode: number;
  close(): Promise<void>;
}

/** Whether /proc/self/fd can name an open descriptor's object (Linux): looked at once. */
const PROC_FD = existsSync("/proc/self/fd");

/**
 * Opens the regular file at `path` — a real path already checked to be inside
 * the workspace — and verifies that the object opened is the one at that path.
 * `display` names it in messages.
 */
export async function openWorkspaceFile(path: string, display: string, options: OpenFileOptions): Promise<WorkspaceFile> {
  return openVerifiedFile(path, path, display, options);
}

/** Opens `target` (the path itself, or a name inside a verified directory) and checks it is the regular file at `expected`. */
async function openVerifiedFile(target: string, expected: string, display: string, options: OpenFileOptions): Promise<WorkspaceFile> {
  const handle = await openOrExplain(target, FILE_FLAGS, display);
  try {
    const info = await verify(handle, expected, display);
    if (!info.isFile()) throw notRegular(info, display);
    if (info.nlink > 1 && !options.allowHardLinks) {
      throw new HardLinkRefusal(
        `"${display}" has ${info.nlink} hard links: another name of the same file may be outside the workspace, so it is refused (set tools.files.allowHardLinks to allow hard-linked files)`,
      );
    }
    return { handle, size: info.size, mode: info.mode & 0o7777, close: () => handle.close().catch(() => {}) };
  } catch (error) {
    await handle.close().catch(() => {});
    throw error;
  }
}

/** Opens the directory at `path` (a real path checked to be inside the workspace), verified; see WorkspaceDirectory. */
export function openWorkspaceDirectory(path: string, display: string): Promise<WorkspaceDirectory> {
  return WorkspaceDirectory.open(path, display);
}

/**
 * Reads at most `limit` bytes from the start of an open file. Every read of a
 * workspace file is bounded: a file that grows, or claims a size it does not
 * have, costs no more than the limit.
 */
export async function readUpTo(handle: FileHandle, limit: number, signal?: AbortSignal): Promise<Buffer> {
  // Grown as the file turns out longer: a small file does not cost the limit's memory.
  let buffer = Buffer.allocUnsafe(Math.min(limit, 64 * 1024));
  let filled = 0;
  while (filled < limit) {
    if (signal?.aborted) throw signal.reason;
    if (filled === buffer.length) {
      const grown = Buffer.allocUnsafe(Math.min(limit, buffer.length * 2));
      buffer.copy(grown, 0, 0, filled);
      buffer = grown;
    }
    const asked = buffer.length - filled;
    const { bytesRead } = await handle.read(buffer, filled, asked, filled);
    filled += bytesRead;
    // A regular file reads short only at its end: no further read is needed to find it.
    if (bytesRead < asked) break;
  }
  return buffer.subarray(0, filled);
}

/** A directory of the workspace, open and verified; names inside it are reached through its descriptor. */
export class WorkspaceDirectory {
  private constructor(
    /** The real path it was verified to have. */
    readonly path: string,
    private readonly handle: FileHandle,
    private readonly viaProc: boolean,
    private readonly display: string,
  ) {}

  /** Opens the directory at `path` (a real path checked to be inside the workspace) and verifies it is the one opened. */
  static async open(path: string, display: string): Promise<WorkspaceDirectory> {
    return WorkspaceDirectory.openVerified(path, path, display);
  }

  private static async openVerified(target: string, expected: string, display: string): Promise<WorkspaceDirectory> {
    const handle = await openOrExplain(target, DIRECTORY_FLAGS, display);
    try {
      const info = await verify(handle, expected, display);
      if (!info.isDirectory()) throw new FileToolError(`"${display}" is not a directory`);
      return new WorkspaceDirectory(expected, handle, PROC_FD, display);
    } catch (error) {
      await handle.close().catch(() => {});
      throw error;
    }
  }

  /** `name` (one path component) looked up in this directory object, not through its path. */
  private child(name: string): string {
    if (name === "" || name === "." || name === ".." || name.includes("/") || name.includes("\0")) {
      throw new FileToolError(`"${name}" is not a single file name`);
    }
    return this.viaProc ? `/proc/self/fd/${this.handle.fd}/${name}` : join(this.path, name);
  }

  private childDisplay(name: string): string {
    return this.display === "." ? name : `${this.display}/${name}`;
  }

  /** What the directory holds (as readdir with file types), read from the opened directory. */
  async entries(): Promise<Dirent[]> {
    return readdir(this.viaProc ? `/proc/self/fd/${this.handle.fd}` : this.path, { withFileTypes: true });
  }

  /** Opens the regular file `name` in this directory, verified as openWorkspaceFile does. */
  openFile(name: string, options: OpenFileOptions, display = this.childDisplay(name)): Promise<WorkspaceFile> {
    return openVerifiedFile(this.child(name), join(this.path, name), display, options);
  }

  /** Opens the subdirectory `name` (not a symlink to one). */
  openDirectory(name: string, display = this.childDisplay(name)): Promise<WorkspaceDirectory> {
    return WorkspaceDirectory.openVerified(this.child(name), join(this.path, name), display);
  }

  /** Creates the subdirectory `name` if it is missing, and opens it. */
  async makeDirectory(name: string, display = this.childDisplay(name)): Promise<WorkspaceDirectory> {
    try {
      await mkdir(this.child(name));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") rethrowFsError(error, display);
    }
    return this.openDirectory(name, display);
  }

  /**
   * Creates the new file `name` here (it must not exist; never through a
   * symlink), open for writing, with `mode` (the umask applies).
   */
  async createFile(name: string, mode: number, display = this.childDisplay(name)): Promise<FileHandle> {
    const handle = await openOrExplain(this.child(name), CREATE_FLAGS, display, mode);
    if (!this.viaProc) {
      try {
        await verify(handle, join(this.path, name), display);
      } catch (error) {
        await handle.close().catch(() => {});
        throw error;
      }
    }
    return handle;
  }

  /** Renames `from` to `to`, both names in this directory (atomic; replaces `to`, never following it). */
  async rename(from: string, to: string): Promise<void> {
    await rename(this.child(from), this.child(to));
  }

  async remove(name: string): Promise<void> {
    await unlink(this.child(name));
  }

  async close(): Promise<void> {
    await this.handle.close().catch(() => {});
  }
}

/**
 * The directory at `path` (inside the workspace whose real path is `root`),
 * opened and verified, its missing ancestors below `root` created first —
 * each one inside the verified directory above it, never through a path that
 * could have been swapped meanwhile.
 */
export async function openOrMakeDirectory(root: string, path: string, display: string): Promise<WorkspaceDirectory> {
  try {
    return await WorkspaceDirectory.open(path, display);
  } catch (error) {
    if (!(error instanceof Missing) || !path.startsWith(root.endsWith("/") ? root : `${root}/`)) throw error;
  }
  const cut = path.lastIndexOf("/");
  const parent = await openOrMakeDirectory(root, path.slice(0, cut), display);
  try {
    return await parent.makeDirectory(path.slice(cut + 1), display);
  } finally {
    await parent.close();
  }
}

/** A regular file refused for having more than one hard link (search counts them apart). */
export class HardLinkRefusal extends FileToolError {}

/** Nothing at the path: the one open failure a caller may act on (create it). */
class Missing extends FileToolError {}

async function openOrExplain(target: string, flags: number, display: string, mode?: number): Promise<FileHandle> {
  try {
    return await open(target, flags, mode);
  } catch (error) {
    switch ((error as NodeJS.ErrnoException).code) {
      case "ENOENT":
        throw new Missing(`"${display}" does not exist`);
      case "ELOOP":
        // The checked path had no symlink left: this one appeared since, or a walk met it.
        throw new FileToolError(`"${display}" is a symlink (or was replaced by one while being opened); file tools do not follow it here`);
      case "ENOTDIR":
        throw new FileToolError(`"${display}" is not a directory (or a directory on its path was replaced while being opened)`);
      case "ENXIO":
        throw new FileToolError(`"${display}" is not a regular file`);
      default:
        return rethrowFsError(error, display);
    }
  }
}

/** fstat of the descriptor, after checking that the object opened is the one at `expected`. */
async function verify(handle: FileHandle, expected: string, display: string): Promise<Stats> {
  let same: boolean;
  let info: Stats;
  if (PROC_FD) {
    // The kernel's name for the object held; " (deleted)" is appended when it has none left.
    const [stats, actual] = await Promise.all([handle.stat(), readlink(`/proc/self/fd/${handle.fd}`).catch(() => null)]);
    info = stats;
    same = actual === expected;
  } else {
    info = await handle.stat();
    const named = await lstat(expected).catch(() => null);
    same = named !== null && named.dev === info.dev && named.ino === info.ino;
  }
  if (!same) {
    throw new FileToolError(`"${display}" was moved or replaced while being opened (its path no longer leads where it was checked); try again`);
  }
  return info;
}

function notRegular(info: Stats, display: string): FileToolError {
  if (info.isDirectory()) return new FileToolError(`"${display}" is a directory, not a regular file`);
  const kind = info.isFIFO()
    ? " (a FIFO)"
    : info.isSocket()
      ? " (a socket)"
      : info.isCharacterDevice()
        ? " (a character device)"
        : info.isBlockDevice()
          ? " (a block device)"
          : "";
  return new FileToolError(`"${display}" is not a regular file${kind}; only regular files are read or written`);
}
