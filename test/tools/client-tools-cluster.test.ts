/**
 * Client tools through cluster forwarding: the registering connection is on
 * instance B, the conversation is owned by A. The forwarded tools.register
 * carries its caller, A's client_tool_call reaches the connection on B,
 * tool.result from it (forwarded) answers; when it closes, A hears of it and
 * the call fails after the grace period.
 *
 * Needs Redis (test/harness/redis-test.ts); skipped where none answers.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { AgentwireClient, NotificationParams } from "../../clients/typescript/index.js";
import { MemoryConversationStore } from "../../src/store/memory-store.js";
import { EventRecorder } from "../harness/event-recorder.js";
import { useClusterServers } from "../harness/cluster-servers.js";
import { redisAvailable } from "../harness/redis-test.js";
import type { TestServer } from "../harness/test-server.js";

const PICK = {
  name: "pick_color",
  description: "Ask the user's editor for a colour.",
  parameters: { type: "object", properties: { hint: { type: "string" } }, required: ["hint"] },
};

const cluster = useClusterServers();

describe.skipIf(!redisAvailable)("client tools across instances", { timeout: 20_000 }, () => {
  const keyPrefix = `agentwire-test:${randomBytes(6).toString("hex")}:`;
  const store = new MemoryConversationStore();

  function instance(): Promise<TestServer> {
    return cluster.start(store, keyPrefix, { clientToolGraceMs: 300 });
  }

  /** A owns the conversation; `provider` on B registers the tool; the model calls it and a's client confirms it. */
  async function callFromB(a: AgentwireClient, provider: AgentwireClient) {
    const { id } = await a.conversation.create({});
    const events = new EventRecorder(a, id);
    await a.conversation.subscribe({ conversationId: id });
    await a.message.append({ conversationId: id, role: "user", content: "pick" });
    expect(await provider.tools.register({ conversationId: id, tools: [PICK] })).toEqual({ tools: ["pick_color"] });
    const received = new Promise<NotificationParams<"client_tool_call">>((resolve) => provider.on("client_tool_call", resolve));
    cluster.fake.enqueue({ kind: "reply", toolCalls: [{ id: "call_pick", name: "pick_color", args: '{"hint":"warm"}' }] }, { kind: "reply", text: ["Picked."] });
    const { generationId } = await a.step({ conversationId: id });
    await events.waitForMethod("tool_pending");
    await a.tool.confirm({ conversationId: id, toolCallId: "call_pick", action: "confirm" });
    return { id, events, generationId, call: await received };
  }

  it("sends the call to the registering connection on another instance and takes its answer from there", async () => {
    const A = await instance();
    const B = await instance();
    const a = await A.connectInMemory();
    const b = await B.connectInMemory({ clientInfo: { name: "editor" } });
    const { id, events, generationId, call } = await callFromB(a, b);
    expect(call).toMatchObject({ conversationId: id, toolCallId: "call_pick", name: "pick_color", arguments: { hint: "warm" } });
    // B never took the conversation: the registration lives on its owner.
    expect(B.server.app.hub.loaded(id)).toBeUndefined();
    expect(await b.tool.result({ conversationId: id, toolCallId: "call_pick", output: "crimson" })).toEqual({ status: "completed" });
    await events.waitForEnd(generationId);
    expect(events.of("tool_completed")[0]!.record.result).toBe("crimson");
  });

  it("fails the call after the grace period when the registering connection on the other instance closes", async () => {
    const A = await instance();
    const B = await instance();
    const a = await A.connectInMemory();
    const b = await B.connectInMemory({ clientInfo: { name: "editor" } });
    const { events, generationId } = await callFromB(a, b);
    await b.close();
    const failed = (await events.waitForMethod("tool_failed")).params as NotificationParams<"tool_failed">;
    expect(failed.record.result).toContain('the client that provided tool "pick_color" disconnected');
    await events.waitForEnd(generationId);
  });
});
