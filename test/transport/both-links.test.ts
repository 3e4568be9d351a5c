/**
 * The behaviour smoke set, run over both links a client can have: the
 * in-memory link (src/transport/in-memory-link.ts, what the behaviour tests
 * and embedders use) and a real WebSocket on 127.0.0.1, the latter also to a
 * server whose sockets live in their own thread (server.socketThread). The behaviour tests
 * trust the in-memory link to stand for the socket; this file holds that
 * trust to account with the same assertions on both: conversations, a step
 * with the fake model, a confirmed tool call, resuming a subscription with
 * afterSeq, errors, and raw JSON-RPC frames.
 */
import { describe, expect, it } from "vitest";
import { newConversation, TOOL_ROUND_FLOW, useAgentFixture, type ClientTransport } from "../harness/agent-fixture.js";
import { EventRecorder } from "../harness/event-recorder.js";
import { initialize, openRaw, type RawSocket } from "../harness/raw-socket.js";
import { expectInvalidParams, rpcError } from "../harness/rpc-errors.js";

describe.each(["memory", "websocket", "socket-thread"] as const satisfies readonly ClientTransport[])("over the %s link", (transport) => {
  const fx = useAgentFixture({ transport });

  /** A raw client (frames as text) over this link, initialized. */
  async function rawClient(): Promise<RawSocket<unknown>> {
    const raw: RawSocket<unknown> = transport === "memory" ? await fx.server.openRawInMemory() : await openRaw(fx.server.url);
    return initialize(raw);
  }

  it("creates, appends to, gets and lists a conversation", async () => {
    const created = await fx.client.conversation.create({ title: "over both links" });
    const record = await fx.client.message.append({ conversationId: created.id, role: "user", content: "hello ✓" });
    expect(record).toMatchObject({ type: "message", role: "user", content: "hello ✓" });
    const got = await fx.client.conversation.get({ conversationId: created.id, includeRecords: true });
    expect(got.conversation).toMatchObject({ id: created.id, title: "over both links" });
    expect(got.records).toEqual([record]);
    const listed = await fx.client.conversation.list({});
    expect(listed.data.map((c) => c.id)).toContain(created.id);
  });

  it("streams a step's answer from the fake model and stores it", async () => {
    fx.fake.enqueue({ kind: "reply", text: ["Hel", "lo", " there"] });
    const { id, events } = await newConversation(fx.client);
    const { generationId } = await fx.client.step({ conversationId: id });
    expect((await events.waitForEnd(generationId)).params).toMatchObject({ final: true, finishReason: "stop" });
    expect(events.flow()).toEqual(["message_added", "generation_started", "generation_progress", "message_added", "usage_updated", "generation_complete"]);
    expect(events.of("generation_progress").map((p) => p.delta).join("")).toBe("Hello there");
    const { records } = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
    expect(records!.at(-1)).toMatchObject({ type: "message", role: "assistant", content: "Hello there", generationId });
  });

  it("holds a tool call until the client confirms it, runs it, and shows the model its result", async () => {
    fx.fake.enqueue(
      { kind: "reply", toolCalls: [{ id: "call_1", name: "shell", args: JSON.stringify({ command: "echo from-the-tool" }) }] },
      { kind: "reply", text: ["Done."] },
    );
    const { id, events } = await newConversation(fx.client);
    const { generationId } = await fx.client.step({ conversationId: id });
    expect((await events.waitForMethod("tool_pending")).params).toMatchObject({ toolCallId: "call_1", toolName: "shell" });
    expect(await fx.client.tool.confirm({ conversationId: id, toolCallId: "call_1", action: "confirm" })).toMatchObject({ status: "executing" });
    await events.waitForEnd(generationId);
    const afterPending = events.flow().slice(events.flow().indexOf("tool_pending"));
    expect(afterPending).toEqual([...TOOL_ROUND_FLOW]);
    expect(events.of("tool_completed")[0]).toMatchObject({ record: { toolCallId: "call_1", status: "completed", exitCode: 0 } });
    // The second model call carried the tool's output.
    expect(fx.fake.messagesOf(1).at(-1)).toMatchObject({ role: "tool", content: expect.stringContaining("from-the-tool") });
  });

  it("replays what a client missed when it subscribes again with afterSeq, in order, then goes on live", async () => {
    const { id } = await fx.client.conversation.create({});
    const first = await fx.connect();
    const firstEvents = new EventRecorder(first, id);
    await first.conversation.subscribe({ conversationId: id });
    await fx.client.message.append({ conversationId: id, role: "user", content: "seen" });
    await firstEvents.waitForCount("message_added", 1);
    const lastSeen = firstEvents.events.at(-1)!.params.seq as number;
    await first.close();

    const missed = [];
    for (const content of ["missed 1", "missed 2"]) missed.push(await fx.client.message.append({ conversationId: id, role: "user", content }));
    await fx.client.conversation.update({ conversationId: id, title: "renamed while away" });

    const again = await fx.connect();
    const events = new EventRecorder(again, id);
    const subscribed = await again.conversation.subscribe({ conversationId: id, afterSeq: lastSeen });
    expect(subscribed).toMatchObject({ replayed: 3, resync: false });
    // Replayed events arrive before the subscribe answer.
    expect(events.methods()).toEqual(["message_added", "message_added", "conversation_updated"]);
    expect(events.events.map((e) => e.params.seq)).toEqual([lastSeen + 1, lastSeen + 2, lastSeen + 3]);
    expect(events.of("message_added").map((p) => p.record)).toEqual(missed);

    await fx.client.message.append({ conversationId: id, role: "user", content: "live again" });
    await events.waitForCount("message_added", 3);
    expect(events.events.at(-1)!.params).toMatchObject({ seq: lastSeen + 4, record: { content: "live again" } });
    await again.close();
  });

  it("answers bad params and unknown conversations with the same errors", async () => {
    await expectInvalidParams(fx.client.message.append({ conversationId: "c_nope", role: "wizard" as never, content: "x" }), "role");
    const missing = await rpcError(fx.client.conversation.get({ conversationId: "c_doesnotexist" }));
    expect(missing.code).toBe(-32010);
    expect(missing.message).toContain("c_doesnotexist");
  });

  it("speaks JSON-RPC 2.0 frame by frame: a batch, a notification in it, a parse error", async () => {
    const raw = await rawClient();
    try {
      raw.clear();
      raw.send(
        JSON.stringify([
          { jsonrpc: "2.0", id: 1, method: "server.status" },
          { jsonrpc: "2.0", method: "server.status" },
          { jsonrpc: "2.0", id: 2, method: "no.such.method" },
        ]),
      );
      const batch = (await raw.next()) as { id: number; result?: unknown; error?: { code: number } }[];
      expect(batch.map((r) => r.id).sort()).toEqual([1, 2]);
      expect(batch.find((r) => r.id === 1)!.result).toMatchObject({ instanceId: expect.any(String) });
      expect(batch.find((r) => r.id === 2)!.error).toMatchObject({ code: -32601 });
      raw.send("{ not json");
      expect(await raw.next()).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } });
    } finally {
      raw.close();
    }
  });
});
