/**
 * A map bounded in bytes: entries carry their (approximate) size, and the
 * least recently used go first once the total passes the budget. An entry
 * larger than the whole budget is not kept at all.
 */
export class ByteLru<K, V> {
  /** Map order is the LRU order (oldest first). */
  readonly #entries = new Map<K, { value: V; bytes: number }>();
  #bytes = 0;

  constructor(
    readonly budget: number,
    /** Told of every entry that leaves (evicted, replaced or deleted). */
    private readonly onRemove: (key: K) => void = () => {},
  ) {}

  get bytes(): number {
    return this.#bytes;
  }

  get(key: K): V | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.value;
  }

  set(key: K, value: V, bytes: number): void {
    this.delete(key);
    if (bytes > this.budget) return;
    this.#entries.set(key, { value, bytes });
    this.#bytes += bytes;
    for (const oldest of this.#entries.keys()) {
      if (this.#bytes <= this.budget) break;
      this.delete(oldest);
    }
  }

  delete(key: K): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#entries.delete(key);
    this.#bytes -= entry.bytes;
    this.onRemove(key);
  }
}
