import { stat } from "node:fs/promises";
import { Low } from "lowdb";
import { JSONFile } from "lowdb/node";
import { StoreFileError, describeError } from "./store-file-error.js";

/**
 * One lowdb file with writes coalesced: at most one write in flight and one
 * queued. lowdb stringifies on every `write()` call and steno only coalesces
 * the bytes, so 200 un-awaited writes would stringify 200 times; here they
 * cost two. A queued write picks up every change made before it starts, so
 * each caller's promise resolves once a write that includes its change is on
 * disk.
 *
 * The store creates exactly one LowdbFile per path (two lowdb writers on one
 * path share steno's temp-file name and lose writes).
 */
export class LowdbFile<T extends object> {
  readonly #low: Low<T>;
  #writing: Promise<void> | null = null;
  #queued: Promise<void> | null = null;

  /**
   * @param after the first write waits for this (used so a new segment never
   *   reaches disk before the previous segment's last records do).
   */
  constructor(
    readonly path: string,
    defaults: T,
    after?: Promise<void>,
  ) {
    this.#low = new Low<T>(new JSONFile<T>(path), defaults);
    if (after) {
      const gate = after.then(noop, noop);
      this.#writing = gate;
      void gate.then(() => {
        if (this.#writing === gate) this.#writing = null;
      });
    }
  }

  get data(): T {
    return this.#low.data;
  }

  set data(value: T) {
    this.#low.data = value;
  }

  /**
   * Reads the file. Returns false when it does not exist (data keeps the
   * defaults). A file that is unreadable, not JSON, or fails `check` (which
   * returns a problem description, or null when the data is fine) throws a
   * StoreFileError naming the file.
   */
  async load(check: (data: unknown) => string | null): Promise<boolean> {
    const defaults = this.#low.data;
    this.#low.data = undefined as unknown as T;
    try {
      await this.#low.read();
    } catch (error) {
      this.#low.data = defaults;
      const what = error instanceof SyntaxError ? "is not valid JSON" : "cannot be read";
      throw new StoreFileError(this.path, `${what} (${describeError(error)})`, { cause: error });
    }
    const data: unknown = this.#low.data;
    if (data === undefined) {
      this.#low.data = defaults;
      // lowdb reads a file holding `null`, `0` or `false` as "no file".
      if (await exists(this.path)) throw new StoreFileError(this.path, "is damaged: it holds no data");
      return false;
    }
    const problem = check(data);
    if (problem !== null) {
      this.#low.data = defaults;
      throw new StoreFileError(this.path, `is damaged: ${problem}`);
    }
    return true;
  }

  /** Writes the current data; resolves once a write containing it is on disk. */
  persist(): Promise<void> {
    if (this.#queued) return this.#queued;
    const inFlight = this.#writing;
    if (!inFlight) return this.#start();
    const queued = inFlight.then(noop, noop).then(() => {
      this.#queued = null;
      return this.#start();
    });
    this.#queued = queued;
    return queued;
  }

  /** Resolves (never rejects) once no write is in flight or queued. */
  settled(): Promise<void> {
    return (this.#queued ?? this.#writing ?? Promise.resolve()).then(noop, noop);
  }

  #start(): Promise<void> {
    const write = this.#low.write().catch((error: unknown) => {
      throw new StoreFileError(this.path, `could not be written (${describeError(error)})`, { cause: error });
    });
    this.#writing = write;
    const clear = () => {
      if (this.#writing === write) this.#writing = null;
    };
    write.then(clear, clear);
    return write;
  }
}

function noop(): void {}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
