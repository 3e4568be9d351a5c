/**
 * The error codes and their one-line meanings: the two columns of
 * errors.ts's ErrorTable that the server reads at every start (every
 * RpcError carries both), kept apart from the table's `error.data` schemas,
 * which only codegen and the docs need. errors.ts's table takes its codes and
 * meanings from here, and re-exports both, so its importers need not change;
 * its type checks that both name every code of the table and no other.
 */

/** Error codes by name, e.g. `ErrorCodes.INVALID_PARAMS` is -32602 (as a literal type). */
export const ErrorCodes = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  NOT_INITIALIZED: -32001,
  ALREADY_INITIALIZED: -32002,
  UNSUPPORTED_PROTOCOL_VERSION: -32003,
  EXPERIMENTAL_API_REQUIRED: -32004,
  CONVERSATION_NOT_FOUND: -32010,
  CONVERSATION_DAMAGED: -32011,
  CONVERSATION_EXISTS: -32013,
  CAPABILITY_UNSUPPORTED: -32012,
  GENERATION_IN_PROGRESS: -32020,
  GENERATION_CHANGED: -32023,
  NOTHING_TO_UNREWIND: -32024,
  TOOL_CALL_NOT_FOUND: -32021,
  TOOL_CALL_NOT_PENDING: -32022,
  INPUT_NOT_PENDING: -32027,
  LLM_ERROR: -32030,
  MODEL_NOT_CONFIGURED: -32031,
  MODELS_UNAVAILABLE: -32032,
  STORAGE_ERROR: -32040,
  LIMIT_EXCEEDED: -32050,
  MCP_ERROR: -32060,
  OWNER_UNAVAILABLE: -32070,
} as const;

export type ErrorCodeName = keyof typeof ErrorCodes;
export type ErrorCode = (typeof ErrorCodes)[ErrorCodeName];

/** One-line meanings, used in the OpenRPC document and in generic messages. */
export const ErrorMeanings: Readonly<Record<ErrorCodeName, string>> = {
  PARSE_ERROR: "Parse error: the frame is not valid JSON",
  INVALID_REQUEST: "Invalid request: not a JSON-RPC 2.0 request object",
  METHOD_NOT_FOUND: "Method not found",
  INVALID_PARAMS: "Invalid params: data.issues lists each problem with its path",
  INTERNAL_ERROR: "Internal error",
  NOT_INITIALIZED: "Not initialized: send initialize first",
  ALREADY_INITIALIZED: "Already initialized",
  UNSUPPORTED_PROTOCOL_VERSION: "Unsupported protocol version",
  EXPERIMENTAL_API_REQUIRED: "Experimental method: initialize with capabilities.experimentalApi true",
  CONVERSATION_NOT_FOUND: "Conversation not found",
  CONVERSATION_DAMAGED: "Conversation damaged",
  CONVERSATION_EXISTS: "Conversation already exists",
  CAPABILITY_UNSUPPORTED: "The model cannot do what was asked",
  GENERATION_IN_PROGRESS: "A generation is already in progress in this conversation",
  GENERATION_CHANGED: "The generation the request expected is not the one running",
  NOTHING_TO_UNREWIND: "Nothing to unrewind",
  TOOL_CALL_NOT_FOUND: "Tool call not found",
  TOOL_CALL_NOT_PENDING: "Tool call is not pending",
  INPUT_NOT_PENDING: "The question is not open",
  LLM_ERROR: "The language model endpoint failed",
  MODEL_NOT_CONFIGURED: "No model configured",
  MODELS_UNAVAILABLE: "The endpoint lists no models",
  STORAGE_ERROR: "Storage error",
  LIMIT_EXCEEDED: "Limit exceeded",
  MCP_ERROR: "MCP server error",
  OWNER_UNAVAILABLE: "The instance that owns the conversation cannot be reached",
};
