import { rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { JSONFile } from "lowdb/node";
import { asStoreFileError } from "./store-file-error.js";

/**
 * One store file written through lowdb's JSON adapter (steno underneath:
 * temp file, then rename, so a reader or a crash sees the old file or the
 * new one, never half of one).
 *
 * Unlike lowdb's `Low`, it holds no data: the caller hands in the content to
 * write and adopts it only once `write` resolved. That is how a failed write
 * leaves no trace in memory; the temp file a failed write may leave (a full
 * disk fails halfway through it) is removed here, so none is left on disk.
 *
 * Exactly one LowdbFile per path at a time, and one write at a time through
 * it: two steno writers on one path share the temp-file name and lose writes.
 */
export class LowdbFile<T extends object> {
  readonly #adapter: JSONFile<T>;
  #last: Promise<unknown> = Promise.resolve();

  constructor(readonly path: string) {
    this.#adapter = new JSONFile<T>(path);
  }

  /** steno's temp file for this path. */
  get tempPath(): string {
    return join(dirname(this.path), `.${basename(this.path)}.tmp`);
  }

  /** Resolves once `data` is on disk; rejects with StoreFileError, leaving the previous file and no temp file. */
  write(data: T): Promise<void> {
    const run = this.#last.then(noop, noop).then(() => this.#write(data));
    this.#last = run;
    return run;
  }

  async #write(data: T): Promise<void> {
    try {
      await this.#adapter.write(data);
    } catch (error) {
      await rm(this.tempPath, { force: true }).catch(noop);
      throw asStoreFileError(error, this.path, "could not be written");
    }
  }
}

function noop(): void {}
