/**
 * Event fan-out: every subscriber sees the same events in the same seq
 * order, concurrent appends lose nothing, a reconnecting client gets what it
 * missed (or is told to resync), and unsubscribe, disconnect and
 * notification opt-out stop delivery. Clients are on in-memory links, but
 * where frames are compared byte for byte they are on real WebSockets.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { AgentwireClient } from "../../clients/typescript/index.js";
import { EventRecorder } from "../harness/event-recorder.js";
import { eventually } from "../harness/eventually.js";
import { initialize, openInitialized, type RawSocket } from "../harness/raw-socket.js";
import { startTestServer, type TestServer } from "../harness/test-server.js";

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

let ts: TestServer | undefined;
const sockets: RawSocket<unknown>[] = [];

afterEach(async () => {
  for (const s of sockets.splice(0)) s.close();
  await ts?.close();
  ts = undefined;
});

/** An initialized raw socket over a real WebSocket (for tests that compare frames as bytes). */
async function frameSocket(url: string): Promise<RawSocket> {
  const s = await openInitialized(url);
  sockets.push(s);
  return s;
}

/** An initialized raw client over an in-memory link. */
async function memorySocket(params: Record<string, unknown> = {}): Promise<RawSocket<unknown>> {
  const s = await initialize(await ts!.openRawInMemory(), params);
  sockets.push(s);
  return s;
}

/** A round trip on the client's own socket: any notification sent before it has been dispatched. */
async function barrier(client: AgentwireClient): Promise<void> {
  await client.server.status();
}

function expectConsecutive(seqs: number[]): void {
  for (let i = 1; i < seqs.length; i++) expect(seqs[i], `seq after ${seqs[i - 1]}`).toBe(seqs[i - 1]! + 1);
}

