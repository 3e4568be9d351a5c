/**
 * How many bytes of uploaded images (assets) a store keeps: per
 * conversation and in all, each bounded (limits.maxConversationAssetBytes,
 * limits.maxTotalAssetBytes). An upload that would pass a bound is refused
 * with AssetQuotaError before anything is written.
 *
 * The lowdb and memory stores count in one process (AssetUsage); the
 * PostgreSQL store counts in the database, where every instance of a
 * cluster sees the same totals, and calls checkAssetQuota with them.
 */

export interface AssetLimits {
  /** Bytes of images one conversation may keep. */
  maxConversationAssetBytes: number;
  /** Bytes of images the whole store may keep. */
  maxTotalAssetBytes: number;
}

/** No bound: what a store constructed without limits enforces (the server always passes its configured ones). */
export const UNLIMITED_ASSETS: AssetLimits = {
  maxConversationAssetBytes: Number.POSITIVE_INFINITY,
  maxTotalAssetBytes: Number.POSITIVE_INFINITY,
};

/** An upload refused by a quota; nothing was stored. The handlers answer it as LIMIT_EXCEEDED. */
export class AssetQuotaError extends Error {
  constructor(
    /** The limit's configuration name. */
    readonly limit: keyof AssetLimits,
    readonly max: number,
    /** What the store would have held with the upload, in bytes. */
    readonly actual: number,
    message: string,
  ) {
    super(message);
    this.name = "AssetQuotaError";
  }
}

/**
 * Throws AssetQuotaError when `adding` bytes would take the conversation's
 * or the store's images over their limit. A change that adds nothing (a
 * replacement no larger than the image it replaces) always passes, even
 * over a limit that was lowered since.
 */
export function checkAssetQuota(limits: AssetLimits, conversationBytes: number, totalBytes: number, adding: number): void {
  if (adding <= 0) return;
  if (conversationBytes + adding > limits.maxConversationAssetBytes) {
    throw new AssetQuotaError(
      "maxConversationAssetBytes",
      limits.maxConversationAssetBytes,
      conversationBytes + adding,
      `this conversation keeps ${conversationBytes} bytes of images; this one (${adding} bytes) would bring it over limits.maxConversationAssetBytes (${limits.maxConversationAssetBytes}); continue in a new conversation, or raise the limit`,
    );
  }
  if (totalBytes + adding > limits.maxTotalAssetBytes) {
    throw new AssetQuotaError(
      "maxTotalAssetBytes",
      limits.maxTotalAssetBytes,
      totalBytes + adding,
      `the server keeps ${totalBytes} bytes of images in all; this one (${adding} bytes) would bring it over limits.maxTotalAssetBytes (${limits.maxTotalAssetBytes}); delete conversations that hold images, or raise the limit`,
    );
  }
}

/** Bytes held for an upload under way: kept once it is written, given back if it fails. */
export interface AssetReservation {
  /** The upload is durable. */
  commit(): void;
  /** The upload failed: nothing was stored. */
  release(): void;
}

/**
 * Usage counted in one process. Bytes are reserved synchronously before the
 * write starts, so uploads racing each other cannot pass a limit together:
 * each sees the others' reservations.
 */
export class AssetUsage {
  readonly #byConversation = new Map<string, number>();
  #total = 0;

  constructor(readonly limits: AssetLimits = UNLIMITED_ASSETS) {}

  /** Bytes of all conversations, reservations included. */
  get total(): number {
    return this.#total;
  }

  /** Bytes of one conversation, reservations included. */
  of(conversationId: string): number {
    return this.#byConversation.get(conversationId) ?? 0;
  }

  /** Counts bytes already stored (found on disk at start). */
  add(conversationId: string, bytes: number): void {
    if (bytes <= 0) return;
    this.#byConversation.set(conversationId, this.of(conversationId) + bytes);
    this.#total += bytes;
  }

  /**
   * Reserves an upload of `bytes` that replaces an asset of `replacedBytes`
   * (0 for a new one), or throws AssetQuotaError, reserving nothing, when
   * the difference would pass a limit. Growth counts from now (so racing
   * uploads see it); shrinking counts once the upload is durable (so the room
   * it frees is not lent out before).
   */
  reserve(conversationId: string, bytes: number, replacedBytes = 0): AssetReservation {
    const delta = bytes - replacedBytes;
    checkAssetQuota(this.limits, this.of(conversationId), this.#total, delta);
    if (delta > 0) this.add(conversationId, delta);
    let settled = false;
    const settle = (free: number) => {
      if (settled) return;
      settled = true;
      if (free > 0) this.#give(conversationId, free);
    };
    return { commit: () => settle(-delta), release: () => settle(delta) };
  }

  /** Never more than the conversation still counts: after forget() (deleted meanwhile) there is nothing to give back. */
  #give(conversationId: string, bytes: number): void {
    const held = this.of(conversationId);
    const freed = Math.min(bytes, held);
    if (held - freed > 0) this.#byConversation.set(conversationId, held - freed);
    else this.#byConversation.delete(conversationId);
    this.#total -= freed;
  }

  /** The conversation was deleted with its images: its bytes are free again. */
  forget(conversationId: string): void {
    this.#total -= this.of(conversationId);
    this.#byConversation.delete(conversationId);
  }
}
