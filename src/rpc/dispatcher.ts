/**
 * Turns one WebSocket text frame into (at most) one response frame.
 *
 * Envelope checks and batching are ours (spec-exact); valid single requests
 * go through json-rpc-2.0's JSONRPCServer, whose per-call `serverParams`
 * carries the connection. Params are validated here, once, with the
 * method's zod schema, so handlers receive typed values.
 */
import { JSONRPCErrorException, JSONRPCServer, type JSONRPCRequest, type JSONRPCResponse } from "json-rpc-2.0";
import type { z } from "zod";
import { ErrorCodes, requests, type RequestMethod, type Requests } from "../../protocol/index.js";
import type { Logger } from "../logging/logger.js";
import { classify, errorResponse, parseErrorResponse, type Classified, type ErrorResponse } from "./envelope.js";
import { RpcError } from "./rpc-error.js";

/** What a handler knows about the caller. */
export interface CallContext {
  connection: {
    readonly id: string;
    initialized: boolean;
  };
}

export type Handler<M extends RequestMethod, C extends CallContext> = (
  params: z.output<Requests[M]["params"]>,
  context: C,
) => Promise<z.input<Requests[M]["result"]>> | z.input<Requests[M]["result"]>;

/** Every method of the inventory must have a handler: the type makes a missing one a compile error. */
export type HandlerTable<C extends CallContext> = { [M in RequestMethod]: Handler<M, C> };

export interface FrameOutcome {
  /** The response frame to send, if any (notifications and client responses get none). */
  reply?: string;
  /** Responses from the client to server-initiated requests, for the client half. */
  clientResponses?: Record<string, unknown>[];
}

export class Dispatcher<C extends CallContext> {
  private readonly server: JSONRPCServer<C>;

  constructor(
    private readonly handlers: HandlerTable<C>,
    private readonly log: Logger,
  ) {
    this.server = new JSONRPCServer<C>({
      // Expected application errors are not worth a log line; faults are.
      errorListener: (message, error) => {
        if (!(error instanceof JSONRPCErrorException)) this.log.error(message, error);
      },
    });
    this.server.mapErrorToJSONRPCErrorResponse = (id, error) => {
      if (error instanceof JSONRPCErrorException) {
        return errorResponse(id, error.code, error.message, error.data) as never;
      }
      return errorResponse(id, ErrorCodes.INTERNAL_ERROR, "Internal error") as never;
    };
    for (const method of Object.keys(requests) as RequestMethod[]) {
      this.server.addMethod(method, (params, context) => this.invoke(method, params, context));
    }
  }

  async handleFrame(text: string, context: C): Promise<FrameOutcome> {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return { reply: JSON.stringify(parseErrorResponse()) };
    }
    const clientResponses: Record<string, unknown>[] = [];
    if (!Array.isArray(parsed)) {
      const reply = await this.handleOne(classify(parsed), context, clientResponses);
      return { reply: reply ? JSON.stringify(reply) : undefined, clientResponses };
    }
    if (parsed.length === 0) {
      return {
        reply: JSON.stringify(errorResponse(null, ErrorCodes.INVALID_REQUEST, "Invalid request: empty batch")),
      };
    }
    // Members run concurrently, as the spec allows; answers keep member order.
    const replies = await Promise.all(parsed.map((m) => this.handleOne(classify(m), context, clientResponses)));
    const answered = replies.filter((r): r is JSONRPCResponse | ErrorResponse => r !== null);
    return { reply: answered.length ? JSON.stringify(answered) : undefined, clientResponses };
  }

  private async handleOne(
    message: Classified,
    context: C,
    clientResponses: Record<string, unknown>[],
  ): Promise<JSONRPCResponse | ErrorResponse | null> {
    if (message.kind === "invalid") return errorResponse(message.id, ErrorCodes.INVALID_REQUEST, message.message);
    if (message.kind === "response") {
      clientResponses.push(message.message);
      return null;
    }
    if (!Object.prototype.hasOwnProperty.call(requests, message.method)) {
      if (message.id === undefined) return null;
      return errorResponse(message.id, ErrorCodes.METHOD_NOT_FOUND, `Method not found: "${message.method}"`);
    }
    const request: JSONRPCRequest = { jsonrpc: "2.0", method: message.method, params: message.params as never };
    if (message.id !== undefined) request.id = message.id;
    try {
      return await this.server.receive(request, context);
    } catch (error) {
      // receive() itself should never reject; if it does, the connection must survive.
      this.log.error(`dispatch of "${message.method}" failed`, error);
      return message.id === undefined ? null : errorResponse(message.id, ErrorCodes.INTERNAL_ERROR, "Internal error");
    }
  }

  private async invoke<M extends RequestMethod>(method: M, rawParams: unknown, context: C): Promise<unknown> {
    try {
      if (method !== "initialize" && !context.connection.initialized) {
        throw RpcError.notInitialized(method);
      }
      if (Array.isArray(rawParams)) {
        throw RpcError.invalidParam("", "params must be an object (by-name), not an array", "invalid_type");
      }
      const schema = requests[method].params as z.ZodType;
      const parsed = schema.safeParse(rawParams ?? {});
      if (!parsed.success) throw RpcError.fromZod(parsed.error);
      const handler = this.handlers[method] as unknown as (p: unknown, c: C) => unknown;
      return await handler(parsed.data, context);
    } catch (error) {
      if (error instanceof RpcError) throw new JSONRPCErrorException(error.message, error.code, error.data);
      throw error;
    }
  }
}