describe("fan-out", () => {
  it("message_added and conversation_updated reach every subscriber with conversationId, seq and timestamp", async () => {
    ts = await startTestServer();
    const writer = await ts.connectInMemory();
    const outsider = await ts.connectInMemory();
    const subscribers = await Promise.all([ts.connectInMemory(), ts.connectInMemory(), ts.connectInMemory()]);
    const c = await writer.conversation.create({ title: "fan" });
    const other = await writer.conversation.create({ title: "other" });
    const logs = subscribers.map((s) => new EventRecorder(s));
    const outsiderLog = new EventRecorder(outsider);
    for (const s of subscribers) {
      const sub = await s.conversation.subscribe({ conversationId: c.id });
      expect(sub).toMatchObject({ replayed: 0, resync: false, conversation: { id: c.id } });
      expect(sub.state.seq).toBe(0);
    }
    await outsider.conversation.subscribe({ conversationId: other.id });

    const appended = [];
    for (let i = 0; i < 3; i++) appended.push(await writer.message.append({ conversationId: c.id, role: "user", content: `m${i}` }));
    const updated = await writer.conversation.update({ conversationId: c.id, title: "renamed" });
    appended.push(await writer.message.append({ conversationId: c.id, role: "system", content: "last" }));

    for (const log of logs) {
      await log.waitForCount("message_added", 4);
      await log.waitForCount("conversation_updated", 1);
      const events = log.events;
      expect(events.map((e) => e.method)).toEqual([
        "message_added",
        "message_added",
        "message_added",
        "conversation_updated",
        "message_added",
      ]);
      for (const e of events) {
        expect(e.params.conversationId).toBe(c.id);
        expect(e.params.timestamp).toMatch(ISO);
        expect(Number.isInteger(e.params.seq)).toBe(true);
      }
      const seqs = events.map((e) => e.params.seq as number);
      expect(seqs[0]).toBe(1);
      expectConsecutive(seqs);
      expect(log.of("message_added").map((m) => m.record)).toEqual(appended);
      expect(log.of("conversation_updated")[0]).toMatchObject({ deleted: false, conversation: updated });
    }
    // Every subscriber saw the very same events.
    expect(logs[1]!.events).toEqual(logs[0]!.events);
    expect(logs[2]!.events).toEqual(logs[0]!.events);

    // The subscriber of another conversation and the writer heard none of it.
    await barrier(outsider);
    await barrier(writer);
    expect(outsiderLog.events).toEqual([]);
    const writerLog = new EventRecorder(writer);
    await writer.message.append({ conversationId: c.id, role: "user", content: "unheard" });
    await barrier(writer);
    expect(writerLog.events).toEqual([]);

    const state = await writer.conversation.get({ conversationId: c.id });
    expect(state.state.seq).toBe(6);
  });

  it("two subscribers receive byte-identical frames", async () => {
    // Real WebSockets: the frames are compared as the bytes the server sent.
    ts = await startTestServer();
    const writer = await ts.connect();
    const c = await writer.conversation.create({});
    const a = await frameSocket(ts.url);
    const b = await frameSocket(ts.url);
    await a.request("conversation.subscribe", { conversationId: c.id });
    await b.request("conversation.subscribe", { conversationId: c.id });
    a.frames.length = 0;
    b.frames.length = 0;

    for (let i = 0; i < 10; i++) {
      await writer.message.append({ conversationId: c.id, role: i % 2 ? "system" : "user", content: `line ${i} ✓ "quoted"` });
      if (i === 4) await writer.conversation.update({ conversationId: c.id, title: "mid", settings: { maxIterations: 2 } });
    }
    await a.waitForFrames(11);
    await b.waitForFrames(11);
    expect(a.frames).toHaveLength(11);
    expect(b.frames).toEqual(a.frames);
    const seqs = a.notifications().map((n) => n.params.seq as number);
    expect(seqs).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
  });

  it("200 concurrent appends from 4 clients are all stored, in the order of their seq", async () => {
    ts = await startTestServer();
    const writers = await Promise.all([ts.connectInMemory(), ts.connectInMemory(), ts.connectInMemory(), ts.connectInMemory()]);
    const watcher = await ts.connectInMemory();
    const c = await writers[0]!.conversation.create({});
    const log = new EventRecorder(watcher);
    await watcher.conversation.subscribe({ conversationId: c.id });

    const sends = writers.flatMap((w, wi) =>
      Array.from({ length: 50 }, (_, i) => w.message.append({ conversationId: c.id, role: "user", content: `w${wi}-${i}` })),
    );
    const results = await Promise.all(sends);
    expect(new Set(results.map((r) => r.id)).size).toBe(200);

    await log.waitForCount("message_added", 200);
    const events = log.of("message_added");
    expect(events).toHaveLength(200);
    const seqs = events.map((e) => e.seq);
    expectConsecutive(seqs);

    const got = await watcher.conversation.get({ conversationId: c.id, includeRecords: true });
    expect(got.records).toHaveLength(200);
    expect(got.conversation.recordCount).toBe(200);
    // Same records, same order as their events.
    expect(got.records!.map((r) => r.id)).toEqual(events.map((e) => e.record.id));
    expect(new Set(got.records!.map((r) => (r as { content: string }).content)).size).toBe(200);
    expect(got.records).toEqual(expect.arrayContaining(results));
    expect(got.state.seq).toBe(seqs.at(-1));
  });
});

