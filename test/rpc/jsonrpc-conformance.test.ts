/**
 * JSON-RPC 2.0 conformance over a real WebSocket: the examples of the
 * specification (section 7), adapted to our methods, plus the cases
 * json-rpc-2.0 gets wrong out of the box (see LIBRARY-NOTES).
 */
import { describe, expect, it } from "vitest";
import { openRaw, useRawServer } from "../harness/raw-socket.js";

const fixture = useRawServer();
const roundTrip = (frame: string) => fixture.roundTrip(frame);

const status = (id: unknown) => JSON.stringify({ jsonrpc: "2.0", method: "server.status", id });

describe("single requests", () => {
  it("echoes ids exactly: string, number, fraction and null", async () => {
    for (const id of ["abc", 1, 0, -7, 2.5, "", null]) {
      const reply = await roundTrip(status(id));
      expect(reply.id).toStrictEqual(id);
      expect(reply.jsonrpc).toBe("2.0");
      expect(reply.result.version).toBeTypeOf("string");
    }
  });

  it("answers invalid JSON with -32700 and id null", async () => {
    const reply = await roundTrip('{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]');
    expect(reply).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32700, message: expect.any(String) } });
  });

  it("answers a non-string method with -32600 and id null", async () => {
    const reply = await roundTrip('{"jsonrpc": "2.0", "method": 1, "params": "bar"}');
    expect(reply.error.code).toBe(-32600);
    expect(reply.id).toBeNull();
  });

  it("answers {method: 1, id: 12} with -32600 echoing the id", async () => {
    const reply = await roundTrip('{"jsonrpc":"2.0","method":1,"id":12}');
    expect(reply.error.code).toBe(-32600);
    expect(reply.id).toBe(12);
  });

  it("answers null, a number and a string frame with -32600", async () => {
    for (const frame of ["null", "1", '"hello"', "true"]) {
      const reply = await roundTrip(frame);
      expect(reply).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600 } });
    }
  });

  it("refuses a wrong or missing jsonrpc member", async () => {
    const a = await roundTrip('{"jsonrpc":"1.0","method":"server.status","id":3}');
    expect(a.error.code).toBe(-32600);
    expect(a.id).toBe(3);
    const b = await roundTrip('{"method":"server.status","id":4}');
    expect(b.error.code).toBe(-32600);
  });

  it("refuses string params with -32600 (params must be structured)", async () => {
    const reply = await roundTrip('{"jsonrpc":"2.0","method":"server.status","params":"bar","id":5}');
    expect(reply.error.code).toBe(-32600);
    expect(reply.id).toBe(5);
  });

  it("answers positional (array) params with -32602: our methods take names", async () => {
    const reply = await roundTrip('{"jsonrpc":"2.0","method":"conversation.get","params":["c_x"],"id":6}');
    expect(reply.error.code).toBe(-32602);
  });

  it("answers an unknown method with -32601 naming it", async () => {
    const reply = await roundTrip('{"jsonrpc":"2.0","method":"foobar","id":"1"}');
    expect(reply).toMatchObject({ id: "1", error: { code: -32601 } });
    expect(reply.error.message).toContain("foobar");
  });

  it("answers invalid params with -32602 listing issues by path", async () => {
    const reply = await roundTrip('{"jsonrpc":"2.0","method":"conversation.get","params":{"includeRecords":"yes"},"id":7}');
    expect(reply.error.code).toBe(-32602);
    const paths = reply.error.data.issues.map((i: { path: string }) => i.path).sort();
    expect(paths).toEqual(["conversationId", "includeRecords"]);
    expect(reply.error.message).toContain("conversationId");
  });

  it("refuses a field the method does not know (a typo must not silently change behaviour), naming it", async () => {
    const reply = await roundTrip('{"jsonrpc":"2.0","method":"conversation.create","params":{"titel":"x","settings":{"maxIteration":3}},"id":8}');
    expect(reply.error.code).toBe(-32602);
    expect(reply.error.message).toContain("titel");
    expect(JSON.stringify(reply.error.data)).toContain("maxIteration");
  });

  it("never answers a notification, even one for an unknown method or with bad params", async () => {
    fixture.raw.send('{"jsonrpc":"2.0","method":"server.status"}');
    fixture.raw.send('{"jsonrpc":"2.0","method":"foobar"}');
    fixture.raw.send('{"jsonrpc":"2.0","method":"conversation.get","params":{}}');
    expect(await fixture.raw.silentFor(150)).toBe(true);
  });

  it("runs a valid notification (its effect is visible) without answering it", async () => {
    const before = (await roundTrip(status(20))).result.conversationsStored;
    fixture.raw.send('{"jsonrpc":"2.0","method":"conversation.create","params":{"title":"by notification"}}');
    expect(await fixture.raw.silentFor(150)).toBe(true);
    const after = (await roundTrip(status(21))).result.conversationsStored;
    expect(after).toBe(before + 1);
  });
});

