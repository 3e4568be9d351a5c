/**
 * subscribers_changed: who watches a conversation, sent live (no seq, never
 * replayed) to the subscribers that asked for it at initialize, when a
 * subscriber comes, leaves or its connection closes; the list is bounded.
 */
import { afterEach, describe, expect, it } from "vitest";
import { PRESENCE_CLIENTS_MAX } from "../../protocol/index.js";
import { createConnection } from "../../src/sessions/connection.js";
import { Presence } from "../../src/sessions/presence.js";
import { eventually } from "../harness/eventually.js";
import { initialize, type RawSocket } from "../harness/raw-socket.js";
import { startTestServer, type TestServer } from "../harness/test-server.js";

let ts: TestServer | undefined;

afterEach(async () => {
  await ts?.close();
  ts = undefined;
});

async function watcher(name: string | undefined, presence: boolean): Promise<RawSocket<unknown>> {
  return initialize(await ts!.openRawInMemory(), {
    ...(name ? { clientInfo: { name, version: "1" } } : {}),
    capabilities: { subscriberPresence: presence },
  });
}

function presenceEvents(socket: RawSocket<unknown>) {
  return socket.notifications().filter((n) => n.method === "subscribers_changed").map((n) => n.params);
}

async function ok(socket: RawSocket<unknown>, method: string, params: unknown) {
  const { response } = await socket.request(method, params);
  expect(response.error, `${method}: ${JSON.stringify(response.error)}`).toBeUndefined();
  return response.result;
}

describe("subscribers_changed", () => {
  it("tells presence subscribers who watches, on subscribe, unsubscribe and close, without seq or replay", async () => {
    ts = await startTestServer();
    const a = await watcher("ide", true);
    const b = await watcher(undefined, false);
    const c = await watcher("web", true);
    const { id } = await ok(a, "conversation.create", { title: "presence" });

    await ok(a, "conversation.subscribe", { conversationId: id });
    const [first] = presenceEvents(a);
    expect(first).toMatchObject({ conversationId: id, count: 1, clients: [{ clientInfo: { name: "ide", version: "1" } }] });
    expect(first).not.toHaveProperty("seq");

    await ok(b, "conversation.subscribe", { conversationId: id });
    await ok(c, "conversation.subscribe", { conversationId: id });
    await eventually(() => presenceEvents(a).length === 3);
    expect(presenceEvents(a).map((e) => e.count)).toEqual([1, 2, 3]);
    expect(presenceEvents(a)[2].clients.map((x: { clientInfo: unknown }) => x.clientInfo)).toEqual([
      { name: "ide", version: "1" },
      null,
      { name: "web", version: "1" },
    ]);
    // Asked for nothing: sees nothing. Asked after the others subscribed: sees its own arrival.
    expect(presenceEvents(b)).toEqual([]);
    expect(presenceEvents(c).map((e) => e.count)).toEqual([3]);

    await ok(b, "conversation.unsubscribe", { conversationId: id });
    await eventually(() => presenceEvents(a).length === 4);
    expect(presenceEvents(a)[3].count).toBe(2);
    // Subscribing again to what it already watches changes nothing.
    await ok(a, "conversation.subscribe", { conversationId: id });
    c.close();
    await eventually(() => presenceEvents(a).length === 5);
    expect(presenceEvents(a)[4]).toMatchObject({ count: 1, clients: [{ clientInfo: { name: "ide" } }] });

    // Live only: a late subscriber replaying from seq 0 gets stored events, never presence.
    await ok(a, "message.append", { conversationId: id, role: "user", content: "hi" });
    const late = await watcher("late", false);
    await ok(late, "conversation.subscribe", { conversationId: id, afterSeq: 0 });
    expect(late.notifications().map((n) => n.method)).toEqual(["message_added"]);
  });

  it("lists at most PRESENCE_CLIENTS_MAX clients, and counts them all", () => {
    const presence = new Presence();
    const frames: string[] = [];
    const listener = createConnection("listener", (f) => frames.push(f));
    listener.subscriberPresence = true;
    presence.joined(listener, "c1");
    for (let i = 0; i < PRESENCE_CLIENTS_MAX + 5; i++) presence.joined(createConnection(`k${i}`, () => {}), "c1");
    const last = JSON.parse(frames.at(-1)!).params;
    expect(last.count).toBe(PRESENCE_CLIENTS_MAX + 6);
    expect(last.clients).toHaveLength(PRESENCE_CLIENTS_MAX);
    expect(last.clients[0]).toEqual({ connectionId: "listener", clientInfo: null });
  });
});
