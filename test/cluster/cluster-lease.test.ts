/**
 * Conversation ownership leases on the real Redis: one holder at a time,
 * renewed while the holder lives, released on demand; a holder that stops
 * renewing (cut off from Redis, or killed with -9) lets another instance take
 * the conversation after the lease time, under a higher fencing token, and
 * the cut-off holder hears that it lost the lease before anyone else gets it.
 */
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { afterEach, describe, expect, it } from "vitest";
import { OwnershipLeases, type LeaseLossReason } from "../../src/cluster/ownership-lease.js";
import { connectRedis } from "../../src/cluster/redis-client.js";
import { eventually } from "../harness/eventually.js";
import { REDIS_URL, redisAvailable, useRedis } from "../harness/redis-test.js";
import { startStallingProxy } from "../harness/stalling-proxy.js";

const redis = useRedis();
const LEASE_MS = 800;
let conversations = 0;
const newConversation = () => `c_lease${++conversations}`;

const open: OwnershipLeases[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((l) => l.close()));
});

async function instance(instanceId: string, leaseMs = LEASE_MS): Promise<OwnershipLeases> {
  const leases = new OwnershipLeases(await redis.connect(`lease-${instanceId}`), { instanceId, leaseMs, keys: redis.keys, log: redis.log });
  open.push(leases);
  return leases;
}

function lossRecorder() {
  const losses: { reason: LeaseLossReason; at: number }[] = [];
  return { losses, onLost: (reason: LeaseLossReason) => losses.push({ reason, at: Date.now() }) };
}

