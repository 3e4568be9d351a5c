/**
 * Binds each method's handler to the scope its inventory entry declares
 * (protocol/inventory.ts, MethodScope). A conversation-scoped method runs
 * where the conversation's live state is: here without a cluster; in
 * cluster mode here when this instance owns the conversation (or takes it
 * when nobody does), else forwarded to the owner (OwnerRouter). There the
 * conversation is loaded once and handed to the handler, which never looks
 * it up again. Nobody has to remember to route a method: declaring its
 * scope is enough, and a method whose params carry conversationId without
 * that scope fails test/handlers/method-scope.test.ts.
 */
import type * as z from "zod";
import { methodTable, type MethodTableEntry, type RequestMethod, type Requests } from "../../protocol/index.js";
import type { RequestContext } from "../app.js";
import type { HandlerTable } from "../rpc/dispatcher.js";
import type { ConversationRuntime } from "../sessions/conversation-runtime.js";
import { ConversationDamagedError } from "../store/conversation-store.js";

type Params<M extends RequestMethod> = z.output<Requests[M]["params"]>;
type Answer<M extends RequestMethod> = Promise<z.input<Requests[M]["result"]>> | z.input<Requests[M]["result"]>;

/** Methods that run on the conversation's owner and get its runtime: conversation scope, not runsOn "caller". */
type RunsOnOwner<M extends RequestMethod> = Requests[M] extends { scope: "conversation" }
  ? Requests[M] extends { runsOn: "caller" }
    ? false
    : true
  : false;

/** The loaded conversation; undefined only for a method whose conversationId is optional (skills.list) when it is absent. */
type RuntimeOf<M extends RequestMethod> = Params<M> extends { conversationId: string } ? ConversationRuntime : ConversationRuntime | undefined;

/** A method's handler as written in the handler files: a conversation-scoped one gets the conversation's runtime. */
export type MethodHandler<M extends RequestMethod> =
  RunsOnOwner<M> extends true
    ? (params: Params<M>, context: RequestContext, runtime: RuntimeOf<M>) => Answer<M>
    : (params: Params<M>, context: RequestContext) => Answer<M>;

export type MethodHandlers = { [M in RequestMethod]: MethodHandler<M> };

/**
 * What a conversation-scoped method does when its conversation cannot be
 * loaded because its files are damaged. Only conversation.delete can act
 * then (it removes them); every other method answers CONVERSATION_DAMAGED.
 */
export type DamagedHandlers = {
  [M in RequestMethod]?: (params: Params<M>, context: RequestContext, error: ConversationDamagedError) => Answer<M>;
};

/** The dispatcher's table: every handler bound to its method's scope. */
export function bindScopes(handlers: MethodHandlers, damaged: DamagedHandlers = {}): HandlerTable<RequestContext> {
  const bound: Record<string, unknown> = {};
  // The method table, not the inventory: binding the handlers builds no schema.
  for (const method of Object.keys(methodTable) as RequestMethod[]) {
    const entry: MethodTableEntry = methodTable[method];
    const handler = handlers[method] as unknown as Untyped;
    bound[method] =
      entry.scope === "conversation" && entry.runsOn !== "caller"
        ? onOwner(method, entry, handler, damaged[method] as unknown as Untyped | undefined)
        : handler;
  }
  return bound as HandlerTable<RequestContext>;
}

type Untyped = (params: unknown, context: RequestContext, runtime?: unknown) => unknown;

function onOwner(method: string, entry: MethodTableEntry, handler: Untyped, whenDamaged: Untyped | undefined) {
  return (params: { conversationId?: string }, context: RequestContext) => {
    const { conversationId } = params;
    // Optional and absent (skills.list): no conversation to run on.
    if (conversationId === undefined) return handler(params, context, undefined);
    const local = async () => {
      let runtime: ConversationRuntime;
      try {
        runtime = await context.app.hub.get(conversationId);
      } catch (error) {
        if (whenDamaged && error instanceof ConversationDamagedError) return whenDamaged(params, context, error);
        throw error;
      }
      return handler(params, context, runtime);
    };
    const cluster = context.app.cluster;
    if (!cluster) return local();
    const { connection } = context;
    const caller = { connectionId: connection.id, ...(connection.clientInfo ? { clientName: connection.clientInfo.name } : {}) };
    const ran = cluster.router.run(method, conversationId, params, local, heldFor(entry, params), caller);
    // Client tools registered through another instance: when this connection closes, that owner must hear of it
    // (link-session.ts). Registering is the one method whose effect outlives the request on the owner.
    if (method === "tools.register") void ran.then(() => connection.clientToolConversations.add(conversationId), () => {});
    return ran;
  };
}

/** How long the method may hold its answer back on purpose (RequestEntry.holdsAnswer): a forward waits that much longer. */
function heldFor(entry: MethodTableEntry, params: object): number {
  if (!entry.holdsAnswer) return 0;
  const value = (params as Record<string, unknown>)[entry.holdsAnswer.param];
  return typeof value === "number" ? value : entry.holdsAnswer.defaultMs;
}
