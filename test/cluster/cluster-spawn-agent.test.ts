/**
 * spawn_agent through cluster forwarding: two in-process servers on one
 * PostgreSQL database and one Redis. The parent is owned by A; a client on B
 * steps it and confirms its calls (forwarded to A). The child is created and
 * owned by A, where the parent's generation waits for it; the client on B
 * follows it from the bus, confirms its tool call (forwarded to A) and finds
 * it with conversation.list { parentConversationId } (read from the shared
 * database on B).
 *
 * Needs Redis and PostgreSQL; skipped, saying how to run them, without them.
 */
import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { OpenAIProvider } from "../../src/llm/openai-provider.js";
import { PostgresConversationStore } from "../../src/store/postgres-store.js";
import { startFakeOpenAI } from "../fake-openai/server.js";
import { EventRecorder } from "../harness/event-recorder.js";
import { postgresReachable, usePostgresDatabase } from "../harness/postgres-db.js";
import { REDIS_URL, redisAvailable } from "../harness/redis-test.js";
import { startTestServer, type TestServer } from "../harness/test-server.js";

const servicesUp = redisAvailable && (await postgresReachable("cluster-spawn-agent.test.ts"));
const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

describe.skipIf(!servicesUp)("spawn_agent in a cluster", { timeout: 30_000 }, () => {
  const db = usePostgresDatabase("subagents");

  it("the child runs on the parent's owner; a client on another instance follows it, confirms its call and lists it", async () => {
    const fake = await startFakeOpenAI({ apiKey: "test-key" });
    cleanups.push(() => fake.close());
    const keyPrefix = `agentwire-test:${randomBytes(6).toString("hex")}:`;
    const servers: TestServer[] = [];
    for (let i = 0; i < 2; i++) {
      const server = await startTestServer(
        { model: "fake-model", server: { redis: REDIS_URL, ownerLeaseMs: 1500 } },
        {
          store: new PostgresConversationStore(db.url),
          provider: async () => new OpenAIProvider({ apiKey: "test-key", baseURL: fake.url, retryBaseDelayMs: 10, retryMaxDelayMs: 20 }),
          cluster: { keyPrefix, forwardTimeoutMs: 3000 },
        },
      );
      cleanups.push(() => server.close());
      servers.push(server);
    }
    const [A, B] = servers as [TestServer, TestServer];
    const a = await A.connectInMemory();
    const b = await B.connectInMemory();
    cleanups.push(() => a.close(), () => b.close());

    const { id: parentId } = await a.conversation.create({ title: "parent" });
    const onB = new EventRecorder(b, parentId);
    await b.conversation.subscribe({ conversationId: parentId });
    fake.enqueue(
      { kind: "reply", toolCalls: [{ id: "call_spawn", name: "spawn_agent", args: JSON.stringify({ prompt: "Say hi with the shell." }) }] },
      { kind: "reply", toolCalls: [{ id: "call_hi", name: "shell", args: JSON.stringify({ command: "echo hi" }) }] },
      { kind: "reply", text: ["I said hi."] },
      { kind: "reply", text: ["The sub-agent said hi."] },
    );
    await b.message.append({ conversationId: parentId, role: "user", content: "delegate it" });
    const { generationId } = await b.step({ conversationId: parentId });
    await onB.waitFor((e) => e.method === "tool_pending");
    await b.tool.confirm({ conversationId: parentId, toolCallId: "call_spawn", action: "confirm" });
    const childId: string = (await onB.waitForMethod("subagent_started")).params.childConversationId;

    const childOnB = new EventRecorder(b, childId);
    const snapshot = await b.conversation.subscribe({ conversationId: childId });
    if (snapshot.state.pendingTools.length === 0) await childOnB.waitForMethod("tool_pending");
    expect((await b.tool.confirm({ conversationId: childId, toolCallId: "call_hi", action: "confirm" })).status).toBe("executing");
    await onB.waitForEnd(generationId);

    expect(onB.of("tool_completed")[0]!.record).toMatchObject({ toolName: "spawn_agent", result: "I said hi.", childConversationId: childId });
    expect(childOnB.of("tool_completed")[0]!.record).toMatchObject({ toolName: "shell", result: expect.stringContaining("hi") });
    // A owns both: the child was created where the parent's generation runs.
    const owned = (await a.server.status()).cluster?.owned ?? [];
    expect(owned).toEqual(expect.arrayContaining([parentId, childId]));
    expect((await b.server.status()).cluster?.ownedCount).toBe(0);
    // Listed from B, out of the shared database.
    const listed = await b.conversation.list({ parentConversationId: parentId });
    expect(listed.data.map((c) => [c.id, c.parentConversationId, c.parentToolCallId])).toEqual([[childId, parentId, "call_spawn"]]);
  });
});
