/**
 * Turns one text frame into (at most) one reply frame.
 *
 * Envelope checks, batching and frame limits are ours (spec-exact); valid
 * single requests go through json-rpc-2.0's JSONRPCServer, whose per-call
 * `serverParams` carries the connection. Params are validated here, once,
 * with the method's zod schema, so handlers receive typed values.
 *
 * The schemas are not built at start: the method names, scopes and
 * experimental reasons come from protocol/method-table.ts (plain data,
 * generated from the inventory), params are checked with their data form
 * (protocol/params-data.ts, parsed by protocol/schema-data.ts), and
 * protocol/inventory.ts with every params schema is imported only for params
 * the data cannot decide, such as an invalid request's, whose error zod words (see
 * Dispatcher.schemas): a server that has seen only valid requests has built
 * none of them (test/bundle/start-path-schemas.test.ts).
 */
import { JSONRPCErrorException, JSONRPCServer, type JSONRPCRequest, type JSONRPCResponse } from "json-rpc-2.0";
import type * as z from "zod";
import { methodTable, type RequestMethod, type Requests } from "../../protocol/index.js";
import { fastParse, type SchemaNode } from "../../protocol/schema-data.js";
import type { Logger } from "../logging/logger.js";
import { classify, errorResponse, type Classified, type ErrorResponse, type JsonRpcId } from "./envelope.js";
import { DEFAULT_FRAME_LIMITS, frameShapeProblem, TimeSlicer, type FrameLimits } from "./frame-limits.js";
import { RpcError } from "./rpc-error.js";

/** What a handler knows about the caller. */
export interface CallContext {
  connection: {
    readonly id: string;
    initialized: boolean;
    /** Sent `capabilities.experimentalApi: true` in initialize. */
    experimentalApi: boolean;
  };
}

export type Handler<M extends RequestMethod, C extends CallContext> = (
  params: z.output<Requests[M]["params"]>,
  context: C,
) => Promise<z.input<Requests[M]["result"]>> | z.input<Requests[M]["result"]>;

/** Every method of the inventory must have a handler: the type makes a missing one a compile error. */
export type HandlerTable<C extends CallContext> = { [M in RequestMethod]: Handler<M, C> };

export interface DispatcherOptions<C extends CallContext> {
  handlers: HandlerTable<C>;
  log: Logger;
  limits?: Partial<FrameLimits>;
  /**
   * Turns an error a handler threw that is not an RpcError into one (e.g. a
   * store failure into STORAGE_ERROR), or returns undefined: then it is an
   * internal fault, logged and answered with a generic -32603.
   */
  translateError?: (error: unknown) => RpcError | undefined;
}

type Reply = JSONRPCResponse | ErrorResponse;

type MethodSchemas = (typeof import("../../protocol/inventory.js"))["requests"];
type ParamsData = Readonly<Record<RequestMethod, SchemaNode>>;

export class Dispatcher<C extends CallContext> {
  private readonly server: JSONRPCServer<C>;
  private readonly handlers: HandlerTable<C>;
  private readonly log: Logger;
  readonly limits: FrameLimits;
  private readonly translateError: (error: unknown) => RpcError | undefined;
  /**
   * The inventory's request table with every method's zod schemas, imported
   * for the first params the data below cannot decide (an invalid request),
   * shared by concurrent callers: building the ~80 methods' params, results and
   * event schemas costs time and memory that a server which has seen only
   * valid requests need not pay. (One import per process: a second dispatcher
   * gets the module already evaluated.)
   */
  private readonly schemas = new OnFirstUse<MethodSchemas>(async () => (await import("../../protocol/inventory.js")).requests);
  /**
   * Every request's params schema as data (protocol/params-data.ts, a small
   * module of plain data), imported on the first request: a request it finds
   * valid is checked without the method schemas.
   */
  private readonly params = new OnFirstUse<ParamsData>(async () => (await import("../../protocol/params-data.js")).PARAMS_DATA);

