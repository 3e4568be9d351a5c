import { ErrorCodes, ErrorMeanings, type ErrorCodeName } from "../../protocol/index.js";

/**
 * An error that crosses the wire with its code, message and data. Anything
 * else thrown by a handler is an internal fault: logged, and answered with a
 * generic -32603 so no stack or path leaks to clients.
 */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = "RpcError";
  }

  static of(name: ErrorCodeName, detail?: string, data?: unknown): RpcError {
    const meaning = ErrorMeanings[name];
    return new RpcError(ErrorCodes[name], detail ? `${meaning}: ${detail}` : meaning, data);
  }
}

export function conversationNotFound(id: string): RpcError {
  return RpcError.of("CONVERSATION_NOT_FOUND", `no conversation with id "${id}"`, { conversationId: id });
}
