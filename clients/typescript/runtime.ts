/**
 * Runtime of the agentwire TypeScript client: connection, request/response
 * matching, per-call abort and timeout, notification dispatch. Hand-written;
 * the generated `index.ts` adds one typed method per request on top of
 * `AgentwireClientBase`, and the generated `types.ts` gives the types used here.
 *
 * Self-contained on purpose: it imports nothing but types from `./types.js`
 * (erased at run time), so the folder can be copied or published alone and
 * bundled for a browser without zod. Codegen imports this file to learn the
 * member names the runtime already uses; a value import from a generated file
 * would make `npm run gen` fail whenever that file is missing or stale.
 *
 * Works with the browser WebSocket and with the `ws` package (both offer
 * addEventListener; ws hands text frames over as strings and binary frames as
 * Buffers or ArrayBuffers).
 */
import type {
  InitializeParams,
  InitializeResult,
  NotificationMethod,
  NotificationParams,
  RequestMethod,
  RequestParams,
  RequestResult,
} from "./types.js";

/** The part of a WebSocket the client uses; the browser's and ws's both fit. */
export interface WebSocketLike {
  readonly readyState: number;
  binaryType?: string;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: "open" | "message" | "close" | "error", listener: (event: any) => void): void;
}

/** A WebSocket constructor: `globalThis.WebSocket` or `import { WebSocket } from "ws"`. */
export type WebSocketConstructor = new (url: string, protocols?: string | string[]) => WebSocketLike;

export interface AgentwireClientOptions {
  /** WebSocket implementation. Default: globalThis.WebSocket (browsers, Node ≥ 22); in Node 20 pass ws's WebSocket. */
  WebSocket?: WebSocketConstructor;
  /** Access token, sent as the `token` query parameter (browsers cannot set headers). */
  token?: string;
  /** WebSocket subprotocols to offer. */
  protocols?: string[];
  /** Who is connecting; shown in server.status and the server log. */
  clientInfo?: InitializeParams["clientInfo"];
  /** Sent in initialize, e.g. `{ notificationOptOut: ["generation_progress"] }`. */
  capabilities?: InitializeParams["capabilities"];
  /**
   * Use methods marked `@experimental` (their shape may still change): sends
   * `capabilities.experimentalApi: true` in initialize, merged with `capabilities`.
   * Without it the server answers them with EXPERIMENTAL_API_REQUIRED.
   */
  experimentalApi?: boolean;
  /**
   * Reject a request (and the connect steps) not answered within this many ms, with TIMEOUT.
   * Default: no limit. A call's own `timeoutMs` overrides it.
   */
  requestTimeoutMs?: number;
}

/** Options of one call: the last argument of every client method. */
export interface RequestOptions {
  /**
   * Abort the call: it rejects at once with AgentwireConnectionError code ABORTED (the abort
   * reason as `cause`) and a late answer is ignored. The server is not told: the request
   * still runs there.
   */
  signal?: AbortSignal;
  /** Reject with TIMEOUT if no answer comes within this many ms; overrides `requestTimeoutMs`. */
  timeoutMs?: number;
}

/**
 * An error answered by the server: `code` is a number from the ErrorCodes table. To read
 * `data` typed, narrow with `isRpcError(error, "INVALID_PARAMS")` (generated, in errors.ts).
 */
