import { open, rename, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import type { Worker } from "node:worker_threads";
import { removeFile } from "./remove-file.js";

/**
 * Replaces store files (temp file, then rename), and appends lines to them
 * (a conversation's journal, lowdb-journal.ts), on a worker thread.
 *
 * Written from the main thread, a store file costs four thread-pool round
 * trips (open, write, close, rename), each with its promise, its callback
 * and a wake-up of a pool thread: measured under the fan-out bench (300
 * turns ending within a few ms), about a tenth of the server's main-thread
 * time went there, right where the last tokens of the other streams wait.
 * Here the main thread serializes the content and posts it; every write
 * asked for in one turn of the event loop leaves in one message, and the
 * worker's event loop takes the round trips. Each write's
 * promise resolves once the worker has renamed its file into place — the
 * same point as before (the rename, no fsync) — so what a write
 * acknowledged is on disk as much as it was.
 *
 * Order: two writes of one path land in the order they were asked for (the
 * callers chain them anyway: LowdbFile, the conversation's commit queue);
 * writes of different paths run side by side.
 *
 * A failed write leaves the previous file and no temp file, and rejects
 * with an Error carrying the code, syscall and path the fs call failed
 * with (ENOSPC, EISDIR …), as fs/promises would.
 *
 * An append is an open, a write and a close. From the main thread each is a
 * thread-pool request, and on the bench machine handing one over took the
 * main thread 38 µs on average (300 turns at once: the pool's lock and
 * wake-up), ~100 µs a line; the worker makes the three calls synchronously
 * (they are page-cache work: 15–75 µs in all), one line after another,
 * and cuts a failed one off again (truncated to its previous length, or
 * removed when it was empty) before it answers.
 *
 * The worker starts once writes pile up (START_WORKER_AT in flight at once:
 * many turns ending together), so an idle server or a lone chat keeps its
 * memory. Until it runs, and without one (it failed to start or died),
 * writes go through fs/promises on this thread, as they did before. Either way one path is written by one write
 * at a time: its callers wait for a write before the next (LowdbFile).
 */

interface Pending {
  resolve(): void;
  reject(error: unknown): void;
}

interface Reply {
  id: number;
  error?: { message: string; code?: string; syscall?: string; path?: string; errno?: number };
  /** A failed append: whether it was cut off again (false: the file may hold part of it). */
  cutOff?: boolean;
}

/** A failed append (FileWriter.append): the fs error, and whether the line was cut off again. */
export class AppendError extends Error {
  constructor(
    cause: Error,
    /** False: the file may end in part of the line (its cut-off failed too). */
    readonly cutOff: boolean,
  ) {
    super(cause.message, { cause });
  }

  /** The fs error (its code, syscall and path). */
  get failure(): Error {
    return this.cause as Error;
  }
}

/**
 * The worker: replaces each file of a batch (fs/promises: the writes of a
 * batch run side by side on the thread pool, as they did from the main
 * thread, and a slow disk holds up no other write); a path's writes one
 * after the other, in the order asked. The replies of the writes done in one
 * turn of its loop leave in one message.
 */
const WORKER_SOURCE = `(async () => {
const { parentPort } = await import("node:worker_threads");
const { writeFile, rename, rm } = await import("node:fs/promises");
const { openSync, writeSync, closeSync, ftruncateSync, rmSync } = await import("node:fs");
const tails = new Map();
let replies = [];
const reply = (r) => {
  if (replies.length === 0) setImmediate(() => { const out = replies; replies = []; parentPort.postMessage(out); });
  replies.push(r);
};
const replace = async (w) => {
  try {
    await writeFile(w.temp, w.data, "utf8");
    await rename(w.temp, w.path);
    reply({ id: w.id });
  } catch (error) {
    await rm(w.temp, { force: true }).catch(() => {});
    reply({ id: w.id, error: { message: String(error && error.message), code: error && error.code, syscall: error && error.syscall, path: error && error.path, errno: error && error.errno } });
  }
};
const failure = (w, error, extra) => ({ id: w.id, error: { message: String(error && error.message), code: error && error.code, syscall: error && error.syscall, path: error && error.path, errno: error && error.errno }, ...extra });
const append = (w) => {
  let fd;
  try {
    fd = openSync(w.path, "a");
    const data = Buffer.from(w.data, "utf8");
    const written = writeSync(fd, data);
    if (written !== data.length) throw Object.assign(new Error("short write to " + w.path + " (" + written + " of " + data.length + " bytes)"), { code: "ENOSPC" });
    closeSync(fd);
    reply({ id: w.id });
  } catch (error) {
    let cutOff = true;
    try {
      if (fd !== undefined && w.before > 0) ftruncateSync(fd, w.before);
    } catch {
      cutOff = false;
    }
    try { if (fd !== undefined) closeSync(fd); } catch {}
    try {
      if (fd !== undefined && w.before === 0) rmSync(w.path, { force: true });
    } catch {
      cutOff = false;
    }
    reply(failure(w, error, { cutOff }));
  }
};
parentPort.on("message", (batch) => {
  for (const w of batch) {
    if (w.append) {
      // After the path's earlier writes (its lines come one at a time anyway: the conversation's commit queue).
      const run = (tails.get(w.path) || Promise.resolve()).then(() => append(w));
      tails.set(w.path, run);
      run.then(() => { if (tails.get(w.path) === run) tails.delete(w.path); });
      continue;
    }
    const run = (tails.get(w.path) || Promise.resolve()).then(() => replace(w));
    tails.set(w.path, run);
    run.then(() => { if (tails.get(w.path) === run) tails.delete(w.path); });
  }
});
})();
`;

/** Writes in flight on the main thread at which the worker starts. */
const START_WORKER_AT = 8;

type Job = { id: number; path: string; temp: string; data: string } | { id: number; path: string; data: string; append: true; before: number };

let workerThreads: typeof import("node:worker_threads") | undefined;

/** One writer thread and its queue; the store uses one per process (replaceFile). */
export class FileWriter {
  #worker: Worker | null = null;
  /** Set once the worker runs: writes asked for while it starts go through this thread, so none waits for its start. */
  #online = false;
  #broken = false;
  #nextId = 1;
  readonly #pending = new Map<number, Pending>();
  #batch: Job[] = [];
  #flushScheduled = false;
  /** Writes handed to the worker so far (tests: that writes do leave this thread). */
  offThread = 0;
  #ready: Promise<boolean> | undefined;

  /** Starts the worker if need be; resolves true once it runs, false when writes stay on this thread. */
  ready(): Promise<boolean> {
    const worker = this.#ensureWorker();
    if (!worker) return Promise.resolve(false);
    if (this.#online) return Promise.resolve(true);
    this.#ready ??= new Promise<boolean>((resolve) => {
      // Held while it starts: the caller waits on it.
      worker.ref();
      const settle = (running: boolean) => {
        if (this.#pending.size === 0) worker.unref();
        resolve(running);
      };
      worker.once("online", () => settle(true));
      worker.once("exit", () => settle(false));
    });
    return this.#ready;
  }

  /** Writes in flight on this thread. */
  #here = 0;

  /** Write `data` to `temp`, then rename it over `path`; on failure the temp file is removed. */
  replace(path: string, temp: string, data: string): Promise<void> {
    // The worker costs a thread and ~8 MB: it starts once writes pile up (many turns ending together), not for an idle server's few.
    const worker = this.#worker ?? (this.#here >= START_WORKER_AT ? this.#ensureWorker() : null);
    if (!worker || !this.#online) return this.#replaceHere(path, temp, data);
    const id = this.#nextId++;
    this.offThread++;
    const done = new Promise<void>((resolve, reject) => this.#pending.set(id, { resolve, reject }));
    this.#batch.push({ id, path, temp, data });
    this.#schedule();
    return done;
  }

  /**
   * Append `data` to `path`, which holds `before` bytes (a journal's line).
   * Undefined while the worker does not run: the caller appends on this
   * thread (and counts it with appendingHere, so piled-up writes start the
   * worker). Rejects with AppendError.
   */
  append(path: string, data: string, before: number): Promise<void> | undefined {
    const worker = this.#worker ?? (this.#here >= START_WORKER_AT ? this.#ensureWorker() : null);
    if (!worker || !this.#online) return undefined;
    const id = this.#nextId++;
    this.offThread++;
    const done = new Promise<void>((resolve, reject) =>
      this.#pending.set(id, {
        resolve,
        reject: (error) => reject(error instanceof AppendError ? error : new AppendError(error as Error, false)),
      }),
    );
    this.#batch.push({ id, path, data, append: true, before });
    this.#schedule();
    return done;
  }

  /** An append made on this thread meanwhile (append answered undefined): counted as a write in flight here. */
  async appendingHere<T>(work: Promise<T>): Promise<T> {
    this.#here++;
    try {
      return await work;
    } finally {
      this.#here--;
    }
  }

  #schedule(): void {
    if (!this.#flushScheduled) {
      this.#flushScheduled = true;
      // After the I/O callbacks of this turn of the loop: the turn's writes leave together.
      setImmediate(() => this.#flush());
    }
  }

  #flush(): void {
    this.#flushScheduled = false;
    const batch = this.#batch;
    this.#batch = [];
    if (batch.length === 0) return;
    const worker = this.#worker;
    if (!worker) {
      // The worker died after these were queued: write them here, in order.
      void this.#writeHere(batch);
      return;
    }
    // Kept alive while writes are out: a process must not exit with one unanswered.
    if (this.#pending.size > 0) worker.ref();
    worker.postMessage(batch);
  }

  async #replaceHere(path: string, temp: string, data: string): Promise<void> {
    this.#here++;
    try {
      await replaceHere(path, temp, data);
    } finally {
      this.#here--;
    }
  }

  async #writeHere(batch: Job[]): Promise<void> {
    for (const job of batch) {
      const pending = this.#pending.get(job.id);
      this.#pending.delete(job.id);
      const write = "append" in job ? appendHere(job.path, job.data, job.before) : replaceHere(job.path, job.temp, job.data);
      await write.then(pending?.resolve, pending?.reject);
    }
  }

  #ensureWorker(): Worker | null {
    if (this.#worker || this.#broken) return this.#worker;
    let worker: Worker;
    try {
      // node:worker_threads (and Node's worker internals) load with the first writer thread, not with the store: most servers never start one.
      workerThreads ??= createRequire(import.meta.url)("node:worker_threads") as typeof import("node:worker_threads");
      const { Worker } = workerThreads;
      // None of this process's flags (loaders, --input-type …): the writer needs none, and starts sooner.
      worker = new Worker(WORKER_SOURCE, { eval: true, name: "agentwire store writer", execArgv: [] });
    } catch {
      this.#broken = true;
      return null;
    }
    worker.once("online", () => (this.#online = true));
    worker.on("message", (replies: Reply[]) => {
      for (const reply of replies) {
        const pending = this.#pending.get(reply.id);
        if (!pending) continue;
        this.#pending.delete(reply.id);
        if (reply.error) pending.reject(reply.cutOff === undefined ? errorOf(reply.error) : new AppendError(errorOf(reply.error), reply.cutOff));
        else pending.resolve();
      }
      if (this.#pending.size === 0) worker.unref();
    });
    const lost = (error: unknown) => {
      if (this.#worker !== worker) return;
      this.#worker = null;
      this.#broken = true;
      // Writes it had not answered: unknown whether they landed; their callers are told they failed.
      const failure = error instanceof Error ? error : new Error("the store writer thread stopped");
      const queued = new Set(this.#batch.map((job) => job.id));
      for (const [id, pending] of this.#pending) {
        if (queued.has(id)) continue;
        this.#pending.delete(id);
        pending.reject(failure);
      }
    };
    worker.on("error", lost);
    worker.on("exit", (code) => lost(new Error(`the store writer thread exited (${code})`)));
    // After the listeners: adding a "message" listener refs the worker again.
    worker.unref();
    this.#worker = worker;
    return worker;
  }
}

async function replaceHere(path: string, temp: string, data: string): Promise<void> {
  try {
    await writeFile(temp, data, "utf8");
    await rename(temp, path);
  } catch (error) {
    await removeFile(temp).catch(() => {});
    throw error;
  }
}

/** An append on this thread (the worker died with it queued): as the worker does it, through fs/promises. */
async function appendHere(path: string, data: string, before: number): Promise<void> {
  const file = await open(path, "a").catch((error: Error) => Promise.reject(new AppendError(error, true)));
  try {
    const bytes = Buffer.from(data);
    const { bytesWritten } = await file.write(bytes, 0, bytes.length);
    if (bytesWritten !== bytes.length) throw Object.assign(new Error(`short write to ${path} (${bytesWritten} of ${bytes.length} bytes)`), { code: "ENOSPC" });
  } catch (error) {
    const cutOff = await (before > 0 ? file.truncate(before) : file.close().then(() => removeFile(path))).then(
      () => true,
      () => false,
    );
    throw new AppendError(error as Error, cutOff);
  } finally {
    await file.close().catch(() => undefined);
  }
}

function errorOf(reply: NonNullable<Reply["error"]>): Error {
  const error = new Error(reply.message) as NodeJS.ErrnoException;
  if (reply.code !== undefined) error.code = reply.code;
  if (reply.syscall !== undefined) error.syscall = reply.syscall;
  if (reply.path !== undefined) error.path = reply.path;
  if (reply.errno !== undefined) error.errno = reply.errno;
  return error;
}

let shared: FileWriter | undefined;

/** Replace `path` by `data` through the store's writer thread (see above). */
export function replaceFile(path: string, temp: string, data: string): Promise<void> {
  shared ??= new FileWriter();
  return shared.replace(path, temp, data);
}

/** The store's writer thread (see above): appends go through it once it runs. */
export function fileWriter(): FileWriter {
  shared ??= new FileWriter();
  return shared;
}

/**
 * Append `data` to `path` (which holds `before` bytes): on the writer thread
 * once it runs, else here. Rejects with AppendError (cut off again when it could be).
 */
export function appendLine(path: string, data: string, before: number): Promise<void> {
  const writer = fileWriter();
  return writer.append(path, data, before) ?? writer.appendingHere(appendHere(path, data, before));
}

/** Tests: resolves true once store writes go through the writer thread (starting it), false when they cannot. */
export function fileWriterReady(): Promise<boolean> {
  shared ??= new FileWriter();
  return shared.ready();
}

/** Tests: how many store writes were handed to the writer thread so far. */
export function writesOffThread(): number {
  return shared?.offThread ?? 0;
}
