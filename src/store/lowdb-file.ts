import { basename, dirname, join } from "node:path";
import { replaceFile } from "./file-writer.js";
import { asStoreFileError } from "./store-file-error.js";

/**
 * One store file, written as lowdb's JSON adapter wrote it (JSON with
 * two-space indentation; temp file `.<name>.tmp`, then rename, so a reader
 * or a crash sees the old file or the new one, never half of one). The
 * content is serialized here; the file system calls run on the store's
 * writer thread (file-writer.ts).
 *
 * Unlike lowdb's `Low`, it holds no data: the caller hands in the content to
 * write and adopts it only once `write` resolved. That is how a failed write
 * leaves no trace in memory; the temp file a failed write may leave (a full
 * disk fails halfway through it) is removed, so none is left on disk.
 *
 * Exactly one LowdbFile per path at a time, and one write at a time through
 * it: two writers on one path share the temp-file name and lose writes.
 */
export class LowdbFile<T extends object> {
  #last: Promise<unknown> = Promise.resolve();

  /** The temp file of this path (steno's name for it, as before). */
  readonly tempPath: string;

  constructor(readonly path: string) {
    this.tempPath = join(dirname(path), `.${basename(path)}.tmp`);
  }

  /** Resolves once `data` is on disk; rejects with StoreFileError, leaving the previous file and no temp file. */
  write(data: T): Promise<void> {
    const run = this.#last.then(noop, noop).then(() => this.#write(data));
    this.#last = run;
    return run;
  }

  async #write(data: T): Promise<void> {
    try {
      // The writer removes the temp file a failed write leaves (a full disk fails halfway through it).
      await replaceFile(this.path, this.tempPath, JSON.stringify(data, null, 2));
    } catch (error) {
      throw asStoreFileError(error, this.path, "could not be written");
    }
  }
}

function noop(): void {}
