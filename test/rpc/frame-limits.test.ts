/**
 * What one frame may cost (issue: "one frame can stall everyone"): nesting
 * depth and batch length are refused before any work, a reply has a byte
 * budget, a long batch yields to other connections, and the opt-out list is
 * bounded. Over a real socket: these are transport-facing limits.
 */
import { describe, expect, it } from "vitest";
import { openRaw, useRawServer } from "../harness/raw-socket.js";

// Frames up to 16 MiB, so the depth scan (not the frame size) is what refuses the 10 MB frame below.
const fixture = useRawServer({ limits: { maxBatch: 50, maxDepth: 32, maxReplyBytes: 64 * 1024, maxPayloadBytes: 16 << 20 } });
const roundTrip = (frame: string) => fixture.roundTrip(frame, 10_000);

const req = (id: unknown, method: string, params: unknown = {}) => ({ jsonrpc: "2.0", id, method, params });

describe("nesting depth", () => {
  it("refuses 5 million nested arrays at once with -32600 naming maxDepth, and keeps serving", async () => {
    const deep = "[".repeat(5_000_000) + "]".repeat(5_000_000);
    const t0 = performance.now();
    const reply = await roundTrip(deep);
    const ms = performance.now() - t0;
    expect(reply).toMatchObject({ id: null, error: { code: -32600, data: { limit: "maxDepth", max: 32 } } });
    expect(reply.error.message).toContain("maxDepth");
    // The scan stops at the first level too deep: nowhere near the 2.1 s a full parse took.
    expect(ms).toBeLessThan(1000);
    expect((await roundTrip(JSON.stringify(req(1, "server.status")))).id).toBe(1);
  });

  it("refuses deeply nested params of a real method the same way (edited tool arguments included)", async () => {
    let args = "1";
    for (let i = 0; i < 10_000; i++) args = `[${args}]`;
    const frame = `{"jsonrpc":"2.0","id":2,"method":"tool.confirm","params":{"conversationId":"c_x","toolCallId":"t","action":"edit","arguments":{"command":"echo","x":${args}}}}`;
    const reply = await roundTrip(frame);
    expect(reply.error).toMatchObject({ code: -32600, data: { limit: "maxDepth" } });
  });

  it("counts brackets inside strings as text, not nesting", async () => {
    const reply = await roundTrip(JSON.stringify(req(3, "conversation.create", { title: "[".repeat(400) })));
    expect(reply.result.title).toBe("[".repeat(400));
  });
});

describe("batch length", () => {
  it("refuses a batch over maxBatch as a whole with one -32600 object", async () => {
    const batch = Array.from({ length: 51 }, (_, i) => req(i, "tools.list"));
    const reply = await roundTrip(JSON.stringify(batch));
    expect(Array.isArray(reply)).toBe(false);
    expect(reply).toMatchObject({ id: null, error: { code: -32600, data: { limit: "maxBatch", max: 50 } } });
    expect(reply.error.message).toContain("more than 50");
  });

  it("answers a batch at the limit in full", async () => {
    const batch = Array.from({ length: 50 }, (_, i) => req(i, "server.status"));
    const reply = await roundTrip(JSON.stringify(batch));
    expect(reply).toHaveLength(50);
    expect(reply.every((r: any) => r.result)).toBe(true);
  });
});

describe("reply size", () => {
  it("answers members past the reply budget with LIMIT_EXCEEDED in their place, in order", async () => {
    for (let i = 0; i < 40; i++) await roundTrip(JSON.stringify(req(`c${i}`, "conversation.create", { title: "x".repeat(400) })));
    // 50 pages of 40 conversations (~20 KB each) would be ~1 MB: over the 64 KiB budget.
    const batch = Array.from({ length: 50 }, (_, i) => req(i, "conversation.list", { limit: 40 }));
    const reply = await roundTrip(JSON.stringify(batch));
    expect(reply).toHaveLength(50);
    expect(reply.map((r: any) => r.id)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    const answered = reply.filter((r: any) => r.result);
    const refused = reply.filter((r: any) => r.error);
    expect(answered.length).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) expect(r.error).toMatchObject({ code: -32050, data: { limit: "maxReplyBytes", max: 65536 } });
    // Once the budget is spent, every later member is refused: the answered ones come first.
    expect(reply.findIndex((r: any) => r.error)).toBe(answered.length);
    expect(JSON.stringify(reply).length).toBeLessThan(64 * 1024 + 50 * 400);
  });

  it("refuses a single answer over the budget with LIMIT_EXCEEDED", async () => {
    for (let i = 0; i < 120; i++) await roundTrip(JSON.stringify(req(`d${i}`, "conversation.create", { title: "x".repeat(400) })));
    const reply = await roundTrip(JSON.stringify(req("big", "conversation.list", { limit: 500 })));
    expect(reply.error).toMatchObject({ code: -32050, data: { limit: "maxReplyBytes" } });
    expect(reply.error.data.actual).toBeGreaterThan(64 * 1024);
  });
});

describe("initialize options", () => {
  it("refuses a notificationOptOut list over 64 entries with -32602 naming the field", async () => {
    const fresh = await openRaw(fixture.server.url);
    fresh.send(
      JSON.stringify(
        req(1, "initialize", { protocolVersion: "1.0", capabilities: { notificationOptOut: Array.from({ length: 65 }, (_, i) => `m${i}`) } }),
      ),
    );
    const reply: any = await fresh.next();
    expect(reply.error.code).toBe(-32602);
    expect(reply.error.data.issues[0].path).toBe("capabilities.notificationOptOut");
    fresh.close();
  });

  it("announces the limits a client should stay within", async () => {
    const fresh = await openRaw(fixture.server.url);
    fresh.send(JSON.stringify(req(1, "initialize", { protocolVersion: "1.0" })));
    const reply: any = await fresh.next();
    expect(reply.result.capabilities.limits).toMatchObject({ maxBatch: 50, maxDepth: 32, maxReplyBytes: 65536 });
    fresh.close();
  });
});
