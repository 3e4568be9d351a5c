/**
 * The offload primitive (src/tools/offload/deadline-workers.ts): a job runs
 * in a real worker thread; at its deadline or on abort that thread is
 * terminated even in the middle of a catastrophic regular expression, and
 * the next job still runs. The main thread stays free meanwhile.
 */
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

/** The largest gap between ticks of a 5 ms timer while `work` runs: how long the main thread was held. */
async function mainThreadStall<T>(work: Promise<T>): Promise<{ result: PromiseSettledResult<T>; worstGapMs: number }> {
  let last = performance.now();
  let worst = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
  }, 5);
  const [result] = await Promise.allSettled([work]);
  clearInterval(ticker);
  return { result, worstGapMs: worst };
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
    const { result, worstGapMs } = await mainThreadStall(runOffThread("line-matches", CATASTROPHIC, { timeoutMs: 500 }));
    const elapsed = performance.now() - started;
    expect(result.status).toBe("rejected");
    const error = (result as PromiseRejectedResult).reason;
    expect(error).toBeInstanceOf(OffThreadError);
    expect(error).toMatchObject({ kind: "timeout", message: "the line-matches job did not finish within 500 ms" });
    expect(elapsed).toBeGreaterThanOrEqual(490);
    expect(elapsed).toBeLessThan(3000);
    // Its thread was terminated, not kept for the next job.
    expect(offThreadWorkerCount()).toBe(threadsBefore - 1);
    // On the main thread this pattern would have held it for hours; here the timer kept ticking.
    expect(worstGapMs).toBeLessThan(200);
    await expect(runOffThread("line-matches", easy("b"), { timeoutMs: 10_000 })).resolves.toMatchObject({ matches: [[{}]] });
  });

  it("stops a running job when its signal fires, rejecting with the signal's reason", async () => {
    const controller = new AbortController();
    const job = runOffThread("line-matches", CATASTROPHIC, { timeoutMs: 60_000, signal: controller.signal });
    setTimeout(() => controller.abort(new Error("interrupted by the test")), 200);
    const started = performance.now();
    await expect(job).rejects.toThrow("interrupted by the test");
    expect(performance.now() - started).toBeLessThan(2000);
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
    const stuck = runOffThread("line-matches", CATASTROPHIC, { timeoutMs: 3000 });
    let stuckEnded = false;
    void stuck.catch(() => (stuckEnded = true));
    const quick = await Promise.all(Array.from({ length: 5 }, (_, i) => runOffThread("line-matches", easy(`b${i}`), { timeoutMs: 10_000 })));
    expect(quick.map((r) => r.matches[0]!.length)).toEqual([1, 1, 1, 1, 1]);
    expect(stuckEnded).toBe(false);
    await expect(stuck).rejects.toMatchObject({ kind: "timeout" });
  });

  it("runs a job's deadline from when its thread begins it; the wait for a thread is bounded by the signal", async () => {
    // Four stuck jobs take every thread there is (at most four).
    const stuck = Promise.allSettled(Array.from({ length: 4 }, () => runOffThread("line-matches", CATASTROPHIC, { timeoutMs: 800 })));
    const waited = runOffThread("line-matches", easy("b"), { timeoutMs: 300 });
    const controller = new AbortController();
    const given = runOffThread("line-matches", easy("b"), { timeoutMs: 300, signal: controller.signal });
    setTimeout(() => controller.abort(new Error("given up waiting")), 400);
    await expect(given).rejects.toThrow("given up waiting");
    // It waited longer than its deadline for a thread (the stuck jobs held them 800 ms at least); then it ran, well within it.
    await expect(waited).resolves.toMatchObject({ matches: [[{ line: 1 }]] });
    for (const result of await stuck) expect(result).toMatchObject({ status: "rejected", reason: { kind: "timeout" } });
  });
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
