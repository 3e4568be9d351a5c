import type { ServerConfig } from "../config/server-config.js";
import type { Logger } from "../logging/logger.js";
import type { ConversationStore } from "./conversation-store.js";
import { LowdbConversationStore } from "./lowdb-store.js";
import { isPostgresUrl, redactPassword } from "./postgres-url.js";

/**
 * The store `server.store` names: the embedded lowdb store in the data dir
 * (the default), or PostgreSQL for a postgres:// URL. The PostgreSQL store
 * and its driver are imported only then, so the default start loads
 * neither. Not opened yet: the caller opens it (and a StoreUnavailableError
 * from open() stops the start with one line).
 */
export async function createConfiguredStore(config: ServerConfig, log: Logger): Promise<ConversationStore> {
  const onWarning = (message: string) => log.warn(message);
  const assetLimits = { maxConversationAssetBytes: config.maxConversationAssetBytes, maxTotalAssetBytes: config.maxTotalAssetBytes };
  if (isPostgresUrl(config.store)) {
    const { PostgresConversationStore } = await import("./postgres-store.js");
    return new PostgresConversationStore(config.store, { onWarning, assetLimits });
  }
  return new LowdbConversationStore(config.dataDir, {
    cacheBytes: config.storeCacheBytes,
    assetLimits,
    onDamaged: (d) => log.warn(`conversation ${d.id} is damaged (${d.problem}); it is listed as damaged and can be deleted`),
    onWarning,
  });
}

/** How the start-up line names the store: the data dir, or the database without its password. */
export function describeStore(config: ServerConfig): string {
  if (!isPostgresUrl(config.store)) return `data dir ${config.dataDir}`;
  return `store ${redactPassword(config.store)}; data dir ${config.dataDir}`;
}
