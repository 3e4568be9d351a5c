import { z } from "zod";

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
  /** The method is experimental (its shape may still change): send `capabilities.experimentalApi: true` in `initialize` to use it. */
  EXPERIMENTAL_API_REQUIRED: -32004,
  /** No conversation has the given id (it never existed or was deleted). */
  CONVERSATION_NOT_FOUND: -32010,
  /** The conversation's stored files are damaged, so it cannot be loaded; `conversation.delete` still removes it. `data.problem` says what is wrong. */
  CONVERSATION_DAMAGED: -32011,
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
  /** Persisting to the store failed (read-only or full disk, no file descriptors…); the change did not happen and left no trace. */
  STORAGE_ERROR: -32040,
  /** A server limit was reached (message size, conversation size, reply size, subscriptions, generations…). `data.limit` names the limit and `data.max` its value; nothing was changed. */
  LIMIT_EXCEEDED: -32050,
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
  EXPERIMENTAL_API_REQUIRED: "Experimental method: initialize with capabilities.experimentalApi true",
  CONVERSATION_NOT_FOUND: "Conversation not found",
  CONVERSATION_DAMAGED: "Conversation damaged",
  GENERATION_IN_PROGRESS: "A generation is already in progress in this conversation",
  TOOL_CALL_NOT_FOUND: "Tool call not found",
  TOOL_CALL_NOT_PENDING: "Tool call is not pending",
  LLM_ERROR: "The language model endpoint failed",
  MODEL_NOT_CONFIGURED: "No model configured",
  MODELS_UNAVAILABLE: "The endpoint lists no models",
  STORAGE_ERROR: "Storage error",
  LIMIT_EXCEEDED: "Limit exceeded",
};

/** One problem with a request's params. */
export const ParamIssue = z
  .object({
    path: z
      .string()
      .describe("Where the problem is, in dot-and-bracket notation from the params object: \"settings.maxIterations\", \"arguments.edits[0].text\"; \"\" for the params object itself."),
    message: z.string().describe("What is wrong, in words."),
    code: z.string().describe("Machine-readable kind of problem (zod's issue codes, e.g. \"invalid_type\", \"too_big\", \"unrecognized_keys\", or \"custom\")."),
  })
  .describe("One problem with a request's params.");

const ConversationRef = z.object({ conversationId: z.string().describe("The conversation concerned.") });

/**
 * The `error.data` each code carries, where it carries one. Clients can read
 * these typed; codes not listed here carry no data.
 */
export const ErrorData = {
  INVALID_REQUEST: z
    .object({
      limit: z.string().optional().describe("The frame limit that was exceeded (\"maxBatch\", \"maxDepth\"), when that was the problem."),
      max: z.number().int().optional().describe("The limit's value."),
    })
    .optional()
    .describe("Data of INVALID_REQUEST: present when a frame limit was exceeded."),
  INVALID_PARAMS: z
    .object({ issues: z.array(ParamIssue).min(1).describe("Every problem found, each naming its field.") })
    .describe("Data of INVALID_PARAMS."),
  UNSUPPORTED_PROTOCOL_VERSION: z
    .object({ supported: z.string().describe("The protocol version the server speaks.") })
    .describe("Data of UNSUPPORTED_PROTOCOL_VERSION."),
  EXPERIMENTAL_API_REQUIRED: z
    .object({
      method: z.string().describe("The experimental method."),
      reason: z.string().describe("Why it is experimental (what may still change)."),
    })
    .describe("Data of EXPERIMENTAL_API_REQUIRED."),
  CONVERSATION_NOT_FOUND: ConversationRef.describe("Data of CONVERSATION_NOT_FOUND."),
  CONVERSATION_DAMAGED: ConversationRef.extend({
    problem: z.string().describe("What is wrong with its stored files (no local paths)."),
  }).describe("Data of CONVERSATION_DAMAGED."),
  GENERATION_IN_PROGRESS: z
    .object({ generationId: z.string().describe("The generation that is running.") })
    .describe("Data of GENERATION_IN_PROGRESS."),
  TOOL_CALL_NOT_FOUND: z
    .object({ toolCallId: z.string().describe("The tool call id that was asked for.") })
    .describe("Data of TOOL_CALL_NOT_FOUND."),
  TOOL_CALL_NOT_PENDING: z
    .object({
      toolCallId: z.string().describe("The tool call."),
      status: z.string().describe("What happened to it instead (confirm, edit, skip, executing, completed, failed, skipped…)."),
    })
    .describe("Data of TOOL_CALL_NOT_PENDING."),
  LLM_ERROR: z
    .object({ status: z.number().int().optional().describe("HTTP status from the model endpoint, when there was one.") })
    .describe("Data of LLM_ERROR."),
  MODELS_UNAVAILABLE: z
    .object({ status: z.number().int().optional().describe("HTTP status from the model endpoint, when there was one.") })
    .describe("Data of MODELS_UNAVAILABLE."),
  LIMIT_EXCEEDED: z
    .object({
      limit: z
        .string()
        .describe("Which limit: maxMessageBytes, maxConversationBytes, maxReplyBytes, maxSubscriptions, maxGenerations, …"),
      max: z.number().describe("The limit's value (bytes or a count)."),
      actual: z.number().optional().describe("What the request would have needed, when known."),
    })
    .describe("Data of LIMIT_EXCEEDED."),
} as const satisfies Partial<Record<ErrorCodeName, z.ZodType>>;

export type ErrorDataCode = keyof typeof ErrorData;
export type ErrorDataOf<N extends ErrorCodeName> = N extends ErrorDataCode ? z.infer<(typeof ErrorData)[N]> : undefined;
export type ParamIssue = z.infer<typeof ParamIssue>;
