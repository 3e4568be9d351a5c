import { setTimeout as sleep } from "node:timers/promises";
import { ErrorCodes } from "../../protocol/index.js";
import { RpcError } from "../rpc/rpc-error.js";
import { ForwardingError, RemoteCallError, type ForwardCaller, type RequestForwarder } from "./forwarding.js";
import type { LeaseHolder } from "./ownership-lease.js";

/**
 * Where a request that needs the conversation's owner runs: here when this
 * instance holds the lease; here after taking the lease when nobody holds it
 * (ownership follows requests, never moving under running work); else on the
 * owner, forwarded (see forwarding.ts for why forward rather than move).
 *
 * A forwarded error keeps its JSON-RPC code, message and data. An owner that
 * is not listening (it died; its lease has not run out yet) is waited for
 * until its lease runs out and the conversation is taken here; an owner that
 * does not answer in time is OWNER_UNAVAILABLE, never retried (the request may
 * have run).
 */
export interface Ownership {
  /** Take the conversation if nobody holds it: "owned", "missing" (no such conversation), or who holds it. */
  take(conversationId: string): Promise<"owned" | "missing" | LeaseHolder>;
}

/** Times an owner that stopped owning (or an expired lease) is looked up again before giving up. */
const MAX_LOOKUPS = 6;

export class OwnerRouter {
  constructor(
    private readonly ownership: Ownership,
    private readonly forwarder: RequestForwarder,
    private readonly leaseMs: number,
    private readonly forwardTimeoutMs: number,
  ) {}

  /** Runs `local` here when this instance owns (or could take) the conversation; else the owner runs `method`. */
  async run<T>(method: string, conversationId: string, params: unknown, local: () => Promise<T> | T, extraTimeoutMs = 0, caller?: ForwardCaller): Promise<T> {
    const deadline = Date.now() + this.leaseMs * 2 + 1000;
    for (let lookup = 0; ; lookup++) {
      // Held here (or being taken here: take waits for that) → "owned".
      const taken = await this.ownership.take(conversationId);
      if (taken === "owned") return local();
      if (taken === "missing") throw RpcError.conversationNotFound(conversationId);
      try {
        return (await this.forwarder.forward(
          taken.instanceId,
          { method, conversationId, params, ...(caller ? { caller } : {}) },
          { timeoutMs: this.forwardTimeoutMs + extraTimeoutMs },
        )) as T;
      } catch (error) {
        if (error instanceof RemoteCallError) {
          // The owner gave the conversation up between our lookup and its answer: look again.
          if (error.code === ErrorCodes.OWNER_UNAVAILABLE && lookup < MAX_LOOKUPS && isNotOwner(error.data)) continue;
          throw RpcError.fromWire(error.code, error.message, error.data);
        }
        if (error instanceof ForwardingError && error.kind === "unreachable" && Date.now() < deadline) {
          // Nobody listens on the owner's channel: it died. Its lease runs out within its time left; then take it here.
          await sleep(Math.min(Math.max(50, taken.expiresInMs + 20), 500));
          continue;
        }
        const detail = error instanceof Error ? error.message : String(error);
        const reason = error instanceof ForwardingError && error.kind === "timeout" ? "timeout" : "unreachable";
        throw RpcError.ownerUnavailable(conversationId, `${detail}; try again`, reason, taken.instanceId);
      }
    }
  }
}

/** The owner answered that it no longer holds the conversation (it gave it up just before the request came). */
function isNotOwner(data: unknown): boolean {
  return typeof data === "object" && data !== null && (data as { reason?: unknown }).reason === "not-owner";
}
