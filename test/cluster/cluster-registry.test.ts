/**
 * The instance registry on the real Redis: instances that heartbeat are
 * listed with what they announced; one that stops heartbeating drops out
 * after the TTL; one that stops cleanly leaves at once.
 */
import { afterEach, describe, expect, it } from "vitest";
import { InstanceRegistry } from "../../src/cluster/instance-registry.js";
import { eventually } from "../harness/eventually.js";
import { redisAvailable, useRedis } from "../harness/redis-test.js";

const redis = useRedis();
const TTL_MS = 900;
const running: InstanceRegistry[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.stop()));
});

async function instance(instanceId: string, owned: { count: number }): Promise<InstanceRegistry> {
  const registry = new InstanceRegistry(await redis.connect(`registry-${instanceId}`), {
    instanceId,
    address: `ws://127.0.0.1:${instanceId === "inst-a" ? 8001 : 8002}`,
    ownedCount: () => owned.count,
    ttlMs: TTL_MS,
    keys: redis.keys,
    log: redis.log,
  });
  running.push(registry);
  await registry.start();
  return registry;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!redisAvailable)("the instance registry", () => {
  it("lists two live instances; one that stops heartbeating is gone after the TTL, the other stays", async () => {
    const ownedA = { count: 3 };
    const a = await instance("inst-a", ownedA);
    const b = await instance("inst-b", { count: 0 });
    const listed = await b.list();
    expect(listed.map((i) => [i.id, i.address, i.ownedCount])).toEqual([
      ["inst-a", "ws://127.0.0.1:8001", 3],
      ["inst-b", "ws://127.0.0.1:8002", 0],
    ]);
    expect(Date.parse(listed[0]!.startedAt)).not.toBeNaN();

    // Heartbeats refresh the announcement, owned count included, for longer than the TTL.
    ownedA.count = 5;
    await sleep(TTL_MS * 2);
    expect((await b.list()).map((i) => [i.id, i.ownedCount])).toEqual([
      ["inst-a", 5],
      ["inst-b", 0],
    ]);

    // A stops heartbeating without withdrawing (as after kill -9): listed until its TTL runs out, then gone.
    const stoppedAt = Date.now();
    await a.stop({ withdraw: false });
    expect((await b.list()).map((i) => i.id)).toContain("inst-a");
    await eventually(async () => !(await b.list()).some((i) => i.id === "inst-a"), TTL_MS * 2, "inst-a dropping out");
    expect(Date.now() - stoppedAt).toBeLessThanOrEqual(TTL_MS + 100);
    expect((await b.list()).map((i) => i.id)).toEqual(["inst-b"]);
    expect(await (await redis.connect("admin")).smembers(redis.keys.instanceIndex())).toEqual(["inst-b"]);
  });

  it("a clean stop leaves the list at once", async () => {
    const a = await instance("inst-a", { count: 0 });
    const b = await instance("inst-b", { count: 0 });
    expect((await a.list()).map((i) => i.id)).toEqual(["inst-a", "inst-b"]);
    await b.stop();
    expect((await a.list()).map((i) => i.id)).toEqual(["inst-a"]);
  });
});
