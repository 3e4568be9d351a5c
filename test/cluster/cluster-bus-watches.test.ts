/**
 * Subscriptions served from the event bus (src/cluster/bus-watches.ts), on
 * the one-process LocalEventBus (same answers as the Redis bus): frames reach
 * the connection once and in order, honouring its opt-outs; a resync at the
 * start is left to the subscribe result; events lost mid-subscription close
 * the connection (the client reconnects with afterSeq and is told to resync);
 * unwatch stops delivery.
 */
import { describe, expect, it } from "vitest";
import { BusWatches, LOST_EVENTS_CLOSE_CODE } from "../../src/cluster/bus-watches.js";
import { LocalEventBus } from "../../src/cluster/local-event-bus.js";
import { createLogger } from "../../src/logging/logger.js";
import { createConnection, type Connection } from "../../src/sessions/connection.js";

const log = createLogger("silent");

function connection(): { connection: Connection; frames: string[]; closed: [number, string][] } {
  const frames: string[] = [];
  const closed: [number, string][] = [];
  const c = createConnection("k_test", (frame) => frames.push(frame));
  c.close = (code, reason) => closed.push([code, reason]);
  return { connection: c, frames, closed };
}

const event = (seq: number, prevSeq: number, method = "generation_progress") => ({ seq, prevSeq, method, frame: `{"seq":${seq}}` });

describe("bus watches", () => {
  it("deliver replayed then live frames once, in order, without opted-out methods; unwatch stops them", async () => {
    const bus = new LocalEventBus();
    for (let seq = 1; seq <= 3; seq++) await bus.publish("c_1", event(seq, seq - 1));
    const watches = new BusWatches(bus, log);
    const { connection: c, frames, closed } = connection();
    c.optOut = new Set(["tool_output"]);
    expect(await watches.watch(c, "c_1", 1)).toEqual({ replayed: 2, resync: false });
    expect(c.subscriptions.has("c_1")).toBe(true);
    await bus.publish("c_1", event(3, 2)); // a resend: not delivered twice
    await bus.publish("c_1", event(4, 3, "tool_output"));
    await bus.publish("c_1", event(5, 4));
    expect(frames).toEqual(['{"seq":2}', '{"seq":3}', '{"seq":5}']);
    expect(watches.size).toBe(1);
    watches.unwatch(c, "c_1");
    await bus.publish("c_1", event(6, 5));
    expect(frames).toHaveLength(3);
    expect(watches.size).toBe(0);
    expect(closed).toEqual([]);
  });

  it("a resync at the start is the subscribe result's; events lost later close the connection", async () => {
    const bus = new LocalEventBus({ maxCount: 2 });
    for (let seq = 1; seq <= 4; seq++) await bus.publish("c_1", event(seq, seq - 1));
    const watches = new BusWatches(bus, log);
    const { connection: c, frames, closed } = connection();
    // Events 1 and 2 are no longer held.
    expect(await watches.watch(c, "c_1", 0)).toEqual({ replayed: 0, resync: true });
    expect(closed).toEqual([]);
    await bus.publish("c_1", event(5, 4));
    expect(frames).toEqual(['{"seq":5}']);
    // Events 6 and 7 never reached this instance and are trimmed by the time 9 arrives.
    await bus.publish("c_1", event(8, 7));
    await bus.publish("c_1", event(9, 8));
    await new Promise((r) => setTimeout(r, 10));
    expect(closed).toHaveLength(1);
    expect(closed[0]![0]).toBe(LOST_EVENTS_CLOSE_CODE);
    expect(closed[0]![1]).toContain("subscribe with afterSeq");
  });
});
