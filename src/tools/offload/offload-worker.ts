/**
 * The offload worker thread's entry (its own entry point in the bundle,
 * dist/bundle/offload-worker.mjs): it runs one job at a time as the main
 * thread asks, says when the job's code is loaded and it starts, and answers
 * with the result or the error's message. The main thread owns every limit
 * — it terminates this thread when a job's deadline passes — so nothing here
 * needs to watch the clock.
 */
import { parentPort } from "node:worker_threads";
import { OFFLOAD_JOBS, type OffloadJobName } from "./offload-jobs.js";
import type { JobReply, JobRequest } from "./offload-messages.js";

const port = parentPort;
if (port === null) throw new Error("offload-worker runs as a worker thread only");

port.on("message", (request: JobRequest) => {
  void run(request).then((reply) => port.postMessage(reply));
});

async function run({ id, job, input }: JobRequest): Promise<JobReply> {
  try {
    const load = OFFLOAD_JOBS[job as OffloadJobName] as (() => Promise<(input: unknown) => unknown>) | undefined;
    if (load === undefined) throw new Error(`no offload job named ${JSON.stringify(job)}`);
    const fn = await load();
    port!.postMessage({ id, started: true } satisfies JobReply);
    return { id, ok: true, output: await fn(input) };
  } catch (error) {
    return { id, ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}
