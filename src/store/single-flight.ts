/**
 * At most one run of a piece of work per key at a time: a caller that asks
 * while a run is under way gets the same promise instead of starting another
 * (two loads of one conversation would make two handles writing one file or
 * row). The key is free again once the run settles.
 */
export class SingleFlight<K, V> {
  readonly #running = new Map<K, Promise<V>>();

  /** The run under way for `key`, or a new one of `work`. */
  run(key: K, work: () => Promise<V>): Promise<V> {
    let running = this.#running.get(key);
    if (!running) {
      running = work().finally(() => this.#running.delete(key));
      this.#running.set(key, running);
    }
    return running;
  }

  /** The run under way for `key`, if any. */
  get(key: K): Promise<V> | undefined {
    return this.#running.get(key);
  }

  /** Every run under way (to wait for them all at close). */
  values(): IterableIterator<Promise<V>> {
    return this.#running.values();
  }
}
