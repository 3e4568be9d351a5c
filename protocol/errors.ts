import * as z from "zod";
import { DamagedConversationEntry, EndpointStatus } from "./error-shapes.js";
import { ErrorCodes, ErrorMeanings, type ErrorCodeName } from "./error-codes.js";
export * from "./error-codes.js";

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
const ToolCallAskedFor = z.object({ toolCallId: z.string().describe("The tool call id that was asked for.") });
const EndpointFailure = z.object({ status: EndpointStatus });

/** One code of the error table. */
interface ErrorEntry {
  /** The JSON-RPC `error.code`. */
  readonly code: number;
  /** One line: the OpenRPC `message`, and how every message with this code starts. */
  readonly meaning: string;
  /** When the code is answered and what to do about it: the OpenRPC description and the generated client's JSDoc. */
  readonly doc: string;
  /** The `error.data` it carries, typed for clients; a code without one carries no data. */
  readonly data?: z.ZodType;
}

/**
 * Every error code a client can receive, in one table: one entry per code.
 * ErrorCodes, ErrorMeanings and ErrorData are its columns.
 *
 * Standard JSON-RPC 2.0 codes come first; application codes live in the
 * reserved server range -32000…-32099. Errors that never cross the wire
 * (socket closed, client-side timeout) are not here: the generated client
 * reports those with string codes of its own.
 */
