import type { ConversationRecord } from "../../protocol/index.js";
import { ByteLru } from "./byte-lru.js";

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
  readonly #lru: ByteLru<string, Entry>;
  readonly #keysByOwner = new Map<number, Set<string>>();
  #nextOwner = 1;

  constructor(budgetBytes: number) {
    this.#lru = new ByteLru<string, Entry>(budgetBytes, (key) => this.#forgetKey(key));
  }

  /** A fresh owner id: one per loaded handle, so a reloaded conversation never sees a retired handle's entries. */
  newOwner(): number {
    return this.#nextOwner++;
  }

  get(owner: number, segment: number): CachedSegment | undefined {
    return this.#lru.get(keyOf(owner, segment))?.value;
  }

  /** Caches a segment; one larger than the whole budget is not kept (its user holds it while it needs it). */
  put(owner: number, segment: number, value: CachedSegment): void {
    const key = keyOf(owner, segment);
    this.#lru.set(key, { owner, value }, value.bytes);
    if (this.#lru.get(key) === undefined) return;
    let keys = this.#keysByOwner.get(owner);
    if (!keys) this.#keysByOwner.set(owner, (keys = new Set()));
    keys.add(key);
  }

  /** Forgets every segment of an owner (its handle was unloaded or deleted). */
  dropOwner(owner: number): void {
    for (const key of [...(this.#keysByOwner.get(owner) ?? [])]) this.#lru.delete(key);
  }

  get bytes(): number {
    return this.#lru.bytes;
  }

  get budget(): number {
    return this.#lru.budget;
  }

  #forgetKey(key: string): void {
    const owner = Number(key.slice(0, key.indexOf(":")));
    const keys = this.#keysByOwner.get(owner);
    keys?.delete(key);
    if (keys?.size === 0) this.#keysByOwner.delete(owner);
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
