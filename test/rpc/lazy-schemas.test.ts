/**
 * The dispatcher builds no zod schema to start: it takes the method names,
 * scopes and experimental reasons from protocol/method-table.ts (generated
 * from the inventory), checks params with their data form
 * (protocol/params-data.ts), and imports protocol/inventory.ts, with every
 * params schema, on the first request whose params that cannot decide, such
 * as an invalid one (src/rpc/dispatcher.ts, Dispatcher.schemas). A
 * params error is the same after that as before: the same schema, the same
 * INVALID_PARAMS message naming the field. That the shipped
 * server's start path does not load them is test/bundle/start-path-schemas.test.ts's.
 */
import { describe, expect, it } from "vitest";
import { notifications, requests, type RequestEntry } from "../../protocol/inventory.js";
import { methodTable, notificationNames } from "../../protocol/method-table.js";
import { createLogger } from "../../src/logging/logger.js";
import { Dispatcher, type CallContext, type HandlerTable } from "../../src/rpc/dispatcher.js";
import { RpcError } from "../../src/rpc/rpc-error.js";

const context = (): CallContext => ({ connection: { id: "k_test", initialized: true, experimentalApi: false } });
const answered: string[] = [];
const table = Object.fromEntries(
  Object.keys(methodTable).map((method) => [method, (params: unknown) => (answered.push(method), { echoed: params })]),
) as unknown as HandlerTable<CallContext>;

describe("method schemas on first use", () => {
  it("a dispatcher is built without the schemas; valid requests leave them unbuilt, the first invalid one loads them", async () => {
    const dispatcher = new Dispatcher<CallContext>({ handlers: table, log: createLogger("silent") });
    expect(dispatcher.schemasLoaded).toBe(false);
    // Refused before validation (unknown method, not initialized): still nothing to build.
    const unknown = JSON.parse((await dispatcher.handleFrame('{"jsonrpc":"2.0","id":1,"method":"no.such"}', context()))!);
    expect(unknown.error.code).toBe(-32601);
    const early = JSON.parse(
      (await dispatcher.handleFrame('{"jsonrpc":"2.0","id":2,"method":"server.status"}', { connection: { id: "k", initialized: false, experimentalApi: false } }))!,
    );
    expect(early.error.message).toContain("before initialize");
    expect(dispatcher.schemasLoaded).toBe(false);
    // Valid params are checked with their data form: still nothing built.
    const status = JSON.parse((await dispatcher.handleFrame('{"jsonrpc":"2.0","id":9,"method":"server.status"}', context()))!);
    expect(status.result).toEqual({ echoed: {} });
    expect(dispatcher.schemasLoaded).toBe(false);

    // Two first requests at once: both wait for the one load.
    const bad = { conversationId: 5, includeRecords: "yes" };
    const [first, second] = await Promise.all([
      dispatcher.handleFrame(JSON.stringify({ jsonrpc: "2.0", id: 3, method: "conversation.get", params: bad }), context()),
      dispatcher.handleFrame(JSON.stringify({ jsonrpc: "2.0", id: 4, method: "server.status", params: {} }), context()),
    ]);
    expect(dispatcher.schemasLoaded).toBe(true);
    expect(JSON.parse(second!).result).toEqual({ echoed: {} });

    // The error is the schema's own, as the dispatcher answered it before the schemas were loaded lazily.
    const expected = RpcError.fromZod(requests["conversation.get"].params.safeParse(bad).error!);
    const { error } = JSON.parse(first!);
    expect(error).toEqual({ code: expected.code, message: expected.message, data: expected.data });
    expect(error.code).toBe(-32602);
    expect(error.data.issues.map((issue: { path: string }) => issue.path)).toEqual(["conversationId", "includeRecords"]);
    expect(error.message).toContain("conversationId");

    // Later requests validate with the loaded schemas.
    const valid = JSON.parse((await dispatcher.handleFrame(JSON.stringify({ jsonrpc: "2.0", id: 5, method: "conversation.get", params: { conversationId: "c_1" } }), context()))!);
    expect(valid.result).toEqual({ echoed: { conversationId: "c_1" } });
    expect(answered).toEqual(["server.status", "server.status", "conversation.get"]);
  });

  it("the method table says what the inventory says of every method and notification", () => {
    const fromInventory = Object.fromEntries(
      Object.entries(requests as Record<string, RequestEntry>).map(([method, { scope, runsOn, holdsAnswer, experimental }]) => [
        method,
        JSON.parse(JSON.stringify({ scope, runsOn, holdsAnswer, experimental })),
      ]),
    );
    expect(methodTable).toEqual(fromInventory);
    expect(notificationNames).toEqual(Object.keys(notifications));
  });
});