export const ErrorTable = {
  PARSE_ERROR: {
    code: ErrorCodes.PARSE_ERROR,
    meaning: ErrorMeanings.PARSE_ERROR,
    doc: "Invalid JSON was received.",
  },
  INVALID_REQUEST: {
    code: ErrorCodes.INVALID_REQUEST,
    meaning: ErrorMeanings.INVALID_REQUEST,
    doc: "The JSON sent is not a valid JSON-RPC 2.0 request object.",
    data: z
      .object({
        limit: z.string().optional().describe("The frame limit that was exceeded (\"maxBatch\", \"maxDepth\"), when that was the problem."),
        max: z.number().int().optional().describe("The limit's value."),
      })
      .optional()
      .describe("Data of INVALID_REQUEST: present when a frame limit was exceeded."),
  },
  METHOD_NOT_FOUND: {
    code: ErrorCodes.METHOD_NOT_FOUND,
    meaning: ErrorMeanings.METHOD_NOT_FOUND,
    doc: "The method does not exist.",
  },
  INVALID_PARAMS: {
    code: ErrorCodes.INVALID_PARAMS,
    meaning: ErrorMeanings.INVALID_PARAMS,
    doc: "Invalid method parameters; `data.issues` lists each problem with its path.",
    data: z.object({ issues: z.array(ParamIssue).min(1).describe("Every problem found, each naming its field.") }),
  },
  INTERNAL_ERROR: {
    code: ErrorCodes.INTERNAL_ERROR,
    meaning: ErrorMeanings.INTERNAL_ERROR,
    doc: "An unexpected server fault. The message is generic; details go to the server log only.",
  },

  NOT_INITIALIZED: {
    code: ErrorCodes.NOT_INITIALIZED,
    meaning: ErrorMeanings.NOT_INITIALIZED,
    doc: "A request other than `initialize` arrived before `initialize` succeeded on this connection.",
  },
  ALREADY_INITIALIZED: {
    code: ErrorCodes.ALREADY_INITIALIZED,
    meaning: ErrorMeanings.ALREADY_INITIALIZED,
    doc: "`initialize` was sent twice on one connection.",
  },
  UNSUPPORTED_PROTOCOL_VERSION: {
    code: ErrorCodes.UNSUPPORTED_PROTOCOL_VERSION,
    meaning: ErrorMeanings.UNSUPPORTED_PROTOCOL_VERSION,
    doc: "The client speaks a protocol major version the server does not. `data.supported` names ours.",
    data: z.object({ supported: z.string().describe("The protocol version the server speaks.") }),
  },
  EXPERIMENTAL_API_REQUIRED: {
    code: ErrorCodes.EXPERIMENTAL_API_REQUIRED,
    meaning: ErrorMeanings.EXPERIMENTAL_API_REQUIRED,
    doc: "The method is experimental (its shape may still change): send `capabilities.experimentalApi: true` in `initialize` to use it.",
    data: z.object({
      method: z.string().describe("The experimental method."),
      reason: z.string().describe("Why it is experimental (what may still change)."),
    }),
  },
  CONVERSATION_NOT_FOUND: {
    code: ErrorCodes.CONVERSATION_NOT_FOUND,
    meaning: ErrorMeanings.CONVERSATION_NOT_FOUND,
    doc: "No conversation has the given id (it never existed or was deleted).",
    data: ConversationRef,
  },
  CONVERSATION_DAMAGED: {
    code: ErrorCodes.CONVERSATION_DAMAGED,
    meaning: ErrorMeanings.CONVERSATION_DAMAGED,
    doc: "The conversation's stored files are damaged, so it cannot be loaded; `conversation.delete` still removes it. `data.problem` says what is wrong.",
    data: DamagedConversationEntry,
  },
  CONVERSATION_EXISTS: {
    code: ErrorCodes.CONVERSATION_EXISTS,
    meaning: ErrorMeanings.CONVERSATION_EXISTS,
    doc: "conversation.create was given an `id` that a conversation already has (also a damaged one, or one being created at the same moment, on any instance sharing the store). Nothing was created; choose another id, or use the existing conversation.",
    data: ConversationRef,
  },
  CAPABILITY_UNSUPPORTED: {
    code: ErrorCodes.CAPABILITY_UNSUPPORTED,
    meaning: ErrorMeanings.CAPABILITY_UNSUPPORTED,
    doc: "The step would send the model something its provider declares it cannot take: an image (capability imageInput), a reasoning effort (reasoning), a temperature (temperature), tools (tools: the conversation offers tools; deny them all with settings.toolPolicy {\"*\": \"never\"}) or a maxTokens above its maxOutputTokens; on an agent runtime (config `runtimes`), a control that runtime does not offer (runtime: a control it does not offer, e.g. a temperature or tool.confirm edit of a Codex call, or its optional package is not installed: the message names the install command). Checked at `step`, before any request; nothing was sent or stored. `data` names the model and the capability.",
    data: z.object({
      model: z.string().describe("The model, as provider/model."),
      capability: z
        .enum(["imageInput", "reasoning", "temperature", "tools", "maxOutputTokens", "runtime"])
        .describe("The capability the model lacks (its key in the provider's `models` configuration; runtime: what its agent runtime cannot do)."),
    }),
  },
  GENERATION_IN_PROGRESS: {
    code: ErrorCodes.GENERATION_IN_PROGRESS,
    meaning: ErrorMeanings.GENERATION_IN_PROGRESS,
    doc: "A generation is already running in this conversation; `interrupt` it or wait for it to end.",
    data: z.object({ generationId: z.string().describe("The generation that is running.") }),
  },
  GENERATION_CHANGED: {
    code: ErrorCodes.GENERATION_CHANGED,
    meaning: ErrorMeanings.GENERATION_CHANGED,
    doc: "message.append named an expectedGenerationId that is not the running generation (it ended, or another one runs). Nothing was stored; `data.generationId` names the one running now (null when none runs): look at what happened, then send again.",
    data: z.object({
      expectedGenerationId: z.string().describe("The generation the request expected."),
      generationId: z.string().nullable().describe("The generation running now; null when none runs."),
    }),
  },
  NOTHING_TO_UNREWIND: {
    code: ErrorCodes.NOTHING_TO_UNREWIND,
    meaning: ErrorMeanings.NOTHING_TO_UNREWIND,
    doc: "conversation.unrewind found no rewind to put back: none was made, or records were appended since (a new message or generation makes the rewind final).",
  },
  TOOL_CALL_NOT_FOUND: {
    code: ErrorCodes.TOOL_CALL_NOT_FOUND,
    meaning: ErrorMeanings.TOOL_CALL_NOT_FOUND,
    doc: "No tool call with this id exists in the conversation.",
    data: ToolCallAskedFor,
  },
  TOOL_CALL_NOT_PENDING: {
    code: ErrorCodes.TOOL_CALL_NOT_PENDING,
    meaning: ErrorMeanings.TOOL_CALL_NOT_PENDING,
    doc: "The tool call is no longer pending: it was already confirmed, skipped or ended. `data.status` tells which.",
    data: ToolCallAskedFor.extend({
      status: z.string().describe("What happened to it instead (confirm, edit, skip, executing, completed, failed, skipped…)."),
    }),
  },
  INPUT_NOT_PENDING: {
    code: ErrorCodes.INPUT_NOT_PENDING,
    meaning: ErrorMeanings.INPUT_NOT_PENDING,
    doc: "input.respond named a question that is no longer open (another client answered first, it was cancelled) or never was. `data.outcome` says how it ended, when the server still knows.",
    data: z.object({
      requestId: z.string().describe("The request that was answered."),
      outcome: z.enum(["answered", "declined", "cancelled"]).optional().describe("How it ended; absent when the server does not know the request."),
    }),
  },
  LLM_ERROR: {
    code: ErrorCodes.LLM_ERROR,
    meaning: ErrorMeanings.LLM_ERROR,
    doc: "The language model endpoint failed (HTTP status, connection, stall). `data.status` carries its HTTP status when there is one.",
    data: EndpointFailure,
  },
  MODEL_NOT_CONFIGURED: {
    code: ErrorCodes.MODEL_NOT_CONFIGURED,
    meaning: ErrorMeanings.MODEL_NOT_CONFIGURED,
    doc: "No model is configured: set AGENTWIRE_MODEL, --model, the conversation's model or `step`'s model.",
  },
  MODELS_UNAVAILABLE: {
    code: ErrorCodes.MODELS_UNAVAILABLE,
    meaning: ErrorMeanings.MODELS_UNAVAILABLE,
    doc: "The endpoint lists no models (or has no `/models` route). No longer answered by models.list, which reports each provider's status instead; kept so clients that match on it still compile.",
    data: EndpointFailure,
  },
  STORAGE_ERROR: {
    code: ErrorCodes.STORAGE_ERROR,
    meaning: ErrorMeanings.STORAGE_ERROR,
    doc: "Persisting to the store failed (read-only or full disk, no file descriptors…); the change did not happen and left no trace.",
  },
  LIMIT_EXCEEDED: {
    code: ErrorCodes.LIMIT_EXCEEDED,
    meaning: ErrorMeanings.LIMIT_EXCEEDED,
    doc: "A server limit was reached (message size, conversation size, reply size, subscriptions, generations, bytes of uploaded images, MCP servers…). `data.limit` names the limit and `data.max` its value; nothing was changed.",
    data: z.object({
      limit: z
        .string()
        .describe(
          "Which limit: maxMessageBytes, maxConversationBytes, maxReplyBytes, maxSubscriptions, maxGenerations, maxConversationAssetBytes, maxTotalAssetBytes, maxMcpServers, …",
        ),
      max: z.number().describe("The limit's value (bytes or a count)."),
      actual: z.number().optional().describe("What the request would have needed, when known."),
    }),
  },
  MCP_ERROR: {
    code: ErrorCodes.MCP_ERROR,
    meaning: ErrorMeanings.MCP_ERROR,
    doc: "An MCP server could not be started or reached, or failed to answer (mcp.probe): the message says what happened (command not found, connection refused, HTTP 401, timed out…).",
    data: z.object({
      transport: z.enum(["stdio", "http"]).describe("How the server was to be reached."),
    }),
  },
  OWNER_UNAVAILABLE: {
    code: ErrorCodes.OWNER_UNAVAILABLE,
    meaning: ErrorMeanings.OWNER_UNAVAILABLE,
    doc: "Cluster mode (several instances on one Redis): the request needed the conversation's owning instance (step, interrupt, tool.confirm, message.append…) and that instance did not answer in time, or it was lost while running a generation (then as the `error` notification's code, sent by the instance that took the conversation over, or by the owner itself when it lost its lease because Redis did not confirm it in time). Nothing was done on the owner's side that this answer hides; ask again: once a dead owner's lease runs out (server.ownerLeaseMs), another instance takes the conversation.",
    data: ConversationRef.extend({
      instanceId: z.string().optional().describe("The cluster node that owned the conversation, when known."),
      reason: z
        .enum(["timeout", "unreachable", "not-owner", "lost"])
        .optional()
        .describe(
          "timeout: the owner did not answer in time (the request may have run there). unreachable: it could not be sent. not-owner: the instance asked had just given the conversation up. lost: the owner died while running a generation.",
        ),
    }),
  },
  // Every code of error-codes.ts, and no other (an extra key is an excess property here).
} as const satisfies { [N in ErrorCodeName]: ErrorEntry };

type Table = typeof ErrorTable;

/** The codes that carry `error.data`. */
export type ErrorDataCode = { [N in ErrorCodeName]: Table[N] extends { data: z.ZodType } ? N : never }[ErrorCodeName];

const names = Object.keys(ErrorTable) as ErrorCodeName[];

/**
 * The `error.data` each code carries, where it carries one, described as
 * "Data of NAME." unless its schema has a description of its own. Clients
 * can read these typed; codes not listed here carry no data.
 */
export const ErrorData = Object.fromEntries(
  names.flatMap((name) => {
    const data: z.ZodType | undefined = (ErrorTable[name] as ErrorEntry).data;
    if (data === undefined) return [];
    return [[name, data.description === undefined ? data.describe(`Data of ${name}.`) : data]];
  }),
) as { readonly [N in ErrorDataCode]: Table[N] extends { data: infer D extends z.ZodType } ? D : never };

export type ErrorDataOf<N extends ErrorCodeName> = N extends ErrorDataCode ? z.infer<(typeof ErrorData)[N]> : undefined;
export type ParamIssue = z.infer<typeof ParamIssue>;
