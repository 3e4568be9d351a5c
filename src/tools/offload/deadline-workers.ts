/**
 * Runs a pure function in a worker thread with a hard deadline.
 *
 * Work a client or a model can make arbitrarily expensive — converting a
 * hostile HTML page, a backtracking regular expression, the diff of two
 * huge texts — must neither run on the server's main thread (it would stall
 * every client) nor run for ever. A timer or an AbortSignal cannot stop
 * synchronous JavaScript; terminating its thread can, wherever it is (in a
 * regular expression too). So each job runs in a worker, and when its
 * deadline passes or its signal fires, that worker is terminated and the
 * call rejects; the next job gets a fresh thread.
 *
 * The deadline bounds the job's own run: it starts when the thread has
 * loaded the job's code and begins it, so starting a thread (slow from
 * source, where tsx compiles it) or waiting for one does not eat it. That
 * wait is bounded by the caller's signal and by the deadlines of the jobs
 * ahead. A few threads are kept, and a thread left idle is ended after a
 * while. Each thread's heap is capped, so a job that needs too much memory
 * fails alone instead of taking the server down.
 */
import { availableParallelism } from "node:os";
import { createRequire } from "node:module";
import type { Worker } from "node:worker_threads";
import type { JobInput, JobOutput, OffloadJobName } from "./offload-jobs.js";
import type { JobReply, JobRequest } from "./offload-messages.js";
import { offloadWorkerScript } from "./worker-script.js";

/**
 * Threads at most; jobs beyond them queue. Two even on a small machine, so
 * one job running out its deadline does not hold up every other; the OS
 * shares the cores, and the main thread is never the one waiting.
 */
const MAX_WORKERS = Math.max(2, Math.min(4, availableParallelism()));
/** An idle thread is ended after this long (its modules stay warm until then). */
const IDLE_MS = 30_000;
/** Old-generation heap of one thread: past it the job fails, the server lives. */
const WORKER_HEAP_MB = 512;
/** setTimeout fires at once for delays above this. */
const MAX_TIMER_MS = 2_147_483_647;

export interface OffThreadLimits {
  /** Hard limit on the job's run, from when its thread begins it: past it the thread is terminated. */
  timeoutMs: number;
  /** When it fires, the job is dropped (its thread terminated) and the call rejects with the signal's reason; it also bounds the wait for a thread. */
  signal?: AbortSignal;
}

/** Why a job gave no result: it ran out of time, or it threw / its thread died (the message says which). */
export class OffThreadError extends Error {
  constructor(
    readonly kind: "timeout" | "failed",
    message: string,
  ) {
    super(message);
    this.name = "OffThreadError";
  }
}

type JobResult = Exclude<JobReply, { started: true }>;

interface Pending {
  request: JobRequest;
  /** The thread has begun the job: its deadline runs from now. */
  begin(): void;
  /** Called once, with the worker's result or the reason the job ended without one. */
  settle(outcome: { reply: JobResult } | { error: unknown }): void;
}

interface Slot {
  worker: Worker;
  job: Pending | null;
  idleTimer?: NodeJS.Timeout;
}

const slots = new Set<Slot>();
const queue: Pending[] = [];
let nextId = 0;
/** Jobs a worker thread has begun, by name: lets a test see work ran off the main thread without timing it. */
const begun = new Map<string, number>();

/** Runs `job` on `input` in a worker thread; resolves with its output, rejects with an OffThreadError or the signal's reason. */
export function runOffThread<N extends OffloadJobName>(job: N, input: JobInput<N>, limits: OffThreadLimits): Promise<JobOutput<N>> {
  const { signal } = limits;
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise<JobOutput<N>>((resolve, reject) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const timeoutMs = Math.min(Math.max(1, Math.floor(limits.timeoutMs)), MAX_TIMER_MS);
    const pending: Pending = {
      request: { id: ++nextId, job, input },
      begin() {
        if (settled || timer !== undefined) return;
        begun.set(job, (begun.get(job) ?? 0) + 1);
        timer = setTimeout(() => end(new OffThreadError("timeout", `the ${job} job did not finish within ${timeoutMs} ms`)), timeoutMs);
      },
      settle(outcome) {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        if ("error" in outcome) reject(outcome.error);
        else if (outcome.reply.ok) resolve(outcome.reply.output as JobOutput<N>);
        else reject(new OffThreadError("failed", outcome.reply.error));
      },
    };
    // Both end the job wherever it is: waiting in the queue, or running (its thread is terminated).
    const end = (error: unknown) => {
      if (settled) return;
      withdraw(pending);
      pending.settle({ error });
    };
    const onAbort = () => end(signal!.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    queue.push(pending);
    dispatch();
  });
}

