/**
 * Milliseconds on a monotonic clock, for durations (its origin is not
 * performance.now()'s). Read from process.hrtime, part of every process:
 * the global `performance` loads Node's perf_hooks, eight modules (~0.7 ms),
 * at its first use, which a one-shot command paid for its first timing.
 */
export function monotonicMs(): number {
  const [seconds, nanoseconds] = process.hrtime();
  return seconds * 1e3 + nanoseconds / 1e6;
}
