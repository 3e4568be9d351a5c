/**
 * The event bus between instances. Its answers are checked on both
 * implementations: the Redis one (two buses on their own connections play
 * two instances) and the in-process one. Frames published on one arrive on
 * the other exactly, once each, in seq order; afterSeq replay answers resync
 * when the events are no longer held. On Redis only: fencing, and a
 * subscriber or publisher whose connection drops loses nothing silently.
 */
import type { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { ClusterBus, type ClusterBusOptions } from "../../src/cluster/cluster-bus.js";
import type { BusSubscription, EventBus } from "../../src/cluster/event-bus.js";
import { FencedError } from "../../src/store/fenced-error.js";
import { GenerationMarkers } from "../../src/cluster/generation-markers.js";
import { LocalEventBus } from "../../src/cluster/local-event-bus.js";
import type { LoggedEvent } from "../../src/sessions/event-log.js";
import { eventually } from "../harness/eventually.js";
import { redisAvailable, useRedis } from "../harness/redis-test.js";

const redis = useRedis();
let conversations = 0;
const newConversation = () => `c_bus${++conversations}`;

/** One "instance": a command connection, a subscriber connection and a bus on them. */
async function instance(options: Partial<ClusterBusOptions> = {}): Promise<{ bus: ClusterBus; commands: Redis; subscriber: Redis }> {
  const commands = await redis.connect("bus-commands");
  const subscriber = await redis.connect("bus-subscriber");
  return { bus: new ClusterBus(commands, subscriber, { keys: redis.keys, log: redis.log, ...options }), commands, subscriber };
}

const frame = (conversationId: string, seq: number) =>
  JSON.stringify({ jsonrpc: "2.0", method: "generation_progress", params: { conversationId, seq, delta: `token ${seq} ✓` } });
const event = (conversationId: string, seq: number, prevSeq = seq - 1) => ({ seq, prevSeq, method: "generation_progress", frame: frame(conversationId, seq) });

/** Collects what a subscription delivers. */
function recorder() {
  const events: LoggedEvent[] = [];
  const resyncs: number[] = [];
  return {
    events,
    resyncs,
    seqs: () => events.map((e) => e.seq),
    listener: { onEvent: (e: LoggedEvent) => events.push(e), onResync: (latest: number) => resyncs.push(latest) },
  };
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

type Bounds = Pick<ClusterBusOptions, "maxCount" | "maxBytes">;

interface Implementation {
  name: string;
  available: boolean;
  redis: boolean;
  /** The publishing instance's bus and a watching instance's bus (the same one in a single process). */
  pair(bounds?: Bounds): Promise<{ a: EventBus; b: EventBus }>;
}

const implementations: Implementation[] = [
  {
    name: "the Redis event bus",
    available: redisAvailable,
    redis: true,
    pair: async (bounds = {}) => ({ a: (await instance(bounds)).bus, b: (await instance(bounds)).bus }),
  },
  {
    name: "the in-process event bus",
    available: true,
    redis: false,
    pair: async (bounds = {}) => {
      const bus = new LocalEventBus(bounds);
      return { a: bus, b: bus };
    },
  },
];

for (const impl of implementations) {
  describe.skipIf(!impl.available)(impl.name, () => {
    it("frames published on one instance arrive on another, exactly and in order", async () => {
      const { a, b } = await impl.pair();
      const id = newConversation();
      const seen = recorder();
      const sub = b.subscribe(id, undefined, seen.listener);
      expect(await sub.ready).toEqual({ replayed: 0, resync: false });
      // Not awaited one by one: the owner pipelines its publishes, and order must survive that.
      await Promise.all(range(1, 50).map((seq) => a.publish(id, event(id, seq))));
      await eventually(() => seen.events.length === 50, 3000, "50 events on the other instance");
      expect(seen.seqs()).toEqual(range(1, 50));
      expect(seen.events[7]).toEqual({ seq: 8, method: "generation_progress", frame: frame(id, 8) });
      sub.dispose();
      await a.publish(id, event(id, 51));
      await new Promise((r) => setTimeout(r, 50));
      expect(seen.events).toHaveLength(50); // nothing after dispose
      await a.close();
      await b.close();
    });

    it("afterSeq replays from the shared stream, then goes live without a gap or a duplicate", async () => {
      const { a, b } = await impl.pair();
      const id = newConversation();
      for (const seq of range(1, 10)) await a.publish(id, event(id, seq));
      expect(await b.replay(id, 4)).toMatchObject({ resync: false, latestSeq: 10, events: range(5, 10).map((seq) => ({ seq })) });
      expect(await b.replay(id, 10)).toEqual({ resync: false, events: [], latestSeq: 10 });
      expect(await b.replay(id, 0)).toMatchObject({ resync: false, latestSeq: 10 });

      const seen = recorder();
      const sub = b.subscribe(id, 4, seen.listener);
      // Publishing while the subscription starts: the live events and the replay overlap, and must merge.
      const racing = Promise.all(range(11, 30).map((seq) => a.publish(id, event(id, seq))));
      const ready = await sub.ready;
      await racing;
      await eventually(() => seen.events.at(-1)?.seq === 30, 3000, "the last event");
      expect(seen.seqs()).toEqual(range(5, 30));
      expect(ready.resync).toBe(false);
      expect(seen.resyncs).toEqual([]);
      sub.dispose();
      await a.close();
      await b.close();
    });

    it("a replay older than the bound says resync, and delivery goes on after the latest seq", async () => {
      const { a, b } = await impl.pair({ maxCount: 5 });
      const id = newConversation();
      for (const seq of range(1, 20)) await a.publish(id, event(id, seq));
      if (impl.redis) expect(await redis.connect("check").then((c) => c.xlen(redis.keys.events(id)))).toBe(5);
      expect(await b.replay(id, 3)).toEqual({ resync: true, latestSeq: 20 });
      expect(await b.replay(id, 14)).toEqual({ resync: true, latestSeq: 20 });
      expect((await b.replay(id, 15)) as { events: LoggedEvent[] }).toMatchObject({ resync: false, events: range(16, 20).map((seq) => ({ seq })) });

      const seen = recorder();
      const sub = b.subscribe(id, 3, seen.listener);
      expect(await sub.ready).toEqual({ replayed: 0, resync: true });
      expect(seen.resyncs).toEqual([20]);
      await a.publish(id, event(id, 21));
      await eventually(() => seen.events.length === 1, 3000, "the event after the resync");
      expect(seen.seqs()).toEqual([21]);
      sub.dispose();
      await a.close();
      await b.close();
    });

    it("the stream is bounded in bytes too; a frame over the bound is delivered live but not kept", async () => {
      const id = newConversation();
      const one = event(id, 1).frame.length;
      const { a } = await impl.pair({ maxBytes: one * 3 + 10 });
      const seen = recorder();
      const sub = a.subscribe(id, undefined, seen.listener);
      await sub.ready;
      for (const seq of range(1, 6)) await a.publish(id, event(id, seq));
      if (impl.redis) {
        const meta = await redis.connect("check").then((c) => c.hgetall(redis.keys.eventsMeta(id)));
        expect(Number(meta.bytes)).toBeLessThanOrEqual(one * 3 + 10);
      }
      expect(await a.replay(id, 3)).toMatchObject({ resync: false, events: [{ seq: 4 }, { seq: 5 }, { seq: 6 }] });
      expect(await a.replay(id, 2)).toMatchObject({ resync: true });
      const huge = { seq: 7, prevSeq: 6, method: "tool_output", frame: "x".repeat(one * 4) };
      await a.publish(id, huge);
      expect(await a.replay(id, 6)).toEqual({ resync: true, latestSeq: 7 });
      await eventually(() => seen.events.length === 7, 3000, "seven events live");
      expect(seen.events[6]!.frame).toBe(huge.frame);
      sub.dispose();
      await a.close();
    });

    it("1000 frames across 20 conversations: every subscriber gets each once, in order", async () => {
      const { a, b } = await impl.pair();
      const ids = range(1, 20).map(() => newConversation());
      const seen = new Map(ids.map((id) => [id, recorder()]));
      const early = ids.map((id) => b.subscribe(id, 0, seen.get(id)!.listener));
      await Promise.all(early.map((s) => s.ready));
      // Half of the conversations get a second watcher that joins mid-stream from seq 0 (replay, then live).
      const late = new Map(ids.slice(0, 10).map((id) => [id, recorder()]));
      const lateSubs: BusSubscription[] = [];
      const publishes: Promise<unknown>[] = [];
      for (let n = 1; n <= 50; n++) {
        for (const id of ids) publishes.push(a.publish(id, event(id, n)));
        if (n === 25) for (const [id, r] of late) lateSubs.push(b.subscribe(id, 0, r.listener));
      }
      expect(new Set(await Promise.all(publishes))).toEqual(new Set(["published"]));
      const all = [...seen.values(), ...late.values()];
      await eventually(() => all.every((r) => r.events.length >= 50), 5000, "50 events per subscriber");
      await new Promise((r) => setTimeout(r, 50));
      for (const r of all) {
        expect(r.seqs()).toEqual(range(1, 50));
        expect(r.resyncs).toEqual([]);
      }
      for (const [id, r] of seen) expect(r.events.every((e) => e.frame === frame(id, e.seq))).toBe(true);
      for (const s of [...early, ...lateSubs]) s.dispose();
      await a.close();
      await b.close();
    });

    it("a seq jump with an unbroken link goes on; a broken link (a lost event) is resync", async () => {
      const { a } = await impl.pair();
      const id = newConversation();
      const seen = recorder();
      const sub = a.subscribe(id, undefined, seen.listener);
      await sub.ready;
      await a.publish(id, event(id, 1, 0));
      await a.publish(id, event(id, 2));
      // Numbering resumed above a reservation, by an owner that knows nothing was announced in between.
      await a.publish(id, event(id, 1025, 2));
      // An owner whose publish of 1026 never reached the bus: 1027 says it follows 1026.
      await a.publish(id, event(id, 1027, 1026));
      await eventually(() => seen.resyncs.length === 1, 3000, "a resync");
      expect(seen.resyncs).toEqual([1027]);
      await a.publish(id, event(id, 1028));
      await eventually(() => seen.events.length === 4, 3000, "four events");
      expect(seen.seqs()).toEqual([1, 2, 1025, 1028]);
      expect(await a.replay(id, 2)).toMatchObject({ resync: false, events: [{ seq: 1025 }, { seq: 1027 }, { seq: 1028 }] });
      expect(await a.replay(id, 1025)).toEqual({ resync: true, latestSeq: 1028 });
      sub.dispose();
      await a.close();
    });

    it("a listener that throws neither stops its own delivery nor another subscriber's", async () => {
      const { a } = await impl.pair();
      const id = newConversation();
      let calls = 0;
      const throwing = a.subscribe(id, 0, { onEvent: () => { calls++; throw new Error("listener bug"); }, onResync: () => {} });
      const seen = recorder();
      const calm = a.subscribe(id, 0, seen.listener);
      await Promise.all([throwing.ready, calm.ready]);
      for (const seq of range(1, 10)) await a.publish(id, event(id, seq));
      await eventually(() => seen.events.length === 10 && calls === 10, 3000, "ten events to both");
      expect(seen.seqs()).toEqual(range(1, 10));
      throwing.dispose();
      calm.dispose();
      await a.close();
    });

    it("a resent publish is a duplicate and changes nothing", async () => {
      const { a } = await impl.pair();
      const id = newConversation();
      expect(await a.publish(id, event(id, 1))).toBe("published");
      expect(await a.publish(id, event(id, 1))).toBe("duplicate");
      expect(await a.publish(id, { ...event(id, 1), frame: "changed" })).toBe("duplicate");
      expect(await a.replay(id, 0)).toEqual({ resync: false, latestSeq: 1, events: [{ seq: 1, method: "generation_progress", frame: frame(id, 1) }] });
      await a.close();
    });
  });
}

describe.skipIf(!redisAvailable)("the Redis event bus, on Redis only", () => {
  it("a publish under a stale fencing token is refused", async () => {
    const a = await instance();
    const id = newConversation();
    expect(await a.bus.publish(id, event(id, 1), { fence: 0 })).toBe("published");
    expect(await a.bus.publish(id, event(id, 1))).toBe("duplicate");
    await a.commands.set(redis.keys.fence(id), "5");
    await expect(a.bus.publish(id, event(id, 2), { fence: 4 })).rejects.toBeInstanceOf(FencedError);
    expect(await a.bus.publish(id, event(id, 2), { fence: 5 })).toBe("published");
    expect(await a.bus.replay(id, 0)).toMatchObject({ resync: false, latestSeq: 2, events: [{ seq: 1 }, { seq: 2 }] });
    await a.bus.close();
  });

  it("a generation's ending deletes its running mark in the same step; refused by the fence, it leaves the mark for the next owner", async () => {
    const a = await instance();
    const markers = new GenerationMarkers(a.commands, redis.keys, "node-a", redis.log);
    const id = newConversation();
    const ending = (seq: number, generationId: string) => ({ ...event(id, seq), method: "error", endsGeneration: generationId });
    markers.started(id, "g_one");
    expect(await markers.left(id)).toEqual({ nodeId: "node-a", generationId: "g_one" });
    expect(await markers.marked()).toContain(id);
    // An event of the generation that does not end it, and the ending of another generation, leave the mark alone.
    await a.bus.publish(id, event(id, 1), { fence: 1 });
    await a.bus.publish(id, ending(2, "g_other"), { fence: 1 });
    expect(await markers.left(id)).toEqual({ nodeId: "node-a", generationId: "g_one" });
    await a.bus.publish(id, ending(3, "g_one"), { fence: 1 });
    expect(await markers.left(id)).toBeNull();
    // Its index entry is gone at the sweep's next look, pruned if nobody cleaned it up.
    expect(await markers.marked()).not.toContain(id);

    // Fenced out (another instance took the conversation): the ending is not on the bus, so the mark stays.
    markers.started(id, "g_two");
    await a.commands.set(redis.keys.fence(id), "7");
    await expect(a.bus.publish(id, ending(4, "g_two"), { fence: 1 })).rejects.toBeInstanceOf(FencedError);
    expect(await markers.left(id)).toEqual({ nodeId: "node-a", generationId: "g_two" });
    expect(await markers.marked()).toContain(id);
    await a.bus.close();
  });

  it("a subscriber whose connection drops catches up from the stream when it is back", async () => {
    const a = await instance();
    const b = await instance();
    const id = newConversation();
    const subscriberId = await b.subscriber.client("ID");
    const seen = recorder();
    const sub = b.bus.subscribe(id, 0, seen.listener);
    await sub.ready;
    for (const seq of range(1, 5)) await a.bus.publish(id, event(id, seq));
    await eventually(() => seen.events.length === 5, 3000, "five events");
    // Redis drops the subscriber's connection: what is published before it reconnects is not seen live.
    await a.commands.client("KILL", "ID", String(subscriberId));
    for (const seq of range(6, 20)) await a.bus.publish(id, event(id, seq));
    await eventually(() => seen.events.length === 20, 5000, "the events published while it was away");
    for (const seq of range(21, 25)) await a.bus.publish(id, event(id, seq));
    await eventually(() => seen.events.length === 25, 3000, "live events after the reconnection");
    expect(seen.seqs()).toEqual(range(1, 25));
    expect(seen.resyncs).toEqual([]);
    sub.dispose();
    await a.bus.close();
    await b.bus.close();
  });

  it("the publisher's connection dropping mid-stream leaves no silent gap: each event arrives, or the subscriber is told to resync", async () => {
    const a = await instance();
    const b = await instance();
    const id = newConversation();
    const seen = recorder();
    const sub = b.bus.subscribe(id, 0, seen.listener);
    await sub.ready;
    const publisherId = await a.commands.client("ID");
    const outcomes: Promise<string>[] = [];
    for (const seq of range(1, 400)) {
      outcomes.push(a.bus.publish(id, event(id, seq)).catch(() => "failed"));
      if (seq === 150) await b.commands.client("KILL", "ID", String(publisherId));
    }
    const settled = await Promise.all(outcomes);
    expect(settled.every((o) => o === "published" || o === "duplicate" || o === "failed")).toBe(true);
    // Commands answered by nobody when the connection dropped are resent; the ones Redis had already run come back "duplicate".
    await a.bus.publish(id, event(id, 401));
    await eventually(() => seen.events.at(-1)?.seq === 401, 5000, "the last event");
    // Strictly increasing; where a seq is missing, a resync was reported at or after the hole.
    const seqs = seen.seqs();
    for (let i = 1; i < seqs.length; i++) {
      expect(seqs[i]!).toBeGreaterThan(seqs[i - 1]!);
      if (seqs[i]! !== seqs[i - 1]! + 1) expect(seen.resyncs.some((r) => r >= seqs[i - 1]! + 1)).toBe(true);
    }
    const stored = await b.bus.replay(id, 0);
    if (!stored.resync) expect(stored.events.map((e) => e.seq)).toEqual(seqs.filter((s) => stored.events.some((e) => e.seq === s)));
    sub.dispose();
    await a.bus.close();
    await b.bus.close();
  });

  it("beyond maxInFlight a publish fails at once, and watchers are told to resync rather than miss it silently", async () => {
    const a = await instance({ maxInFlight: 5 });
    const b = await instance();
    const id = newConversation();
    const seen = recorder();
    const sub = b.bus.subscribe(id, 0, seen.listener);
    await sub.ready;
    const outcomes = await Promise.all(range(1, 20).map((seq) => a.bus.publish(id, event(id, seq)).catch((e: Error) => e.name)));
    expect(outcomes.slice(0, 5)).toEqual(Array(5).fill("published"));
    expect(outcomes.slice(5)).toEqual(Array(15).fill("BusOverloadedError"));
    await a.bus.publish(id, event(id, 21));
    await eventually(() => seen.resyncs.length === 1, 3000, "a resync");
    expect(seen.seqs()).toEqual(range(1, 5));
    expect(seen.resyncs).toEqual([21]);
    sub.dispose();
    await a.bus.close();
    await b.bus.close();
  });

  it("a stream lost apart from its meta starts counting bytes again (no stale count that would trim every new event)", async () => {
    const a = await instance({ maxBytes: 2000 });
    const id = newConversation();
    for (const seq of range(1, 5)) await a.bus.publish(id, event(id, seq));
    await a.commands.del(redis.keys.events(id));
    await a.bus.publish(id, event(id, 6));
    expect(Number(await a.commands.hget(redis.keys.eventsMeta(id), "bytes"))).toBe(Buffer.byteLength(event(id, 6).frame));
    expect(await a.bus.replay(id, 5)).toMatchObject({ resync: false, events: [{ seq: 6 }] });
    await a.bus.close();
  });
});