describe("replay on reconnect", () => {
  it("a subscriber that reconnects with afterSeq gets exactly the missed events, in order, before the response", async () => {
    // Real WebSockets: a replayed frame is compared as bytes with the live one.
    ts = await startTestServer();
    const writer = await ts.connect();
    const c = await writer.conversation.create({});
    const live = await frameSocket(ts.url); // stays connected throughout: the reference stream
    await live.request("conversation.subscribe", { conversationId: c.id });
    live.frames.length = 0;

    const first = await frameSocket(ts.url);
    await first.request("conversation.subscribe", { conversationId: c.id });
    for (let i = 0; i < 3; i++) await writer.message.append({ conversationId: c.id, role: "user", content: `seen ${i}` });
    await first.waitForFrames(3);
    const lastSeen = Math.max(...first.notifications().map((n) => n.params.seq as number));
    expect(lastSeen).toBe(3);
    first.close();
    await first.closed;
    await eventually(async () => (await writer.server.status()).subscriptions === 1, 3000, "subscription dropped");

    const missed = [];
    for (let i = 0; i < 4; i++) missed.push(await writer.message.append({ conversationId: c.id, role: "user", content: `missed ${i}` }));
    await writer.conversation.update({ conversationId: c.id, title: "missed too" });
    await live.waitForFrames(8);

    const again = await frameSocket(ts.url);
    const { response, before } = await again.request("conversation.subscribe", { conversationId: c.id, afterSeq: lastSeen });
    expect(response.result).toMatchObject({ replayed: 5, resync: false });
    expect(response.result.state.seq).toBe(8);
    expect(before).toHaveLength(5);
    const replayed = before.map((f) => JSON.parse(f));
    expect(replayed.map((n) => n.params.seq)).toEqual([4, 5, 6, 7, 8]);
    expect(replayed.map((n) => n.method)).toEqual([
      "message_added",
      "message_added",
      "message_added",
      "message_added",
      "conversation_updated",
    ]);
    expect(replayed.slice(0, 4).map((n) => n.params.record)).toEqual(missed);
    // A replayed event is the very frame live subscribers got.
    expect(before).toEqual(live.frames.slice(3, 8));

    // Then new events flow as usual, and nothing is sent twice.
    await writer.message.append({ conversationId: c.id, role: "user", content: "new" });
    await again.waitForFrames(7);
    const after = again.notifications();
    expect(after.map((n) => n.params.seq)).toEqual([4, 5, 6, 7, 8, 9]);
    expect(after.at(-1)!.params.record.content).toBe("new");
  });

  it("afterSeq equal to the latest seq replays nothing", async () => {
    ts = await startTestServer();
    const writer = await ts.connectInMemory();
    const c = await writer.conversation.create({});
    for (let i = 0; i < 3; i++) await writer.message.append({ conversationId: c.id, role: "user", content: `${i}` });
    const s = await memorySocket();
    const { response, before } = await s.request("conversation.subscribe", { conversationId: c.id, afterSeq: 3 });
    expect(before).toEqual([]);
    expect(response.result).toMatchObject({ replayed: 0, resync: false, state: { seq: 3 } });
    const zero = await memorySocket();
    const fromStart = await zero.request("conversation.subscribe", { conversationId: c.id, afterSeq: 0 });
    expect(fromStart.response.result).toMatchObject({ replayed: 3, resync: false });
    expect(fromStart.before.map((f) => JSON.parse(f).params.seq)).toEqual([1, 2, 3]);
  });

  it("a gap older than the event log answers resync: true with the latest seq, and replays nothing", async () => {
    ts = await startTestServer({ limits: { eventLogSize: 5 } });
    const writer = await ts.connectInMemory();
    const c = await writer.conversation.create({});
    for (let i = 0; i < 20; i++) await writer.message.append({ conversationId: c.id, role: "user", content: `${i}` });

    const s = await memorySocket();
    const { response, before } = await s.request("conversation.subscribe", { conversationId: c.id, afterSeq: 0 });
    expect(before).toEqual([]);
    expect(response.result).toMatchObject({ resync: true, replayed: 0 });
    expect(response.result.state.seq).toBe(20);

    // The log holds seqs 16..20: afterSeq 15 is still complete, 14 is not.
    const edge = await memorySocket();
    const held = await edge.request("conversation.subscribe", { conversationId: c.id, afterSeq: 15 });
    expect(held.response.result).toMatchObject({ resync: false, replayed: 5 });
    expect(held.before.map((f) => JSON.parse(f).params.seq)).toEqual([16, 17, 18, 19, 20]);
    const past = await memorySocket();
    const gone = await past.request("conversation.subscribe", { conversationId: c.id, afterSeq: 14 });
    expect(gone.response.result).toMatchObject({ resync: true, replayed: 0 });
    expect(gone.before).toEqual([]);

    // A resynced subscriber still receives new events.
    await writer.message.append({ conversationId: c.id, role: "user", content: "after resync" });
    await s.waitForFrames(2);
    expect(s.notifications().map((n) => n.params.seq)).toEqual([21]);
  });
});