describe("batches", () => {
  it("answers an empty batch with one -32600 object (not an array)", async () => {
    const reply = await roundTrip("[]");
    expect(Array.isArray(reply)).toBe(false);
    expect(reply).toMatchObject({ id: null, error: { code: -32600 } });
  });

  it("answers [1] with an array of one -32600", async () => {
    const reply = await roundTrip("[1]");
    expect(reply).toEqual([{ jsonrpc: "2.0", id: null, error: { code: -32600, message: expect.any(String) } }]);
  });

  it("answers [1,2,3] with three -32600", async () => {
    const reply = await roundTrip("[1,2,3]");
    expect(reply).toHaveLength(3);
    for (const r of reply) expect(r.error.code).toBe(-32600);
  });

  it("answers [null] with an array of one -32600 (and survives)", async () => {
    const reply = await roundTrip("[null]");
    expect(reply).toEqual([{ jsonrpc: "2.0", id: null, error: { code: -32600, message: expect.any(String) } }]);
    expect((await roundTrip(status(30))).id).toBe(30);
  });

  it("answers a batch of one with an array of one", async () => {
    const reply = await roundTrip(`[${status(31)}]`);
    expect(Array.isArray(reply)).toBe(true);
    expect(reply).toHaveLength(1);
    expect(reply[0].id).toBe(31);
  });

  it("answers the spec's mixed batch: results, errors and nothing for notifications, in order", async () => {
    const frame = `[
      {"jsonrpc": "2.0", "method": "server.status", "id": "1"},
      {"jsonrpc": "2.0", "method": "server.status"},
      {"jsonrpc": "2.0", "method": "conversation.get", "params": {"conversationId": "c_missing"}, "id": "2"},
      {"foo": "boo"},
      {"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"},
      {"jsonrpc": "2.0", "method": "tools.list", "id": "9"}
    ]`;
    const reply = await roundTrip(frame);
    expect(reply).toHaveLength(5);
    expect(reply[0]).toMatchObject({ id: "1", result: { version: expect.any(String) } });
    expect(reply[1]).toMatchObject({ id: "2", error: { code: -32010 } });
    expect(reply[2]).toMatchObject({ id: null, error: { code: -32600 } });
    expect(reply[3]).toMatchObject({ id: "5", error: { code: -32601 } });
    expect(reply[4]).toMatchObject({ id: "9", result: { tools: expect.any(Array) } });
  });

  it("sends nothing at all for a batch of only notifications", async () => {
    fixture.raw.send('[{"jsonrpc":"2.0","method":"server.status"},{"jsonrpc":"2.0","method":"tools.list"}]');
    expect(await fixture.raw.silentFor(150)).toBe(true);
  });

  it("answers a malformed batch (invalid JSON) with a single -32700", async () => {
    const reply = await roundTrip('[{"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},{"jsonrpc": "2.0", "method"]');
    expect(reply).toMatchObject({ id: null, error: { code: -32700 } });
  });
});

describe("session rules", () => {
  it("refuses everything but initialize before initialize, with the documented code", async () => {
    const fresh = await openRaw(fixture.server.url);
    fresh.send(status(1));
    const reply: any = await fresh.next();
    expect(reply.error.code).toBe(-32001);
    expect(reply.error.message).toContain("initialize");
    fresh.close();
  });

  it("refuses a second initialize and an unsupported major version", async () => {
    const again = await roundTrip('{"jsonrpc":"2.0","method":"initialize","params":{"protocolVersion":"1.0"},"id":40}');
    expect(again.error.code).toBe(-32002);
    const fresh = await openRaw(fixture.server.url);
    fresh.send('{"jsonrpc":"2.0","method":"initialize","params":{"protocolVersion":"2.0"},"id":41}');
    const reply: any = await fresh.next();
    expect(reply.error.code).toBe(-32003);
    expect(reply.error.data.supported).toBe("1.0");
    fresh.close();
  });

  it("sends connected after the initialize result", async () => {
    const fresh = await openRaw(fixture.server.url);
    fresh.send('{"jsonrpc":"2.0","method":"initialize","params":{"protocolVersion":"1.0","clientInfo":{"name":"t"}},"id":1}');
    const first: any = await fresh.next();
    const second: any = await fresh.next();
    expect(first.id).toBe(1);
    expect(second.method).toBe("connected");
    expect(second.params.connectionId).toBe(first.result.connectionId);
    fresh.close();
  });

  it("accepts a binary frame as UTF-8 JSON", async () => {
    fixture.raw.socket.send(Buffer.from(status(50)), { binary: true });
    expect(((await fixture.raw.next()) as any).id).toBe(50);
  });
});
