import type * as z from "zod";
import {
  ErrorCodes,
  ErrorMeanings,
  type ErrorCodeName,
  type ErrorDataOf,
  type ParamIssue,
} from "../../protocol/index.js";
import { formatIssuePath } from "../../protocol/issue-path.js";

/**
 * An error that crosses the wire with its code, message and data. Anything
 * else thrown by a handler is an internal fault: logged, and answered with a
 * generic -32603 so no stack or path leaks to clients.
 *
 * Build one with a factory named after its code (`RpcError.invalidParams`,
 * `RpcError.conversationNotFound`, …): each fills in the code, a message that
 * starts with the code's meaning, and the `data` shape protocol/errors.ts
 * documents for it, so every place that raises a code raises it alike.
 */
export class RpcError extends Error {
  private constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = "RpcError";
  }

  /** The generic form: code by name, meaning + detail as message, data typed by protocol/errors.ts. */
  static of<N extends ErrorCodeName>(name: N, detail: string | undefined, ...data: DataArg<N>): RpcError {
    const meaning = ErrorMeanings[name];
    return new RpcError(ErrorCodes[name], detail ? `${meaning}: ${detail}` : meaning, data[0]);
  }

  /**
   * An error as another instance answered it (a forwarded request, cluster
   * mode): its code, message and data pass through as they are, so a client
   * cannot tell which instance ran the request.
   */
  static fromWire(code: number, message: string, data?: unknown): RpcError {
    return new RpcError(code, message, data);
  }

  /** Cluster mode: the conversation's owner did not answer (or was lost). */
  static ownerUnavailable(
    conversationId: string,
    detail: string,
    reason: "timeout" | "unreachable" | "not-owner" | "lost",
    instanceId?: string,
  ): RpcError {
    return RpcError.of("OWNER_UNAVAILABLE", detail, { conversationId, reason, ...(instanceId ? { instanceId } : {}) });
  }

  static parseError(): RpcError {
    return RpcError.of("PARSE_ERROR", undefined);
  }

  static invalidRequest(detail: string, limit?: { limit: string; max: number }): RpcError {
    return new RpcError(ErrorCodes.INVALID_REQUEST, `Invalid request: ${detail}`, limit);
  }

  static methodNotFound(method: string): RpcError {
    return new RpcError(ErrorCodes.METHOD_NOT_FOUND, `Method not found: "${method}"`);
  }

  /**
   * -32602 naming every offending field: in the message (`settings.maxIterations: Too big…`)
   * and in `data.issues`, with paths in one notation (`a.b[0].c`).
   */
  static invalidParams(issues: readonly ParamIssue[]): RpcError {
    const summary = issues.map((i) => `${i.path || "params"}: ${i.message}`).join("; ");
    return new RpcError(ErrorCodes.INVALID_PARAMS, `Invalid params: ${summary}`, { issues: [...issues] });
  }

  /** -32602 for one field, e.g. `invalidParam("workspace", "not an existing directory")`. */
  static invalidParam(path: string, message: string, code = "custom"): RpcError {
    return RpcError.invalidParams([{ path, message, code }]);
  }

  /** -32602 from a zod failure; `prefix` roots its paths inside the params (e.g. "arguments"). */
  static fromZod(error: z.ZodError, prefix: readonly PropertyKey[] = []): RpcError {
    return RpcError.invalidParams(
      error.issues.map((issue) => ({ path: formatIssuePath([...prefix, ...issue.path]), message: issue.message, code: issue.code })),
    );
  }

  static internal(): RpcError {
    return RpcError.of("INTERNAL_ERROR", undefined);
  }

  static notInitialized(method: string): RpcError {
    return RpcError.of("NOT_INITIALIZED", `"${method}" was sent before initialize`);
  }

  static alreadyInitialized(): RpcError {
    return RpcError.of("ALREADY_INITIALIZED", "initialize was already sent on this connection");
  }

  static unsupportedProtocolVersion(offered: string, supported: string): RpcError {
    return RpcError.of("UNSUPPORTED_PROTOCOL_VERSION", `client speaks "${offered}", server speaks "${supported}"`, { supported });
  }

  static experimentalApiRequired(method: string, reason: string): RpcError {
    return RpcError.of("EXPERIMENTAL_API_REQUIRED", `"${method}" is experimental (${reason})`, { method, reason });
  }

  static conversationNotFound(conversationId: string): RpcError {
    return RpcError.of("CONVERSATION_NOT_FOUND", `no conversation with id "${conversationId}"`, { conversationId });
  }

  static conversationExists(conversationId: string): RpcError {
    return RpcError.of("CONVERSATION_EXISTS", `a conversation with id "${conversationId}" already exists`, { conversationId });
  }

  static conversationDamaged(conversationId: string, problem: string): RpcError {
    return RpcError.of(
      "CONVERSATION_DAMAGED",
      `conversation "${conversationId}" cannot be loaded (${problem}); conversation.delete removes it`,
      { conversationId, problem },
    );
  }

  static generationInProgress(generationId: string): RpcError {
    return RpcError.of("GENERATION_IN_PROGRESS", `generation ${generationId} is running; interrupt it or wait`, { generationId });
  }

  static generationChanged(expectedGenerationId: string, generationId: string | null): RpcError {
    const running = generationId ? `generation ${generationId} is running` : "no generation is running";
    return RpcError.of("GENERATION_CHANGED", `expectedGenerationId ${expectedGenerationId} is not the running generation: ${running}`, {
      expectedGenerationId,
      generationId,
    });
  }

  static toolCallNotFound(toolCallId: string): RpcError {
    return RpcError.of("TOOL_CALL_NOT_FOUND", `no tool call "${toolCallId}" in this conversation`, { toolCallId });
  }

  static toolCallNotPending(toolCallId: string, status: string): RpcError {
    return RpcError.of("TOOL_CALL_NOT_PENDING", `tool call "${toolCallId}" was already decided (${status})`, { toolCallId, status });
  }

  static inputNotPending(requestId: string, outcome?: "answered" | "declined" | "cancelled"): RpcError {
    const why = outcome ? `it was already ${outcome}` : "no such question is open in this conversation";
    return RpcError.of("INPUT_NOT_PENDING", `question "${requestId}" is not open: ${why}`, { requestId, ...(outcome ? { outcome } : {}) });
  }

  static llmError(message: string, status?: number): RpcError {
    return RpcError.of("LLM_ERROR", message, status !== undefined ? { status } : {});
  }

  static modelNotConfigured(): RpcError {
    return RpcError.of("MODEL_NOT_CONFIGURED", "set AGENTWIRE_MODEL or --model, the conversation's model, or step's model");
  }

  /** The step would send `model` something it declares it cannot take (see src/llm/capability-gate.ts). */
  static capabilityUnsupported(detail: string, model: string, capability: ErrorDataOf<"CAPABILITY_UNSUPPORTED">["capability"]): RpcError {
    return RpcError.of("CAPABILITY_UNSUPPORTED", detail, { model, capability });
  }

  /** The change did not happen; the cause (with its local path) belongs in the server log only. */
  static storageError(what: string): RpcError {
    return RpcError.of("STORAGE_ERROR", what);
  }

  /** A server limit: `limit` is its name as configured (e.g. "maxMessageBytes"), `max` its value. */
  static limitExceeded(detail: string, limit: string, max: number, actual?: number): RpcError {
    return RpcError.of("LIMIT_EXCEEDED", detail, { limit, max, ...(actual !== undefined ? { actual } : {}) });
  }

  /** An MCP server that could not be started, reached or understood (mcp.probe). */
  static mcpError(detail: string, transport: "stdio" | "http"): RpcError {
    return RpcError.of("MCP_ERROR", detail, { transport });
  }
}

type DataArg<N extends ErrorCodeName> = ErrorDataOf<N> extends undefined ? [] : [data: ErrorDataOf<N>];