describe("stopping delivery", () => {
  it("unsubscribe stops delivery to that connection only", async () => {
    ts = await startTestServer();
    const writer = await ts.connectInMemory();
    const leaver = await ts.connectInMemory();
    const stayer = await ts.connectInMemory();
    const c = await writer.conversation.create({});
    const leaverLog = new EventRecorder(leaver);
    const stayerLog = new EventRecorder(stayer);
    await leaver.conversation.subscribe({ conversationId: c.id });
    await stayer.conversation.subscribe({ conversationId: c.id });

    await writer.message.append({ conversationId: c.id, role: "user", content: "both" });
    await leaverLog.waitForCount("message_added", 1);
    expect(await leaver.conversation.unsubscribe({ conversationId: c.id })).toEqual({});
    // Unsubscribing again is harmless.
    expect(await leaver.conversation.unsubscribe({ conversationId: c.id })).toEqual({});

    await writer.message.append({ conversationId: c.id, role: "user", content: "stayer only" });
    await writer.conversation.update({ conversationId: c.id, title: "t" });
    await stayerLog.waitForCount("conversation_updated", 1);
    await barrier(leaver);
    expect(leaverLog.events.map((e) => e.params.seq)).toEqual([1]);
    expect(stayerLog.events.map((e) => e.params.seq)).toEqual([1, 2, 3]);
    expect((await writer.server.status()).subscriptions).toBe(1);
  });

  it("a closed connection's subscriptions are dropped", async () => {
    ts = await startTestServer();
    const writer = await ts.connectInMemory();
    const goner = await ts.connectInMemory();
    const c1 = await writer.conversation.create({});
    const c2 = await writer.conversation.create({});
    await goner.conversation.subscribe({ conversationId: c1.id });
    await goner.conversation.subscribe({ conversationId: c2.id });
    await writer.conversation.subscribe({ conversationId: c1.id });
    expect((await writer.server.status()).subscriptions).toBe(3);

    await goner.close();
    await eventually(async () => (await writer.server.status()).subscriptions === 1, 3000, "subscriptions down to 1");
    expect((await writer.server.status()).connections).toBe(1);
    // Publishing to a conversation whose only subscriber left is fine.
    await writer.message.append({ conversationId: c2.id, role: "user", content: "nobody listens" });
    expect((await writer.conversation.get({ conversationId: c2.id })).state.seq).toBe(1);
  });

  it("notificationOptOut suppresses those methods; their seqs still advance", async () => {
    ts = await startTestServer();
    const writer = await ts.connectInMemory();
    const quiet = await ts.connectInMemory({ capabilities: { notificationOptOut: ["message_added"] } });
    const c = await writer.conversation.create({});
    const log = new EventRecorder(quiet);
    await quiet.conversation.subscribe({ conversationId: c.id });

    await writer.message.append({ conversationId: c.id, role: "user", content: "a" });
    await writer.message.append({ conversationId: c.id, role: "user", content: "b" });
    await writer.conversation.update({ conversationId: c.id, title: "visible" });
    await log.waitForCount("conversation_updated", 1);
    await barrier(quiet);
    expect(log.events.map((e) => [e.method, e.params.seq])).toEqual([["conversation_updated", 3]]);
  });

  it("notificationOptOut also applies to replayed events", async () => {
    ts = await startTestServer();
    const writer = await ts.connectInMemory();
    const c = await writer.conversation.create({});
    await writer.message.append({ conversationId: c.id, role: "user", content: "a" });
    await writer.conversation.update({ conversationId: c.id, title: "t" });
    await writer.message.append({ conversationId: c.id, role: "user", content: "b" });

    const quiet = await memorySocket({ capabilities: { notificationOptOut: ["message_added"] } });
    const { response, before } = await quiet.request("conversation.subscribe", { conversationId: c.id, afterSeq: 0 });
    expect(response.result.resync).toBe(false);
    const methods = before.map((f) => JSON.parse(f).method);
    expect(methods).toEqual(["conversation_updated"]);
    expect(response.result.replayed).toBe(1);
  });
});