  constructor(options: DispatcherOptions<C>) {
    this.handlers = options.handlers;
    this.log = options.log;
    this.limits = { ...DEFAULT_FRAME_LIMITS, ...options.limits };
    this.translateError = options.translateError ?? (() => undefined);
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
      return wire(id, RpcError.internal()) as never;
    };
    for (const method of Object.keys(methodTable) as RequestMethod[]) {
      this.server.addMethod(method, (params, context) => this.invoke(method, params, context));
    }
  }

  /** Whether this dispatcher has imported the method schemas yet (a request whose params their data form cannot decide imports them). */
  get schemasLoaded(): boolean {
    return this.schemas.value !== undefined;
  }

  /**
   * The reply frame to send, if any (notifications and responses from the
   * client get none). `frame` is the text, or the received UTF-8 bytes: a
   * frame refused by its shape is then never decoded.
   */
  async handleFrame(frame: string | Buffer, context: C): Promise<string | undefined> {
    const { maxDepth, maxBatch } = this.limits;
    const shape = frameShapeProblem(frame, maxDepth, maxBatch);
    if (shape?.limit === "maxDepth") {
      return JSON.stringify(
        wire(null, RpcError.invalidRequest(`the frame nests deeper than ${maxDepth} levels (maxDepth)`, { limit: "maxDepth", max: maxDepth })),
      );
    }
    if (shape?.limit === "maxBatch") return JSON.stringify(wire(null, batchTooLong(shape.members, maxBatch)));
    let parsed: unknown;
    try {
      parsed = JSON.parse(typeof frame === "string" ? frame : frame.toString("utf8"));
    } catch {
      return JSON.stringify(wire(null, RpcError.parseError()));
    }
    const budget = { left: this.limits.maxReplyBytes };
    if (!Array.isArray(parsed)) {
      const reply = await this.handleOne(classify(parsed), context);
      return reply ? this.serialize(reply, budget) : undefined;
    }
    if (parsed.length === 0) return JSON.stringify(wire(null, RpcError.invalidRequest("empty batch")));
    if (parsed.length > maxBatch) return JSON.stringify(wire(null, batchTooLong(String(parsed.length), maxBatch)));
    // Members run one after another, as the spec allows, each answered and
    // serialized before the next starts: other connections are served between
    // members, and once the reply budget is spent the rest are refused without
    // doing their work.
    const parts: string[] = [];
    // Made for batches only: a single request has nothing to slice, and its clock (the global performance) loads
    // Node's perf_hooks on first use, ~0.7 ms of a one-shot that never sends a batch.
    const slicer = new TimeSlicer(this.limits.sliceMs);
    for (const member of parsed) {
      await slicer.pause();
      const message = classify(member);
      if (budget.left <= 0 && message.kind === "request" && message.id !== undefined) {
        parts.push(JSON.stringify(wire(message.id, this.replyLimit(undefined, true))));
        continue;
      }
      const reply = await this.handleOne(message, context);
      if (reply) parts.push(this.serialize(reply, budget));
    }
    return parts.length ? `[${parts.join(",")}]` : undefined;
  }

  /** JSON of one reply, or of a LIMIT_EXCEEDED error in its place when it would overdraw the frame's reply budget. */
  private serialize(reply: Reply, budget: { left: number }): string {
    let text = JSON.stringify(reply);
    // Characters undercount bytes only for non-ASCII text; count bytes when it could matter.
    const bytes = text.length * 3 > budget.left ? Buffer.byteLength(text) : text.length;
    if (bytes > budget.left) {
      text = JSON.stringify(wire(reply.id ?? null, this.replyLimit(bytes, budget.left < this.limits.maxReplyBytes)));
      budget.left -= text.length;
      return text;
    }
    budget.left -= bytes;
    return text;
  }

  /** LIMIT_EXCEEDED for an answer that does not fit the frame's reply budget (`bytes` when it was built). */
  private replyLimit(bytes: number | undefined, shared: boolean): RpcError {
    const max = this.limits.maxReplyBytes;
    const size = bytes === undefined ? "the batch's earlier answers filled" : `the answer would be ${bytes} bytes, over`;
    return RpcError.limitExceeded(
      `${size} the ${max}-byte limit of one reply frame (maxReplyBytes)${shared && bytes !== undefined ? " with the rest of the batch" : ""}; ask for less (a smaller limit, a page, or fewer requests per batch)`,
      "maxReplyBytes",
      max,
      bytes,
    );
  }

  private async handleOne(message: Classified, context: C): Promise<Reply | null> {
    if (message.kind === "invalid") return wire(message.id, RpcError.invalidRequest(message.detail));
    // Responses to server-initiated requests: the server sends none yet, so there is nothing to route.
    if (message.kind === "response") return null;
    if (!Object.prototype.hasOwnProperty.call(methodTable, message.method)) {
      if (message.id === undefined) return null;
      return wire(message.id, RpcError.methodNotFound(message.method));
    }
    const request: JSONRPCRequest = { jsonrpc: "2.0", method: message.method, params: message.params as never };
    if (message.id !== undefined) request.id = message.id;
    try {
      return await this.server.receive(request, context);
    } catch (error) {
      // receive() itself should never reject; if it does, the connection must survive.
      this.log.error(`dispatch of "${message.method}" failed`, error);
      return message.id === undefined ? null : wire(message.id, RpcError.internal());
    }
  }

  private async invoke<M extends RequestMethod>(method: M, rawParams: unknown, context: C): Promise<unknown> {
    try {
      if (method !== "initialize" && !context.connection.initialized) throw RpcError.notInitialized(method);
      const experimental = methodTable[method].experimental;
      if (experimental !== undefined && !context.connection.experimentalApi) {
        throw RpcError.experimentalApiRequired(method, experimental);
      }
      if (Array.isArray(rawParams)) throw RpcError.invalidParam("", "params must be an object (by-name), not an array", "invalid_type");
      // Once loaded, no await: a request pays the import only while it is under way.
      const fast = fastParse((this.params.value ?? (await this.params.get()))[method], rawParams ?? {});
      let params: unknown;
      if (typeof fast === "object") {
        params = fast.value;
      } else {
        // Invalid (zod words the error) or not decided without zod: the method's zod schema.
        const schema = (this.schemas.value ?? (await this.schemas.get()))[method].params as z.ZodType;
        const parsed = schema.safeParse(rawParams ?? {});
        if (!parsed.success) throw RpcError.fromZod(parsed.error);
        params = parsed.data;
      }
      const handler = this.handlers[method] as unknown as (p: unknown, c: C) => unknown;
      return await handler(params, context);
    } catch (error) {
      const rpc = error instanceof RpcError ? error : this.translateError(error);
      if (rpc) throw new JSONRPCErrorException(rpc.message, rpc.code, rpc.data);
      throw error;
    }
  }
}

/** A value loaded on first use: concurrent first callers share the one load, and a failed load is tried again by the next call. */
class OnFirstUse<T> {
  value: T | undefined;
  private loading: Promise<T> | undefined;

  constructor(private readonly load: () => Promise<T>) {}

  get(): Promise<T> {
    this.loading ??= this.load().then(
      (value) => (this.value = value),
      (error: unknown) => {
        this.loading = undefined;
        throw error;
      },
    );
    return this.loading;
  }
}

function batchTooLong(members: string, max: number): RpcError {
  return RpcError.invalidRequest(`a batch of ${members} requests is over the limit of ${max} (maxBatch)`, { limit: "maxBatch", max });
}

function wire(id: JsonRpcId, error: RpcError): ErrorResponse {
  return errorResponse(id, error.code, error.message, error.data);
}
