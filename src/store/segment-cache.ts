import type { ConversationRecord } from "../../protocol/index.js";

/**
 * Record segments held in memory, for every conversation of one store,
 * bounded in bytes (approximate: the segment's JSON length). Least recently
 * used segments go first. A handle keeps nothing but small state of its own
 * and asks the cache (then the disk) for records, so a long conversation or
 * many loaded ones cost disk, not memory.
 *
 * Entries are committed data only: a handle puts a segment here after its
 * write is durable, never while it is being written.
 */
export class SegmentCache {
  readonly #budget: number;
  /** key → entry; Map order is the LRU order (oldest first). */
  readonly #entries = new Map<string, Entry>();
  readonly #keysByOwner = new Map<number, Set<string>>();
  #bytes = 0;
  #nextOwner = 1;

  constructor(budgetBytes: number) {
    this.#budget = budgetBytes;
  }

  /** A fresh owner id: one per loaded handle, so a reloaded conversation never sees a retired handle's entries. */
  newOwner(): number {
    return this.#nextOwner++;
  }

  get(owner: number, segment: number): CachedSegment | undefined {
    const key = keyOf(owner, segment);
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.value;
  }

  /** Caches a segment; one larger than the whole budget is not kept (its user holds it while it needs it). */
  put(owner: number, segment: number, value: CachedSegment): void {
    const key = keyOf(owner, segment);
    this.#remove(key);
    if (value.bytes > this.#budget) return;
    this.#entries.set(key, { owner, value });
    let keys = this.#keysByOwner.get(owner);
    if (!keys) this.#keysByOwner.set(owner, (keys = new Set()));
    keys.add(key);
    this.#bytes += value.bytes;
    for (const oldest of this.#entries.keys()) {
      if (this.#bytes <= this.#budget) break;
      this.#remove(oldest);
    }
  }

  /** Forgets every segment of an owner (its handle was unloaded or deleted). */
  dropOwner(owner: number): void {
    for (const key of [...(this.#keysByOwner.get(owner) ?? [])]) this.#remove(key);
  }

  get bytes(): number {
    return this.#bytes;
  }

  get budget(): number {
    return this.#budget;
  }

  #remove(key: string): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#entries.delete(key);
    this.#bytes -= entry.value.bytes;
    const keys = this.#keysByOwner.get(entry.owner);
    keys?.delete(key);
    if (keys?.size === 0) this.#keysByOwner.delete(entry.owner);
  }
}

export interface CachedSegment {
  /** The segment's committed records; shared, never mutated (a change makes a new array). */
  readonly records: readonly ConversationRecord[];
  /** Approximate size: JSON length. */
  readonly bytes: number;
}

interface Entry {
  owner: number;
  value: CachedSegment;
}

function keyOf(owner: number, segment: number): string {
  return `${owner}:${segment}`;
}
