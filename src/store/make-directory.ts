import { mkdir, stat } from "node:fs/promises";
import { dirname, resolve } from "node:path";

/**
 * `mkdir -p` that always ends. Node's own recursive mkdir (`fs.mkdir(path,
 * { recursive: true })`, Node 20) answers ENOENT by creating the parent and
 * trying the child again; a parent that exists but cannot hold new entries
 * says ENOENT for ever (any path under /proc), so its C++ loop never returns:
 * the promise never settles and a libuv thread spins at full CPU (the sync
 * form freezes the event loop instead). `--data-dir /proc/x` hung the start.
 *
 * This walks only forward: find the deepest ancestor that exists, then create
 * each missing component once, in order; the first failure is the answer,
 * naming the path that could not be made and why (EPERM under /sys, ENOENT
 * under /proc, ENOTDIR below a file, EACCES, EROFS…).
 *
 * What it makes is the data dir and the folders in it, which hold conversations, the MCP
 * servers' definitions (with their env and headers) and conversation MCP servers' too: made
 * private to the user (0700), as ssh and gpg make theirs. A directory that exists keeps its mode.
 */
export async function makeDirectory(path: string): Promise<void> {
  const target = resolve(path);
  const missing: string[] = [];
  for (let dir = target; ; ) {
    const found = await stat(dir).then(
      (stats) => stats,
      (error: NodeJS.ErrnoException) => {
        if (error.code !== "ENOENT") throw error;
        return null;
      },
    );
    if (found) {
      if (!found.isDirectory()) throw notADirectory(dir);
      break;
    }
    const parent = dirname(dir);
    if (parent === dir) break; // the root itself is missing: let mkdir say why
    missing.push(dir);
    dir = parent;
  }
  for (const dir of missing.reverse()) {
    try {
      await mkdir(dir, { mode: 0o700 });
    } catch (error) {
      // Made meanwhile by someone else: fine if it is a directory now.
      if ((error as NodeJS.ErrnoException).code === "EEXIST" && (await stat(dir).catch(() => null))?.isDirectory()) continue;
      throw error;
    }
  }
}

function notADirectory(path: string): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(`ENOTDIR: not a directory, mkdir '${path}'`);
  error.code = "ENOTDIR";
  error.path = path;
  return error;
}