/** Tries to acquire `id` until it is granted (within `withinMs`); the time it was granted and its fence. */
async function acquireWhenFree(leases: OwnershipLeases, id: string, withinMs: number, what: string): Promise<{ takenAt: number; fence: number }> {
  let taken = { takenAt: 0, fence: 0 };
  await eventually(
    async () => {
      const outcome = await leases.acquire(id, lossRecorder());
      if (!outcome.acquired) return false;
      taken = { takenAt: Date.now(), fence: outcome.lease.fence };
      return true;
    },
    withinMs,
    what,
  );
  return taken;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!redisAvailable)("conversation ownership leases", () => {
  it("acquire; a second acquirer is refused; renewals keep it; release hands it over under a higher token", async () => {
    const a = await instance("inst-a");
    const b = await instance("inst-b");
    const id = newConversation();
    const lost = lossRecorder();
    const first = await a.acquire(id, lost);
    if (!first.acquired) throw new Error("not acquired");
    expect(first.lease.fence).toBe(1);
    expect(a.heldIds()).toEqual([id]);
    expect(await a.acquire(id, lost)).toEqual(first); // already ours: the same lease

    const refused = await b.acquire(id, lossRecorder());
    expect(refused).toMatchObject({ acquired: false, owner: { instanceId: "inst-a", fence: 1 } });

    // Two lease times later it is still A's: the renewals kept it.
    await sleep(LEASE_MS * 2);
    expect(first.lease.held).toBe(true);
    const holder = await b.owner(id);
    expect(holder).toMatchObject({ instanceId: "inst-a", fence: 1 });
    expect(holder!.expiresInMs).toBeGreaterThan(LEASE_MS / 3);
    expect((await b.acquire(id, lossRecorder())).acquired).toBe(false);

    await first.lease.release();
    expect(first.lease.held).toBe(false);
    expect(a.heldCount).toBe(0);
    expect(await b.owner(id)).toBeNull();
    const second = await b.acquire(id, lossRecorder());
    expect(second).toMatchObject({ acquired: true, lease: { fence: 2 } });
    expect(lost.losses).toEqual([]); // a release is not a loss
  });

  it("a holder cut off from Redis hears it lost the lease; another takes over after the lease time with a higher token", async () => {
    const a = await instance("inst-a");
    const b = await instance("inst-b");
    const id = newConversation();
    const lost = lossRecorder();
    const first = await a.acquire(id, lost);
    if (!first.acquired) throw new Error("not acquired");
    await sleep(LEASE_MS / 2); // a renewal or so

    // A stops renewing without releasing: its connection is gone (a partition, as Redis sees a kill -9).
    const cutAt = Date.now();
    (a as unknown as { redis: { disconnect(): void } }).redis.disconnect();
    expect((await b.acquire(id, lossRecorder())).acquired).toBe(false);

    const { takenAt, fence } = await acquireWhenFree(b, id, LEASE_MS * 3, "B acquiring the conversation");
    expect(fence).toBeGreaterThan(first.lease.fence);
    expect(takenAt - cutAt).toBeLessThanOrEqual(LEASE_MS + 100);
    expect(lost.losses.map((l) => l.reason)).toEqual(["expired"]);
    // The cut-off holder gave up before the other could take over.
    expect(lost.losses[0]!.at).toBeLessThanOrEqual(takenAt);
    expect(first.lease.held).toBe(false);
  });

  it("a holder whose renewal finds another owner loses the lease ('taken'), and its release leaves the new owner alone", async () => {
    const a = await instance("inst-a");
    const b = await instance("inst-b");
    const id = newConversation();
    const lost = lossRecorder();
    const first = await a.acquire(id, lost);
    if (!first.acquired) throw new Error("not acquired");
    // As if A had paused past its lease: the key ran out and B took the conversation.
    const admin = await redis.connect("admin");
    await admin.del(redis.keys.lease(id));
    const second = await b.acquire(id, lossRecorder());
    expect(second).toMatchObject({ acquired: true, lease: { fence: first.lease.fence + 1 } });
    await eventually(() => lost.losses.length > 0, LEASE_MS, "A's lost-lease callback");
    expect(lost.losses.map((l) => l.reason)).toEqual(["taken"]);
    await first.lease.release();
    expect(await b.owner(id)).toMatchObject({ instanceId: "inst-b", fence: first.lease.fence + 1 });
  });

  it("a holder whose Redis stalls past the lease gives it up; its renewal answered after the stall does not keep it from others", async () => {
    // A's connection goes through a proxy that holds what A sends: Redis stops answering A alone, the others go on.
    const url = new URL(REDIS_URL);
    const proxy = await startStallingProxy({ host: url.hostname, port: Number(url.port || 6379) });
    const stalled = await connectRedis(proxy.url, { name: "lease-stalled", log: redis.log });
    const a = new OwnershipLeases(stalled, { instanceId: "inst-a", leaseMs: LEASE_MS, keys: redis.keys, log: redis.log });
    open.push(a);
    try {
      const b = await instance("inst-b");
      const id = newConversation();
      const lost = lossRecorder();
      const first = await a.acquire(id, lost);
      if (!first.acquired) throw new Error("not acquired");
      await sleep(LEASE_MS / 2);
      proxy.stall();
      await eventually(() => lost.losses.length > 0, LEASE_MS * 2, "A giving the lease up");
      expect(lost.losses.map((l) => l.reason)).toEqual(["expired"]);
      // The key runs out in Redis; then A's renewal, held since the stall began, arrives (and would take the lease back).
      await eventually(async () => (await b.owner(id)) === null, LEASE_MS * 2, "the lease key running out");
      proxy.resume();
      await stalled.ping();
      // What A sent after giving the lease up came right behind the renewal: the lease is free at once, not a lease later.
      expect(await b.owner(id)).toBeNull();
      expect(await b.acquire(id, lossRecorder())).toMatchObject({ acquired: true, lease: { fence: first.lease.fence + 1 } });
    } finally {
      proxy.resume();
      stalled.disconnect();
      await proxy.close();
    }
  });

  it("the new token is above the store's highest one even when Redis lost its counter", async () => {
    const a = await instance("inst-a");
    const id = newConversation();
    expect(await a.acquire(id, { ...lossRecorder(), minFence: 41 })).toMatchObject({ acquired: true, lease: { fence: 42 } });
    await a.lease(id)!.release();
    expect(await a.acquire(id, { ...lossRecorder(), minFence: 10 })).toMatchObject({ acquired: true, lease: { fence: 43 } });
  });

  it("kill -9 of the owning process: another instance takes the conversation within the lease time", async () => {
    const id = newConversation();
    const leaseMs = 1000;
    const child = spawn(process.execPath, ["--import", "tsx", "test/harness/lease-holder-child.ts", REDIS_URL, redis.keys.prefix, id, String(leaseMs)], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const lines = createInterface({ input: child.stdout! });
    const firstLine = await new Promise<string>((resolve) => lines.once("line", resolve));
    expect(firstLine).toMatch(/^acquired \d+$/);
    const childFence = Number(firstLine.split(" ")[1]);
    const b = await instance("inst-b", leaseMs);
    await sleep(leaseMs); // the child renews meanwhile
    expect((await b.acquire(id, lossRecorder())).acquired).toBe(false);

    const killedAt = Date.now();
    child.kill("SIGKILL");
    const { takenAt, fence } = await acquireWhenFree(b, id, leaseMs * 2, "taking over from the killed owner");
    expect(fence).toBe(childFence + 1);
    const failoverMs = takenAt - killedAt;
    expect(failoverMs).toBeLessThanOrEqual(leaseMs + 100);
    console.log(`lease failover after kill -9: ${failoverMs} ms (lease ${leaseMs} ms)`);
  });
});
