/**
 * Forwarding owner-only methods between instances over the real Redis:
 * answers and errors come back to the sender (an RpcError keeps its code; any
 * other fault is answered without its message); an owner that is not
 * listening fails the call at once; one that does not answer fails it after
 * the timeout; the forwarder can share the event bus's subscriber connection.
 */
import { afterEach, describe, expect, it } from "vitest";
import { ErrorCodes } from "../../protocol/index.js";
import { ClusterBus } from "../../src/cluster/cluster-bus.js";
import { ForwardingError, RemoteCallError, RequestForwarder, type ForwardHandler } from "../../src/cluster/forwarding.js";
import type { LoggedEvent } from "../../src/sessions/event-log.js";
import { RpcError } from "../../src/rpc/rpc-error.js";
import { eventually } from "../harness/eventually.js";
import { redisAvailable, useRedis } from "../harness/redis-test.js";

const redis = useRedis();
const running: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.close()));
});

let connections = 0;

async function instance(instanceId: string, handler: ForwardHandler, timeoutMs = 2000) {
  const commands = await redis.connect(`fwd-${instanceId}`);
  // Named uniquely, so a test can find this connection in CLIENT LIST.
  const subscriberName = `fwd-sub-${instanceId}-${process.pid}-${++connections}`;
  const subscriber = await redis.connect(subscriberName);
  const forwarder = new RequestForwarder(commands, subscriber, { instanceId, timeoutMs, keys: redis.keys, log: redis.log });
  await forwarder.start(handler);
  running.push(forwarder);
  return { forwarder, commands, subscriber, subscriberName };
}

const never: ForwardHandler = () => new Promise(() => {});

describe.skipIf(!redisAvailable)("forwarding to the owner", () => {
  it("a request reaches the owner, which answers the sender", async () => {
    const seen: unknown[] = [];
    await instance("owner", async (request) => {
      seen.push(request);
      return { interrupted: true };
    });
    const { forwarder } = await instance("edge", never);
    const result = await forwarder.forward("owner", { method: "interrupt", conversationId: "c_1", params: { conversationId: "c_1" } });
    expect(result).toEqual({ interrupted: true });
    expect(seen).toEqual([{ from: "edge", method: "interrupt", conversationId: "c_1", params: { conversationId: "c_1" } }]);
    // Many at once are matched to their own answers.
    const many = await Promise.all(
      Array.from({ length: 50 }, (_, i) => forwarder.forward("owner", { method: "tool.confirm", conversationId: `c_${i}`, params: {} })),
    );
    expect(many).toHaveLength(50);
    expect(seen).toHaveLength(51);
  });

  it("the owner's RpcError comes back with its code and data; another fault comes back as a bare internal error", async () => {
    await instance("owner", async (request) => {
      if (request.method === "step") throw RpcError.generationInProgress("g_1");
      throw new Error("ENOENT: /secret/path");
    });
    const { forwarder } = await instance("edge", never);
    const refused = await forwarder.forward("owner", { method: "step", conversationId: "c_1", params: {} }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RemoteCallError);
    const expected = RpcError.generationInProgress("g_1");
    expect(refused).toMatchObject({ code: expected.code, message: expected.message });
    const fault = await forwarder.forward("owner", { method: "interrupt", conversationId: "c_1", params: {} }).catch((e: unknown) => e);
    expect(fault).toMatchObject({ code: ErrorCodes.INTERNAL_ERROR });
    expect((fault as Error).message).not.toContain("secret");
  });

  it("an owner that is not listening fails the call at once; one that does not answer fails it after the timeout", async () => {
    const { forwarder } = await instance("edge", never, 300);
    const started = Date.now();
    const gone = await forwarder.forward("nobody", { method: "interrupt", conversationId: "c_1", params: {} }).catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(ForwardingError);
    expect(gone).toMatchObject({ kind: "unreachable" });
    expect(Date.now() - started).toBeLessThan(200);

    await instance("stuck", never);
    const late = Date.now();
    const timedOut = await forwarder.forward("stuck", { method: "interrupt", conversationId: "c_1", params: {} }).catch((e: unknown) => e);
    expect(timedOut).toMatchObject({ kind: "timeout" });
    expect((timedOut as Error).message).toMatch(/stuck.*c_1.*interrupt.*300 ms/);
    expect(Date.now() - late).toBeGreaterThanOrEqual(290);
  });

  it("shares a subscriber connection with the event bus, and both listen again after it reconnects", async () => {
    const owner = await instance("owner", async () => "ok");
    const bus = new ClusterBus(owner.commands, owner.subscriber, { keys: redis.keys, log: redis.log });
    running.push(bus);
    const events: LoggedEvent[] = [];
    const sub = bus.subscribe("c_shared", 0, { onEvent: (e) => events.push(e), onResync: () => {} });
    await sub.ready;
    const { forwarder, commands } = await instance("edge", never);
    await bus.publish("c_shared", { seq: 1, prevSeq: 0, method: "interrupted", frame: "{}" });
    expect(await forwarder.forward("owner", { method: "interrupt", conversationId: "c_shared", params: {} })).toBe("ok");
    await eventually(() => events.length === 1, 2000, "the bus event");

    // Redis drops the owner's subscriber connection; ioredis reconnects it and both modules subscribe again.
    const clients = await commands.client("LIST");
    const line = String(clients).split("\n").find((l) => l.includes(`name=${owner.subscriberName} `));
    await commands.client("KILL", "ID", line!.match(/id=(\d+)/)![1]!);
    await eventually(
      async () => (await forwarder.forward("owner", { method: "interrupt", conversationId: "c_shared", params: {} }).catch(() => "no")) === "ok",
      3000,
      "the owner answering again",
    );
    await bus.publish("c_shared", { seq: 2, prevSeq: 1, method: "interrupted", frame: "{}" });
    await eventually(() => events.length === 2, 2000, "the bus event after the reconnection");
    sub.dispose();
  });
});
