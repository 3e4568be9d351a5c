import type { RequestContext } from "../app.js";
import type { HandlerTable } from "../rpc/dispatcher.js";

type Handlers = HandlerTable<RequestContext>;

/**
 * A method that must run on the conversation's owner (cluster mode): it
 * changes or reads live state only the owner holds (the generation, pending
 * decisions, the event numbering, the loaded handle). Without a cluster the
 * handler runs as it is; with one, OwnerRouter runs it here (this instance
 * owns the conversation, or takes it when nobody does) or forwards it.
 *
 * `extraTimeoutMs` lengthens the forwarding timeout for a method that waits
 * on purpose (generation.wait).
 */
export function ownerRouted<M extends keyof Handlers>(
  method: M,
  handler: Handlers[M],
  extraTimeoutMs?: (params: Parameters<Handlers[M]>[0]) => number,
): Handlers[M] {
  const routed = (params: Parameters<Handlers[M]>[0], context: RequestContext) => {
    const cluster = context.app.cluster;
    const local = () => (handler as (p: typeof params, c: RequestContext) => unknown)(params, context);
    if (!cluster) return local();
    const { conversationId } = params as { conversationId: string };
    return cluster.router.run(method, conversationId, params, local, extraTimeoutMs?.(params) ?? 0);
  };
  return routed as unknown as Handlers[M];
}
