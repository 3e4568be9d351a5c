/**
 * A bare JSON-RPC connection over `ws`, for what the generated client cannot
 * or should not do: send frames the protocol forbids (the attack scenario),
 * and talk to a server of another version with nothing but `initialize`,
 * `conversation.*` and `message.append` (the memory soak, which may run
 * against the code before the reliability work).
 *
 * Every frame received is parsed (up to `parseLimit`); replies (with an id
 * this side sent) settle their request, everything else goes to `onOther`
 * (notifications, replies with id null, batch replies, frames too long to
 * parse). Frames and bytes received are counted.
 */
import { WebSocket } from "ws";

export interface RpcErrorBody {
  code: number;
  message: string;
  data?: unknown;
}

export class RawRpcError extends Error {
  constructor(
    readonly method: string,
    readonly error: RpcErrorBody,
  ) {
    super(`${method}: ${error.message} (${error.code})`);
  }
}

export class RawClient {
  framesIn = 0;
  bytesIn = 0;
  /** Frames that were neither a reply to a request of ours nor parseable as one. */
  onOther: (message: unknown, text: string) => void = () => {};
  /** Frames longer than this (characters) are not parsed: they go to onOther with message undefined. */
  parseLimit = Infinity;
  #nextId = 1;
  readonly #pending = new Map<number, { method: string; resolve(value: any): void; reject(error: Error): void }>();
  #closed: Error | undefined;

  private constructor(readonly socket: WebSocket) {
    socket.on("message", (data, isBinary) => {
      const text = isBinary ? "" : String(data);
      this.framesIn++;
      this.bytesIn += (data as Buffer).length;
      let message: any;
      if (text.length > this.parseLimit) {
        this.onOther(undefined, text);
        return;
      }
      try {
        message = JSON.parse(text);
      } catch {
        this.onOther(undefined, text);
        return;
      }
      const pending = message && typeof message === "object" && !Array.isArray(message) && typeof message.id === "number" ? this.#pending.get(message.id) : undefined;
      if (!pending) {
        this.onOther(message, text);
        return;
      }
      this.#pending.delete(message.id);
      if (message.error) pending.reject(new RawRpcError(pending.method, message.error));
      else pending.resolve(message.result);
    });
    socket.on("close", (code, reason) => {
      this.#closed = new Error(`connection closed (${code} ${String(reason)})`);
      for (const pending of this.#pending.values()) pending.reject(this.#closed);
      this.#pending.clear();
    });
    socket.on("error", () => {
      // "close" follows and rejects what is pending.
    });
  }

  /** Open the socket and initialize (protocol 1.0). */
  static async connect(url: string, clientName = "agentwire-bench-raw"): Promise<RawClient> {
    const socket = new WebSocket(url, { perMessageDeflate: false, maxPayload: 256 * 1024 * 1024 });
    await new Promise<void>((resolve, reject) => {
      socket.once("open", () => resolve());
      socket.once("error", reject);
    });
    const client = new RawClient(socket);
    await client.request("initialize", { protocolVersion: "1.0", clientInfo: { name: clientName } });
    return client;
  }

  get closed(): boolean {
    return this.#closed !== undefined;
  }

  request<T = any>(method: string, params?: unknown): Promise<T> {
    if (this.#closed) return Promise.reject(this.#closed);
    const id = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { method, resolve, reject });
      this.socket.send(JSON.stringify({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) }));
    });
  }

  /** Send one text frame as it is (a Buffer is sent as text too). */
  sendFrame(frame: string | Buffer, done?: (error?: Error) => void): void {
    this.socket.send(frame, { binary: false }, done);
  }

  close(): Promise<void> {
    if (this.socket.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.socket.once("close", () => resolve());
      this.socket.close();
      setTimeout(() => {
        this.socket.terminate();
        resolve();
      }, 2000).unref();
    });
  }
}
