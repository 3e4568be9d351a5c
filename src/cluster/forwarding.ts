import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import { ErrorCodes, ErrorMeanings } from "../../protocol/index.js";
import type { Logger } from "../logging/logger.js";
import { ClusterKeys } from "./cluster-keys.js";

/**
 * How `step`, `interrupt` and `tool.confirm` reach a conversation's owner
 * from another instance: a request/response over Redis pub/sub. Each
 * instance listens on its own request channel and its own reply channel;
 * a request carries a correlation id and the sender's id, the owner runs it
 * and publishes the outcome to the sender's reply channel.
 *
 * Forward, or move ownership? Forward, for all three. The owner holds what
 * cannot move: an HTTP stream from the model mid-answer, tool processes
 * (process groups on its machine, in its workspace), confirmations waiting in
 * its memory. Moving ownership to serve an `interrupt` or a `tool.confirm`
 * would mean ending that work first — the opposite of what was asked. A
 * `step` on a conversation with a live owner is forwarded too: the owner has
 * the loaded state, the seq numbering and the auto-confirm budget, and it
 * answers "already generating" itself. Ownership moves only when nobody
 * holds the conversation (the owner released it when it went idle, or died
 * and its lease ran out): then the instance that got the request acquires
 * the lease and runs it locally. So ownership drifts to where work is asked
 * for, without ever moving under running work.
 *
 * Delivery is at most once: a request is published once; if the owner is
 * not listening, PUBLISH reaches nobody and the call fails at once
 * ("unreachable"), and if no reply comes within the timeout the call fails
 * ("timeout") — the caller then looks up the owner again (it may have died
 * and the lease moved). These methods are safe to ask again: a second step
 * gets "generation in progress", interrupt is idempotent, a confirm of a
 * call no longer pending says so.
 */
export interface ForwardRequest {
  method: string;
  conversationId: string;
  params: unknown;
  /**
   * The connection that sent the request, on the forwarding instance: what
   * the owner needs to answer it later (client_tool_call to the connection
   * that registered a client tool) and to recognise it (tool.result).
   */
  caller?: ForwardCaller;
}

/** Who sent a forwarded request: its connection id and clientInfo.name on the instance it reached. */
export interface ForwardCaller {
  connectionId: string;
  clientName?: string;
}

/** Runs a forwarded request on the owner; what it returns (JSON) or throws goes back to the sender. */
export type ForwardHandler = (request: ForwardRequest & { from: string }) => Promise<unknown>;

/** A forwarded call that got no answer from the owner. Local, never sent on the wire as is. */
export class ForwardingError extends Error {
  override readonly name = "ForwardingError";

  constructor(
    readonly kind: "unreachable" | "timeout" | "overloaded" | "closed",
    message: string,
  ) {
    super(message);
  }
}

/** The owner answered with an error: its JSON-RPC code, message and data, to be answered to the client as they are. */
export class RemoteCallError extends Error {
  override readonly name = "RemoteCallError";

  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

export interface ForwardingOptions {
  instanceId: string;
  /** How long a forwarded call waits for the owner's answer. */
  timeoutMs?: number;
  /** Calls this instance may have waiting for answers at once. */
  maxPending?: number;
  /** Forwarded requests this instance runs at once; beyond, they are answered "overloaded". */
  maxHandling?: number;
  keys?: ClusterKeys;
  log: Logger;
}

interface WireRequest extends ForwardRequest {
  id: string;
  from: string;
}

type WireReply = { id: string; ok: true; result: unknown } | { id: string; ok: false; error: { code: number; message: string; data?: unknown } };

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

export class RequestForwarder {
  private readonly keys: ClusterKeys;
  private readonly timeoutMs: number;
  private readonly maxPending: number;
  private readonly maxHandling: number;
  private readonly pending = new Map<string, Pending>();
  private handling = 0;
  private handler: ForwardHandler | null = null;
  private closed = false;
  private detach: () => void = () => {};

  constructor(
    /** For PUBLISH. */
    private readonly commands: Redis,
    /** In subscriber mode; may be shared with the event bus (each ignores the other's channels). */
    private readonly subscriber: Redis,
    private readonly options: ForwardingOptions,
  ) {
    this.keys = options.keys ?? new ClusterKeys();
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.maxPending = options.maxPending ?? 1000;
    this.maxHandling = options.maxHandling ?? 256;
  }

  private get requestChannel(): string {
    return this.keys.requests(this.options.instanceId);
  }

  private get replyChannel(): string {
    return this.keys.replies(this.options.instanceId);
  }

  /** Listen for requests (run by `handler`) and for replies; resolves once both channels are subscribed. */
  async start(handler: ForwardHandler): Promise<void> {
    this.handler = handler;
    const onMessage = (channel: string, message: string) => {
      if (channel === this.requestChannel) void this.onRequest(message);
      else if (channel === this.replyChannel) this.onReply(message);
    };
    // Subscribed again after a reconnection whatever the connection's autoResubscribe says (the bus turns it off).
    const onReady = () => {
      if (!this.closed) this.subscriber.subscribe(this.requestChannel, this.replyChannel).catch(() => {});
    };
    this.subscriber.on("message", onMessage);
    this.subscriber.on("ready", onReady);
    this.detach = () => {
      this.subscriber.off("message", onMessage);
      this.subscriber.off("ready", onReady);
    };
    await this.subscriber.subscribe(this.requestChannel, this.replyChannel);
  }

