/**
 * `items.map(fn)` with at most `concurrency` calls in flight, results in
 * item order. The store reads many small files at once (rebuilding the
 * index, checking every conversation at start): unbounded, a large data dir
 * would run out of file descriptors.
 */
export async function mapBounded<T, R>(
  items: readonly T[],
  concurrency: number,
  fn: (item: T) => Promise<R>,
  stop: () => boolean = () => false,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length && !stop()) {
      const i = next++;
      results[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, items.length)) }, worker));
  return results;
}
