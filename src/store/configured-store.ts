import type { LimitsConfig, ServerSettings } from "../../protocol/config.js";
import { redactPassword } from "../config/url-password.js";
import type { Logger } from "../logging/logger.js";
import type { ConversationStore } from "./conversation-store.js";
import { LowdbConversationStore } from "./lowdb-store.js";
import { isPostgresUrl } from "./postgres-url.js";

/** Where the store is (`server.store`, `server.dataDir`). */
export type StoreSettings = Pick<ServerSettings, "store" | "dataDir">;
/** The bounds the store keeps. */
export type StoreLimits = Pick<LimitsConfig, "storeCacheBytes" | "maxConversationAssetBytes" | "maxTotalAssetBytes">;

/** How the server will use the store. */
export interface StoreUse {
  /**
   * A client command's own server (startServer's `shared: false`), gone when
   * the command is: the lowdb store's start-up check and count of stored
   * images wait this long (LowdbStoreOptions.startupScanDelayMs). Default 0.
   */
  startupScanDelayMs?: number;
}

/**
 * The store `server.store` names: the embedded lowdb store in the data dir
 * (the default), or PostgreSQL for a postgres:// URL. The PostgreSQL store
 * and its driver are imported only then, so the default start loads
 * neither. Not opened yet: the caller opens it (and a StoreUnavailableError
 * from open() stops the start with one line).
 */
export async function createConfiguredStore(where: StoreSettings, limits: StoreLimits, log: Logger, use: StoreUse = {}): Promise<ConversationStore> {
  const onWarning = (message: string) => log.warn(message);
  const assetLimits = { maxConversationAssetBytes: limits.maxConversationAssetBytes, maxTotalAssetBytes: limits.maxTotalAssetBytes };
  if (isPostgresUrl(where.store)) {
    const { PostgresConversationStore } = await import("./postgres-store.js");
    return new PostgresConversationStore(where.store, { onWarning, assetLimits });
  }
  return new LowdbConversationStore(where.dataDir, {
    cacheBytes: limits.storeCacheBytes,
    assetLimits,
    onDamaged: (d) => log.warn(`conversation ${d.id} is damaged (${d.problem}); it is listed as damaged and can be deleted`),
    onWarning,
    startupScanDelayMs: use.startupScanDelayMs,
  });
}

/** How the start-up line names the store: the data dir, or the database without its password. */
export function describeStore(where: StoreSettings): string {
  if (!isPostgresUrl(where.store)) return `data dir ${where.dataDir}`;
  return `store ${redactPassword(where.store)}; data dir ${where.dataDir}`;
}