export class AgentwireRpcError extends Error {
  override readonly name = "AgentwireRpcError";
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/**
 * Local failures that never crossed the wire, with string codes so they can never be
 * mistaken for the server's numeric ones.
 */
export type AgentwireConnectionErrorCode = "CONNECTION_CLOSED" | "TIMEOUT" | "ABORTED";

/**
 * The socket closed (or could not open) before an answer came (CONNECTION_CLOSED), the answer
 * took too long (TIMEOUT), or the caller aborted the call with its signal (ABORTED).
 */
export class AgentwireConnectionError extends Error {
  override readonly name = "AgentwireConnectionError";
  constructor(
    readonly code: AgentwireConnectionErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export interface CloseInfo {
  /** WebSocket close code (1000 normal, 1006 abnormal, 1009 frame too big, …). */
  code: number;
  reason: string;
}

export type NotificationHandler<N extends NotificationMethod> = (params: NotificationParams<N>) => void;

/** Called with every notification; narrowing on `method` narrows `params`. */
export type AnyNotificationHandler = (
  ...args: { [N in NotificationMethod]: [method: N, params: NotificationParams<N>] }[NotificationMethod]
) => void;

/** Params are optional exactly when the method's params type accepts `{}`; call options come last. */
export type ParamsArgs<M extends RequestMethod> = {} extends RequestParams<M>
  ? [params?: RequestParams<M>, options?: RequestOptions]
  : [params: RequestParams<M>, options?: RequestOptions];

type Disposer = () => void;

interface PendingCall {
  method: string;
  resolve(result: unknown): void;
  reject(error: Error): void;
  timer?: ReturnType<typeof setTimeout>;
  /** Removes the abort listener; called however the call settles, so a long-lived signal does not leak. */
  unlisten?: () => void;
}

const OPEN = 1;
const METHOD_NOT_FOUND = -32601;

/**
 * Connection, request/response matching and notification dispatch. The
 * generated `AgentwireClient` adds one typed method per request; use its
 * static `connect`. Private state uses `#` names so generated members can
 * never collide with it.
 */
export class AgentwireClientBase {
  readonly #options: AgentwireClientOptions;
  #socket: WebSocketLike | undefined;
  #nextId = 1;
  readonly #pending = new Map<number, PendingCall>();
  readonly #handlers = new Map<string, Set<(params: any) => void>>();
  readonly #anyHandlers = new Set<(method: any, params: any) => void>();
  readonly #closeHandlers = new Set<(info: CloseInfo) => void>();
  /** Params of the `connected` notification, once it has arrived. */
  #connected: unknown;
  #closeInfo: CloseInfo | undefined;
  #lastError: string | undefined;
  #closing = false;
  #closeWaiters: Array<() => void> = [];
  #initializeResult: InitializeResult | undefined;

  protected constructor(options: AgentwireClientOptions = {}) {
    this.#options = options;
  }

  /** What the server answered to `initialize` (its version, capabilities, connection id). */
  get initializeResult(): InitializeResult {
    if (!this.#initializeResult) throw new Error("agentwire client: not connected yet");
    return this.#initializeResult;
  }

  /** Id of this connection, as shown in server.status. */
  get connectionId(): string {
    return this.initializeResult.connectionId;
  }

  /** True once the socket has closed (or close() was called). */
  get closed(): boolean {
    return this.#closing || this.#closeInfo !== undefined;
  }

  /**
   * Open the socket and send `initialize`. Rejects with AgentwireRpcError when
   * the server refuses, AgentwireConnectionError when the socket fails or a
   * step exceeds requestTimeoutMs; the socket is closed in every failure case.
   *
   * The server pushes `connected` right after the initialize answer, possibly
   * before the caller can subscribe to it: `on("connected", …)` registered
   * later is still called once with it (its content is also in initializeResult).
   *
   * `protocolVersion` comes from the generated index.ts, so this file holds no protocol data.
   */
  protected async handshake(url: string | URL, protocolVersion: string): Promise<void> {
    const Ctor = this.#options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
    if (!Ctor) {
      throw new TypeError("agentwire client: no global WebSocket here; pass options.WebSocket (in Node 20: the ws package's WebSocket)");
    }
    const target = new URL(url);
    if (this.#options.token !== undefined) target.searchParams.set("token", this.#options.token);
    const socket = new Ctor(target.toString(), this.#options.protocols);
    this.#socket = socket;
    if ("binaryType" in socket) socket.binaryType = "arraybuffer";

    const opened = new Promise<void>((resolve, reject) => {
      const timer = this.#startTimer(this.#options.requestTimeoutMs, () => {
        reject(new AgentwireConnectionError("TIMEOUT", `WebSocket did not open within ${this.#options.requestTimeoutMs} ms`));
        this.#abort();
      });
      socket.addEventListener("open", () => {
        clearTimeout(timer);
        resolve();
      });
      this.#closeWaiters.push(() => {
        clearTimeout(timer);
        reject(this.#closedError());
      });
    });
    socket.addEventListener("message", (event: { data: unknown }) => this.#onFrame(event.data));
    // Browsers and ws follow every error with a close event, which settles everything; ws also
    // needs a listener here or it throws. Keep the message (ws has one) for the close error.
    socket.addEventListener("error", (event: { message?: unknown }) => {
      if (typeof event?.message === "string" && event.message) this.#lastError = event.message;
    });
    socket.addEventListener("close", (event: { code?: number; reason?: unknown }) =>
      this.#onClose(event.code ?? 1006, typeof event.reason === "string" ? event.reason : ""),
    );

    try {
      await opened;
      const params: InitializeParams = { protocolVersion };
      if (this.#options.clientInfo) params.clientInfo = this.#options.clientInfo;
      const capabilities = { ...this.#options.capabilities };
      if (this.#options.experimentalApi) capabilities.experimentalApi = true;
      if (Object.keys(capabilities).length > 0) params.capabilities = capabilities;
      this.#initializeResult = await this.request("initialize", params);
    } catch (error) {
      this.#abort();
      throw error;
    }
  }

  /**
   * Send one request and resolve with its result; typed by the method map in types.ts.
   * `options` (last) can abort the call or give it its own time limit.
   */
  request<M extends RequestMethod>(method: M, ...args: ParamsArgs<M>): Promise<RequestResult<M>> {
    const [params, options = {}] = args as [unknown, RequestOptions?];
    return new Promise<RequestResult<M>>((resolve, reject) => {
      const socket = this.#socket;
      const { signal } = options;
      if (signal?.aborted) {
        reject(abortedError(method, signal));
        return;
      }
      if (this.closed || !socket || socket.readyState !== OPEN) {
        reject(this.#closedError());
        return;
      }
      const id = this.#nextId++;
      let frame: string;
      try {
        frame = JSON.stringify({ jsonrpc: "2.0", id, method, params: params ?? {} });
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
        return;
      }
      const call: PendingCall = { method, resolve: resolve as (result: unknown) => void, reject };
      const timeoutMs = options.timeoutMs ?? this.#options.requestTimeoutMs;
      call.timer = this.#startTimer(timeoutMs, () => {
        this.#settle(id);
        reject(new AgentwireConnectionError("TIMEOUT", `${method}: no answer within ${timeoutMs} ms`));
      });
      if (signal) {
        const onAbort = () => {
          this.#settle(id);
          reject(abortedError(method, signal));
        };
        signal.addEventListener("abort", onAbort, { once: true });
        call.unlisten = () => signal.removeEventListener("abort", onAbort);
      }
      this.#pending.set(id, call);
      try {
        socket.send(frame);
      } catch (error) {
        this.#settle(id);
        reject(new AgentwireConnectionError("CONNECTION_CLOSED", `${method}: send failed: ${String(error)}`));
      }
    });
  }

  /** Call `handler` with the params of every `method` notification until the returned disposer is called. */
  on<N extends NotificationMethod>(method: N, handler: NotificationHandler<N>): Disposer {
    let set = this.#handlers.get(method);
    if (!set) this.#handlers.set(method, (set = new Set()));
    const entry = (params: any) => handler(params);
    set.add(entry);
    // `connected` is a one-time state, not a stream: a late subscriber still hears it.
    const connected = this.#connected;
    if (method === "connected" && connected !== undefined) {
      queueMicrotask(() => {
        if (set.has(entry)) this.#fire(entry, connected);
      });
    }
    return () => {
      set.delete(entry);
    };
  }

  /** Call `handler` with every notification (method and params) until the returned disposer is called. */
  onAny(handler: AnyNotificationHandler): Disposer {
    const entry = (method: any, params: any) => handler(method, params);
    this.#anyHandlers.add(entry);
    return () => {
      this.#anyHandlers.delete(entry);
    };
  }

  /** Call `handler` once when the socket closes (at once, asynchronously, if it already has). */
  onClose(handler: (info: CloseInfo) => void): Disposer {
    const entry = (info: CloseInfo) => handler(info);
    this.#closeHandlers.add(entry);
    const info = this.#closeInfo;
    if (info) queueMicrotask(() => this.#closeHandlers.has(entry) && this.#fire(entry, info));
    return () => {
      this.#closeHandlers.delete(entry);
    };
  }

  /** Close the connection; resolves once the socket has closed. Pending requests reject with CONNECTION_CLOSED. */
  close(code = 1000, reason = ""): Promise<void> {
    if (this.#closeInfo) return Promise.resolve();
    const done = new Promise<void>((resolve) => this.#closeWaiters.push(resolve));
    this.#closing = true;
    try {
      this.#socket?.close(code, reason);
    } catch {
      this.#onClose(code, reason);
    }
    if (!this.#socket) this.#onClose(code, reason);
    return done;
  }

  #startTimer(ms: number | undefined, onTimeout: () => void): ReturnType<typeof setTimeout> | undefined {
    return ms === undefined ? undefined : setTimeout(onTimeout, ms);
  }

  /** Close after a failed connect; the close event settles everything still waiting. */
  #abort(): void {
    if (this.#closeInfo) return;
    this.#closing = true;
    try {
      this.#socket?.close(1000, "connect failed");
    } catch {
      this.#onClose(1006, "connect failed");
    }
  }

  #closedError(): AgentwireConnectionError {
    const info = this.#closeInfo;
    let how = info ? `code ${info.code}` : "closed by the client";
    if (info?.reason) how += `, reason "${info.reason}"`;
    if (this.#lastError) how += `, error: ${this.#lastError}`;
    return new AgentwireConnectionError("CONNECTION_CLOSED", `agentwire connection closed (${how})`);
  }

  #settle(id: number): PendingCall | undefined {
    const call = this.#pending.get(id);
    if (!call) return undefined;
    this.#pending.delete(id);
    clearTimeout(call.timer);
    call.unlisten?.();
    return call;
  }

  #onFrame(data: unknown): void {
    let text: string;
    if (typeof data === "string") text = data;
    else if (data instanceof ArrayBuffer || ArrayBuffer.isView(data)) text = new TextDecoder().decode(data);
    else return; // e.g. a Blob from a socket whose binaryType could not be set; the server sends text only
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      return;
    }
    for (const item of Array.isArray(message) ? message : [message]) this.#onMessage(item);
  }

  #onMessage(message: unknown): void {
    if (typeof message !== "object" || message === null) return;
    const m = message as { id?: unknown; method?: unknown; params?: unknown; result?: unknown; error?: unknown };
    if (typeof m.method === "string") {
      if (m.id !== undefined) this.#refuseServerRequest(m.id, m.method);
      else this.#dispatch(m.method, m.params);
      return;
    }
    if (typeof m.id !== "number") return; // id null: the server could not read one of our frames
    const call = this.#settle(m.id);
    if (!call) return; // timed out already
    if ("error" in m) {
      const e = (m.error ?? {}) as { code?: unknown; message?: unknown; data?: unknown };
      const code = typeof e.code === "number" ? e.code : 0;
      const text = typeof e.message === "string" ? e.message : `${call.method} failed`;
      call.reject(new AgentwireRpcError(code, text, e.data));
    } else {
      call.resolve(m.result);
    }
  }

  /** No server→client requests exist in this protocol version. */
  #refuseServerRequest(id: unknown, method: string): void {
    if (this.#socket?.readyState !== OPEN) return;
    const error = { code: METHOD_NOT_FOUND, message: `Method not found: ${method}` };
    this.#socket.send(JSON.stringify({ jsonrpc: "2.0", id, error }));
  }

  #dispatch(method: string, params: unknown): void {
    if (method === "connected") this.#connected = params;
    for (const handler of [...(this.#handlers.get(method) ?? [])]) this.#fire(handler, params);
    for (const handler of [...this.#anyHandlers]) this.#fire(handler, method, params);
  }

  /** A throwing handler must not starve the others; its error still surfaces, as an uncaught one. */
  #fire<A extends unknown[]>(handler: (...args: A) => void, ...args: A): void {
    try {
      handler(...args);
    } catch (error) {
      queueMicrotask(() => {
        throw error;
      });
    }
  }

  #onClose(code: number, reason: string): void {
    if (this.#closeInfo) return;
    const info: CloseInfo = { code, reason };
    this.#closeInfo = info;
    const error = this.#closedError();
    for (const id of [...this.#pending.keys()]) this.#settle(id)?.reject(error);
    for (const waiter of this.#closeWaiters.splice(0)) waiter();
    for (const handler of [...this.#closeHandlers]) this.#fire(handler, info);
  }
}

function abortedError(method: string, signal: AbortSignal): AgentwireConnectionError {
  return new AgentwireConnectionError("ABORTED", `${method}: aborted by the caller`, { cause: signal.reason });
}
