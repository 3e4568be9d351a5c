import type { Logger } from "../logging/logger.js";
import { RpcError } from "../rpc/rpc-error.js";
import { AssetQuotaError } from "../store/asset-quota.js";
import { ConversationDamagedError } from "../store/conversation-store.js";
import { StoreFileError } from "../store/store-file-error.js";

/**
 * Domain failures a handler may let through, as the wire errors clients
 * get: one place, so every method answers a full disk or a damaged file the
 * same way. Local paths stay in the server log.
 */
export function translateError(log: Logger): (error: unknown) => RpcError | undefined {
  return (error) => {
    if (error instanceof StoreFileError) {
      log.error("a store write or read failed", error);
      return RpcError.storageError("the change could not be written to disk; nothing was changed");
    }
    if (error instanceof ConversationDamagedError) return RpcError.conversationDamaged(error.conversationId, error.problem);
    if (error instanceof AssetQuotaError) return RpcError.limitExceeded(error.message, error.limit, error.max, error.actual);
    return undefined;
  };
}