  /** Ask `ownerId` to run the request; resolves with its result, rejects with RemoteCallError or ForwardingError. */
  async forward(ownerId: string, request: ForwardRequest, { timeoutMs = this.timeoutMs }: { timeoutMs?: number } = {}): Promise<unknown> {
    if (this.closed) throw new ForwardingError("closed", "request forwarding is closed");
    if (this.pending.size >= this.maxPending) {
      throw new ForwardingError("overloaded", `${this.pending.size} forwarded requests already wait for an answer`);
    }
    const id = randomUUID();
    const wire: WireRequest = { id, from: this.options.instanceId, ...request };
    const answer = new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new ForwardingError("timeout", `instance ${ownerId}, which owns conversation ${request.conversationId}, did not answer ${request.method} within ${timeoutMs} ms`));
      }, timeoutMs);
      timer.unref();
      this.pending.set(id, { resolve, reject, timer });
    });
    let receivers: number;
    try {
      receivers = await this.commands.publish(this.keys.requests(ownerId), JSON.stringify(wire));
    } catch (error) {
      this.settle(id)?.reject(new ForwardingError("unreachable", `could not send ${request.method} to instance ${ownerId}: ${(error as Error).message}`));
      return answer;
    }
    if (receivers === 0) {
      this.settle(id)?.reject(new ForwardingError("unreachable", `instance ${ownerId}, which owns conversation ${request.conversationId}, is not listening`));
    }
    return answer;
  }

  /** Stop listening; calls still waiting fail with "closed". */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.detach();
    for (const id of [...this.pending.keys()]) this.settle(id)?.reject(new ForwardingError("closed", "request forwarding closed before the answer came"));
    if (this.subscriber.status === "ready") await this.subscriber.unsubscribe(this.requestChannel, this.replyChannel).catch(() => {});
  }

  private settle(id: string): Pending | undefined {
    const pending = this.pending.get(id);
    if (!pending) return undefined;
    this.pending.delete(id);
    clearTimeout(pending.timer);
    return pending;
  }

  private onReply(message: string): void {
    let reply: WireReply;
    try {
      reply = JSON.parse(message) as WireReply;
    } catch {
      this.options.log.warn("ignoring a malformed forwarded reply");
      return;
    }
    const pending = this.settle(reply.id); // none: it timed out already
    if (!pending) return;
    if (reply.ok) pending.resolve(reply.result);
    else pending.reject(new RemoteCallError(reply.error.code, reply.error.message, reply.error.data));
  }

  private async onRequest(message: string): Promise<void> {
    let request: WireRequest;
    try {
      request = JSON.parse(message) as WireRequest;
      if (typeof request.id !== "string" || typeof request.from !== "string" || typeof request.method !== "string") throw new Error("bad shape");
    } catch {
      this.options.log.warn("ignoring a malformed forwarded request");
      return;
    }
    let reply: WireReply;
    if (this.handling >= this.maxHandling || !this.handler) {
      reply = { id: request.id, ok: false, error: { code: ErrorCodes.INTERNAL_ERROR, message: `${ErrorMeanings.INTERNAL_ERROR}: the owning instance is overloaded` } };
    } else {
      this.handling++;
      try {
        const { from, method, conversationId, params, caller } = request;
        reply = { id: request.id, ok: true, result: (await this.handler({ from, method, conversationId, params, ...(caller ? { caller } : {}) })) ?? null };
      } catch (error) {
        reply = { id: request.id, ok: false, error: wireError(error) };
        if (!isWireError(error)) this.options.log.error(`forwarded ${request.method} failed`, error);
      } finally {
        this.handling--;
      }
    }
    try {
      await this.commands.publish(this.keys.replies(request.from), JSON.stringify(reply));
    } catch (error) {
      this.options.log.warn(`could not answer a forwarded ${request.method} to instance ${request.from}`, error);
    }
  }
}

/** An error that carries a JSON-RPC code (RpcError, or a RemoteCallError passed on). */
function isWireError(error: unknown): error is { code: number; message: string; data?: unknown } {
  return error instanceof Error && typeof (error as { code?: unknown }).code === "number" && ["RpcError", "RemoteCallError"].includes(error.name);
}

/** Errors with a code cross as they are; anything else is an internal fault, answered without its message (it may hold paths). */
function wireError(error: unknown): { code: number; message: string; data?: unknown } {
  if (isWireError(error)) return { code: error.code, message: error.message, ...(error.data === undefined ? {} : { data: error.data }) };
  return { code: ErrorCodes.INTERNAL_ERROR, message: ErrorMeanings.INTERNAL_ERROR };
}
