/**
 * Every error code a client can receive, in one table.
 *
 * Standard JSON-RPC 2.0 codes come first; application codes live in the
 * reserved server range -32000…-32099. Errors that never cross the wire
 * (socket closed, client-side timeout) are not here: the generated client
 * reports those with string codes of its own.
 */
export const ErrorCodes = {
  /** Invalid JSON was received. */
  PARSE_ERROR: -32700,
  /** The JSON sent is not a valid JSON-RPC 2.0 request object. */
  INVALID_REQUEST: -32600,
  /** The method does not exist. */
  METHOD_NOT_FOUND: -32601,
  /** Invalid method parameters; `data.issues` lists each problem with its path. */
  INVALID_PARAMS: -32602,
  /** An unexpected server fault. The message is generic; details go to the server log only. */
  INTERNAL_ERROR: -32603,

  /** A request other than `initialize` arrived before `initialize` succeeded on this connection. */
  NOT_INITIALIZED: -32001,
  /** `initialize` was sent twice on one connection. */
  ALREADY_INITIALIZED: -32002,
  /** The client speaks a protocol major version the server does not. `data.supported` names ours. */
  UNSUPPORTED_PROTOCOL_VERSION: -32003,
  /** No conversation has the given id (it never existed or was deleted). */
  CONVERSATION_NOT_FOUND: -32010,
  /** A generation is already running in this conversation; `interrupt` it or wait for it to end. */
  GENERATION_IN_PROGRESS: -32020,
  /** No tool call with this id exists in the conversation. */
  TOOL_CALL_NOT_FOUND: -32021,
  /** The tool call is no longer pending: it was already confirmed, skipped or ended. `data.status` tells which. */
  TOOL_CALL_NOT_PENDING: -32022,
  /** The language model endpoint failed (HTTP status, connection, stall). `data.status` carries its HTTP status when there is one. */
  LLM_ERROR: -32030,
  /** No model is configured: set AGENTWIRE_MODEL, --model, the conversation's model or `step`'s model. */
  MODEL_NOT_CONFIGURED: -32031,
  /** The endpoint lists no models (or has no `/models` route). */
  MODELS_UNAVAILABLE: -32032,
  /** Persisting to the store failed; nothing was half-written. */
  STORAGE_ERROR: -32040,
} as const;

export type ErrorCodeName = keyof typeof ErrorCodes;
export type ErrorCode = (typeof ErrorCodes)[ErrorCodeName];

/** One-line meanings, used in the OpenRPC document and in generic messages. */
export const ErrorMeanings: Record<ErrorCodeName, string> = {
  PARSE_ERROR: "Parse error: the frame is not valid JSON",
  INVALID_REQUEST: "Invalid request: not a JSON-RPC 2.0 request object",
  METHOD_NOT_FOUND: "Method not found",
  INVALID_PARAMS: "Invalid params: data.issues lists each problem with its path",
  INTERNAL_ERROR: "Internal error",
  NOT_INITIALIZED: "Not initialized: send initialize first",
  ALREADY_INITIALIZED: "Already initialized",
  UNSUPPORTED_PROTOCOL_VERSION: "Unsupported protocol version",
  CONVERSATION_NOT_FOUND: "Conversation not found",
  GENERATION_IN_PROGRESS: "A generation is already in progress in this conversation",
  TOOL_CALL_NOT_FOUND: "Tool call not found",
  TOOL_CALL_NOT_PENDING: "Tool call is not pending",
  LLM_ERROR: "The language model endpoint failed",
  MODEL_NOT_CONFIGURED: "No model configured",
  MODELS_UNAVAILABLE: "The endpoint lists no models",
  STORAGE_ERROR: "Storage error",
};
