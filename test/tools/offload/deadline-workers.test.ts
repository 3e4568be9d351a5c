/**
 * The offload primitive (src/tools/offload/deadline-workers.ts): a job runs
 * in a real worker thread; at its deadline or on abort that thread is
 * terminated even in the middle of a catastrophic regular expression, and
 * the next job still runs. The main thread stays free meanwhile.
 *
 * No assertion here bounds a duration from above: a loaded machine stretches
 * every one (speed is `npm run bench`'s business). Deadlines are checked from
 * below (a job is not ended early), hangs by the tests' timeouts, and the main
 * thread's freedom by its timer having kept turning.
 */
import { availableParallelism } from "node:os";
import { describe, expect, it } from "vitest";
import { offThreadWorkerCount, OffThreadError, runOffThread } from "../../../src/tools/offload/deadline-workers.js";
import { offloadWorkerScript } from "../../../src/tools/offload/worker-script.js";

/**
 * `(a+)+$` over 40 a's and a "!": 2^40 steps, hours of backtracking. The
 * job's own budget (it stops itself there) is an hour: only the thread's
 * termination at the deadline can end it.
 */
const CATASTROPHIC = { source: "(a+)+$", flags: "", texts: [`${"a".repeat(40)}!`], max: 10, maxChars: 100, budgetMs: 3_600_000 };
const easy = (text: string) => ({ source: "b+", flags: "", texts: [text], max: 10, maxChars: 100, budgetMs: 10_000 });

/** The threads runOffThread keeps at most (its MAX_WORKERS). */
const THREADS = Math.max(2, Math.min(4, availableParallelism()));

/** How many times a 5 ms timer fired while `work` ran: none if the main thread was held all along. */
async function mainThreadTicks<T>(work: Promise<T>): Promise<{ result: PromiseSettledResult<T>; ticks: number }> {
  let ticks = 0;
  const ticker = setInterval(() => ticks++, 5);
  const [result] = await Promise.allSettled([work]);
  clearInterval(ticker);
  return { result, ticks };
}

