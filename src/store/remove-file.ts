import { unlink } from "node:fs/promises";

/**
 * Removes a file; one that is not there counts as removed (fs.rm's `force`).
 * Files only: unlink fails on a directory. Not fs.rm, which checks its path
 * with an lstat before it unlinks, and whose first call loads Node's rimraf
 * module (~1.1 ms): a one-shot command paid that when its store closed.
 */
export async function removeFile(path: string): Promise<void> {
  await unlink(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== "ENOENT") throw error;
  });
}
