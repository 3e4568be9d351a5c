/**
 * Domain failures as the wire errors clients get: the one map, used where a
 * request fails (the dispatcher's answer, and a request forwarded to this
 * instance as a conversation's owner) and where a generation fails (its
 * `error` notification and lastError). So a full disk, a damaged file or a
 * lost ownership has one code everywhere; only the message says what it
 * means for what failed: a request changed nothing, while a generation keeps
 * what it stored before. Local paths stay in the server log.
 *
 * It lives at the generation layer, the lowest that sees every domain error
 * (store, model endpoint, context) and both of its users (the loop here, the
 * handlers above).
 */
import { ErrorCodes, ErrorMeanings } from "../../protocol/index.js";
import { ContextTooLargeError } from "../context/context-records.js";
import { LlmError } from "../llm/provider.js";
import type { Logger } from "../logging/logger.js";
import { RpcError } from "../rpc/rpc-error.js";
import { AssetQuotaError } from "../store/asset-quota.js";
import { ConversationDamagedError } from "../store/conversation-store.js";
import { FencedError } from "../store/fenced-error.js";
import { StoreFileError } from "../store/store-file-error.js";

/** What failed: a request (it changed nothing), or a running generation (what it stored before stays). */
export type FailedWork = { kind: "request" } | { kind: "generation"; generationId: string };

export interface WireError {
  code: number;
  message: string;
  /** The code's `data`, as protocol/errors.ts documents it. */
  data?: unknown;
  /** The model endpoint's HTTP status, for an LLM_ERROR that had one. */
  status?: number;
}

/**
 * The wire error for a domain failure, or undefined when `error` is none of
 * them (a fault: the caller logs it and answers a generic internal error).
 * Logs what a client must not see (a store failure's path) on `log`.
 */
export function wireError(error: unknown, failed: FailedWork, log: Logger): WireError | undefined {
  const request = failed.kind === "request";
  if (error instanceof StoreFileError) {
    if (request) {
      log.error("a store write or read failed", error);
      return of(RpcError.storageError("the change could not be written to disk; nothing was changed"));
    }
    log.error(`generation ${failed.generationId} could not write its records`, error);
    return { code: ErrorCodes.STORAGE_ERROR, message: `${ErrorMeanings.STORAGE_ERROR}: the conversation could not be written to disk` };
  }
  if (error instanceof FencedError) {
    // Cluster mode: another instance took the conversation over, and the store or the bus refused this one's write.
    const detail = request
      ? "another instance took this conversation over; nothing was changed"
      : "another instance took this conversation over, so this generation was stopped; records stored before are kept";
    return request ? of(RpcError.ownerUnavailable(error.conversationId, detail, "lost")) : { code: ErrorCodes.OWNER_UNAVAILABLE, message: `${ErrorMeanings.OWNER_UNAVAILABLE}: ${detail}` };
  }
  if (error instanceof ConversationDamagedError) return of(RpcError.conversationDamaged(error.conversationId, error.problem));
  if (error instanceof AssetQuotaError) return of(RpcError.limitExceeded(error.message, error.limit, error.max, error.actual));
  if (error instanceof LlmError) {
    // The endpoint's own words, as the `error` notification has always carried them.
    return { code: ErrorCodes.LLM_ERROR, message: error.message, ...(error.status !== undefined ? { status: error.status } : {}) };
  }
  if (error instanceof ContextTooLargeError) {
    return {
      code: ErrorCodes.LIMIT_EXCEEDED,
      message: `${ErrorMeanings.LIMIT_EXCEEDED}: ${error.message}; lower settings.toolHistoryRounds or continue in a new conversation`,
    };
  }
  return undefined;
}

/** A failed request's answer: the wire error as an RpcError, or undefined for a fault (see wireError). */
export function requestError(log: Logger): (error: unknown) => RpcError | undefined {
  return (error) => {
    const wire = wireError(error, { kind: "request" }, log);
    return wire && RpcError.fromWire(wire.code, wire.message, wire.data);
  };
}

function of(error: RpcError): WireError {
  return { code: error.code, message: error.message, ...(error.data !== undefined ? { data: error.data } : {}) };
}