/** Threads alive now (busy or idle); for tests that check a stopped job's thread is gone. */
export function offThreadWorkerCount(): number {
  return slots.size;
}

/** How many `job` jobs a worker thread has begun in this process; for tests that check a tool's work ran off the main thread. */
export function offThreadJobsBegun(job: OffloadJobName): number {
  return begun.get(job) ?? 0;
}

function dispatch(): void {
  while (queue.length > 0) {
    const slot = [...slots].find((s) => s.job === null) ?? (slots.size < MAX_WORKERS ? spawn() : undefined);
    if (slot === undefined) return;
    start(slot, queue.shift()!);
  }
}

/** node:worker_threads (and Node's worker internals behind it), loaded when the first worker starts, not with the server. */
let workerThreads: typeof import("node:worker_threads") | undefined;

function spawn(): Slot | undefined {
  let worker: Worker;
  try {
    const { script, eval: isCode } = offloadWorkerScript();
    workerThreads ??= createRequire(import.meta.url)("node:worker_threads") as typeof import("node:worker_threads");
    worker = new workerThreads.Worker(script, { eval: isCode, resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB } });
  } catch (error) {
    // Nothing can run: every waiting job fails with the reason rather than waiting for its deadline.
    const why = new OffThreadError("failed", `could not start a worker thread: ${error instanceof Error ? error.message : String(error)}`);
    for (const pending of queue.splice(0)) pending.settle({ error: why });
    return undefined;
  }
  const slot: Slot = { worker, job: null };
  slots.add(slot);
  worker.on("message", (reply: JobReply) => {
    const pending = slot.job;
    if (pending === null || pending.request.id !== reply.id) return;
    if ("started" in reply) return pending.begin();
    slot.job = null;
    idle(slot);
    pending.settle({ reply });
    dispatch();
  });
  // An uncaught error, an entry that failed to load, a heap over its cap: the thread is gone, and its job with it.
  const died = (why: string) => {
    if (!slots.has(slot)) return;
    retire(slot);
    slot.job?.settle({ error: new OffThreadError("failed", why) });
    slot.job = null;
    dispatch();
  };
  worker.on("error", (error) => died(`the worker thread failed: ${error.message}`));
  worker.on("exit", (code) => died(`the worker thread exited (code ${code})`));
  return slot;
}

function start(slot: Slot, pending: Pending): void {
  clearTimeout(slot.idleTimer);
  slot.job = pending;
  slot.worker.ref();
  try {
    slot.worker.postMessage(pending.request);
  } catch (error) {
    // Input that cannot be cloned: the job's fault, not the thread's.
    slot.job = null;
    idle(slot);
    pending.settle({ error: new OffThreadError("failed", `the job's input cannot be sent to a thread: ${(error as Error).message}`) });
  }
}

/** An idle thread does not keep the process alive, and ends after IDLE_MS. */
function idle(slot: Slot): void {
  slot.worker.unref();
  clearTimeout(slot.idleTimer);
  slot.idleTimer = setTimeout(() => {
    if (slot.job === null) retire(slot);
  }, IDLE_MS);
  slot.idleTimer.unref();
}

function retire(slot: Slot): void {
  slots.delete(slot);
  clearTimeout(slot.idleTimer);
  void slot.worker.terminate().catch(() => {});
}

/** Takes a job out of the queue, or stops the thread running it (terminated mid-work: it cannot be reused). */
function withdraw(pending: Pending): void {
  const queued = queue.indexOf(pending);
  if (queued !== -1) {
    queue.splice(queued, 1);
    return;
  }
  for (const slot of slots) {
    if (slot.job !== pending) continue;
    slot.job = null;
    retire(slot);
    dispatch();
    return;
  }
}