describe("runOffThread", () => {
  it("returns the job's output", async () => {
    await expect(runOffThread("line-matches", easy("a\nbb\nc\nb"), { timeoutMs: 10_000 })).resolves.toMatchObject({
      matches: [
        [
          { line: 2, text: "bb", length: 2 },
          { line: 4, text: "b", length: 1 },
        ],
      ],
      stoppedAt: null,
    });
  });

  it("terminates a job at its deadline, mid-regex, without holding the main thread; the next job runs", async () => {
    await runOffThread("line-matches", easy("warm"), { timeoutMs: 10_000 });
    const threadsBefore = offThreadWorkerCount();
    const started = performance.now();
    const { result, ticks } = await mainThreadTicks(runOffThread("line-matches", CATASTROPHIC, { timeoutMs: 500 }));
    const elapsed = performance.now() - started;
    expect(result.status).toBe("rejected");
    const error = (result as PromiseRejectedResult).reason;
    expect(error).toBeInstanceOf(OffThreadError);
    expect(error).toMatchObject({ kind: "timeout", message: "the line-matches job did not finish within 500 ms" });
    // Not ended before its deadline; that it ended at all (2^40 steps otherwise) is the test's timeout's to check.
    expect(elapsed).toBeGreaterThanOrEqual(490);
    // Its thread was terminated, not kept for the next job.
    expect(offThreadWorkerCount()).toBe(threadsBefore - 1);
    // On the main thread this pattern would have held it for hours, no tick at all; here the timer kept ticking.
    expect(ticks).toBeGreaterThanOrEqual(2);
    await expect(runOffThread("line-matches", easy("b"), { timeoutMs: 10_000 })).resolves.toMatchObject({ matches: [[{}]] });
  }, 30_000);

  it("stops a running job when its signal fires, rejecting with the signal's reason", async () => {
    const controller = new AbortController();
    const job = runOffThread("line-matches", CATASTROPHIC, { timeoutMs: 60_000, signal: controller.signal });
    setTimeout(() => controller.abort(new Error("interrupted by the test")), 200);
    // Its own deadline is a minute away: only the signal can end it before the test's timeout.
    await expect(job).rejects.toThrow("interrupted by the test");
    // An already aborted signal: the job never starts.
    await expect(runOffThread("line-matches", easy("b"), { timeoutMs: 1000, signal: controller.signal })).rejects.toThrow("interrupted by the test");
  });

  it("reports a job that throws as failed, and the thread serves the next job", async () => {
    await expect(runOffThread("line-matches", { ...easy("x"), source: "(" }, { timeoutMs: 10_000 })).rejects.toMatchObject({
      kind: "failed",
      message: expect.stringContaining("Invalid regular expression"),
    });
    await expect(runOffThread("line-matches", easy("bbb"), { timeoutMs: 10_000 })).resolves.toMatchObject({ matches: [[{}]] });
  });

  it("runs jobs side by side; one stuck job does not hold up the others", async () => {
    // Stuck until the test ends it, however long the quick jobs take to get a thread and run on a loaded machine.
    const controller = new AbortController();
    const stuck = runOffThread("line-matches", CATASTROPHIC, { timeoutMs: 600_000, signal: controller.signal });
    let stuckEnded = false;
    void stuck.catch(() => (stuckEnded = true));
    const quick = await Promise.all(Array.from({ length: 5 }, (_, i) => runOffThread("line-matches", easy(`b${i}`), { timeoutMs: 10_000 })));
    expect(quick.map((r) => r.matches[0]!.length)).toEqual([1, 1, 1, 1, 1]);
    expect(stuckEnded).toBe(false);
    controller.abort(new Error("done waiting"));
    await expect(stuck).rejects.toThrow("done waiting");
  }, 30_000);

  it("runs a job's deadline from when its thread begins it; the wait for a thread is bounded by the signal", async () => {
    // Stuck jobs take every thread there is; each holds its thread 1.5 s from when the thread begins it.
    const stuck = Promise.allSettled(Array.from({ length: THREADS }, () => runOffThread("line-matches", CATASTROPHIC, { timeoutMs: 1500 })));
    const queued = performance.now();
    const waited = runOffThread("line-matches", easy("b"), { timeoutMs: 1000 });
    const controller = new AbortController();
    const given = runOffThread("line-matches", easy("b"), { timeoutMs: 1000, signal: controller.signal });
    setTimeout(() => controller.abort(new Error("given up waiting")), 300);
    await expect(given).rejects.toThrow("given up waiting");
    // It waited longer than its own deadline for a thread (1.5 s at least, however slow the machine); then it ran, within it.
    await expect(waited).resolves.toMatchObject({ matches: [[{ line: 1 }]] });
    expect(performance.now() - queued).toBeGreaterThanOrEqual(1490);
    for (const result of await stuck) expect(result).toMatchObject({ status: "rejected", reason: { kind: "timeout" } });
  }, 30_000);
});

describe("offloadWorkerScript", () => {
  it("picks the bundled .mjs, tsc's .js, or the .ts source (through tsx) from the calling module's own name", () => {
    expect(offloadWorkerScript("file:///app/dist/bundle/chunk-ABC.mjs")).toEqual({
      script: new URL("file:///app/dist/bundle/offload-worker.mjs"),
      eval: false,
    });
    expect(offloadWorkerScript("file:///app/dist/src/tools/offload/deadline-workers.js")).toEqual({
      script: new URL("file:///app/dist/src/tools/offload/offload-worker.js"),
      eval: false,
    });
    const source = offloadWorkerScript("file:///app/src/tools/offload/deadline-workers.ts");
    expect(source.eval).toBe(true);
    expect(source.script).toContain("tsx");
    expect(source.script).toContain('"file:///app/src/tools/offload/offload-worker.ts"');
  });
});
