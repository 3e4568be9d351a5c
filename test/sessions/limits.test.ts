/**
 * Every resource a client can make the server hold has a bound that answers
 * with a clear error (LIMIT_EXCEEDED naming the limit), never with the death
 * of the process: message size, subscriptions, generations, model context,
 * reply size, loaded conversations, replay log bytes.
 */
import v8 from "node:v8";
import { runInNewContext } from "node:vm";
import { afterEach, describe, expect, it } from "vitest";
import type { Conversation } from "../../protocol/index.js";
import { defaultConfig } from "../../src/config/server-config.js";
import { createLogger } from "../../src/logging/logger.js";
import { ConversationHub } from "../../src/sessions/conversation-hub.js";
import { MemoryConversationStore } from "../../src/store/memory-store.js";
import { newConversation, startAgentFixture, type AgentFixture } from "../harness/agent-fixture.js";
import { eventually } from "../harness/eventually.js";
import { rpcError } from "../harness/rpc-errors.js";
import type { ConfigOverrides } from "../harness/test-config.js";

let fx: AgentFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

async function fixture(config: ConfigOverrides): Promise<AgentFixture> {
  fx = await startAgentFixture({ config, transport: "memory" });
  return fx;
}

async function expectLimit(promise: Promise<unknown>, limit: string, mentions: string): Promise<void> {
  const error = await rpcError(promise);
  expect(error.code, error.message).toBe(-32050);
  expect((error.data as { limit: string }).limit).toBe(limit);
  expect(error.message).toContain(mentions);
}

describe("message size", () => {
  it("refuses content and system prompts over maxMessageBytes, naming the field; nothing is stored", async () => {
    const { client } = await fixture({ limits: { maxMessageBytes: 4096 } });
    const { id } = await newConversation(client);
    await expectLimit(client.message.append({ conversationId: id, role: "user", content: "é".repeat(2100) }), "maxMessageBytes", "content");
    await expectLimit(client.conversation.create({ system: "s".repeat(5000) }), "maxMessageBytes", "system");
    await client.message.append({ conversationId: id, role: "user", content: "é".repeat(2000) }); // 4000 bytes: fits
    expect((await client.conversation.get({ conversationId: id })).conversation.recordCount).toBe(2);
  });
});

describe("subscriptions per connection", () => {
  it("refuses the subscription past maxSubscriptionsPerConnection; resubscribing and unsubscribing work", async () => {
    const { client } = await fixture({ limits: { maxSubscriptionsPerConnection: 3 } });
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await client.conversation.create({})).id);
    for (const id of ids.slice(0, 3)) await client.conversation.subscribe({ conversationId: id });
    await client.conversation.subscribe({ conversationId: ids[0]! });
    await expectLimit(client.conversation.subscribe({ conversationId: ids[3]! }), "maxSubscriptionsPerConnection", "unsubscribe");
    await client.conversation.unsubscribe({ conversationId: ids[0]! });
    await client.conversation.subscribe({ conversationId: ids[3]! });
  });
});

describe("generations", () => {
  it("refuses a step past maxGenerations while others run", async () => {
    const { client, fake } = await fixture({ limits: { maxGenerations: 1 } });
    fake.enqueue({ kind: "hang", when: "before_headers" });
    const a = await newConversation(client);
    const b = await newConversation(client);
    const running = await client.step({ conversationId: a.id });
    await expectLimit(client.step({ conversationId: b.id }), "maxGenerations", "running");
    // The hanging request must have taken its script before the interrupt, or b's step would get it.
    await eventually(() => fake.requests.length === 1, 3000, "the first model request");
    await client.interrupt({ conversationId: a.id });
    await a.events.waitForEnd(running.generationId);
    fake.enqueue({ kind: "reply", text: ["ok"] });
    const next = await client.step({ conversationId: b.id });
    const end = await b.events.waitForEnd(next.generationId);
    expect(end.method, JSON.stringify(end.params)).toBe("generation_complete");
  });
});

describe("model context", () => {
  it("ends a generation whose request would pass maxContextBytes with one error -32050, before calling the model", async () => {
    const { client, fake } = await fixture({ limits: { maxContextBytes: 10_000 } });
    const { id, events } = await newConversation(client, {}, "x".repeat(4000));
    await client.message.append({ conversationId: id, role: "user", content: "y".repeat(4000) });
    await client.message.append({ conversationId: id, role: "user", content: "z".repeat(4000) });
    const { generationId } = await client.step({ conversationId: id });
    const end = await events.waitForEnd(generationId);
    expect(end.method).toBe("error");
    expect(end.params.code).toBe(-32050);
    expect(end.params.message).toContain("maxContextBytes");
    expect(fake.requests).toHaveLength(0);
  });
});

describe("conversation.get records", () => {
  it("pages with recordsFrom/recordsLimit and refuses a page over maxReplyBytes, saying how to page", async () => {
    const { client } = await fixture({ limits: { maxReplyBytes: 20_000 } });
    const { id } = await newConversation(client, {}, "m0");
    for (let i = 1; i < 30; i++) await client.message.append({ conversationId: id, role: "user", content: `m${i} ${"p".repeat(1000)}` });
    const page = await client.conversation.get({ conversationId: id, includeRecords: true, recordsFrom: 10, recordsLimit: 5 });
    expect(page.records!.map((r) => (r as { content: string }).content.split(" ")[0])).toEqual(["m10", "m11", "m12", "m13", "m14"]);
    const tail = await client.conversation.get({ conversationId: id, includeRecords: true, recordsFrom: 28 });
    expect(tail.records).toHaveLength(2);
    await expectLimit(client.conversation.get({ conversationId: id, includeRecords: true }), "maxReplyBytes", "recordsLimit");
  });
});

describe("loaded conversations", () => {
  it("unloads the least recently used past maxLoadedConversations; a subscriber of an unloaded one still gets its events", async () => {
    const { client, server } = await fixture({ limits: { maxLoadedConversations: 5 } });
    const watched = await newConversation(client);
    const others: string[] = [];
    for (let i = 0; i < 8; i++) others.push((await client.conversation.create({})).id);
    await new Promise((r) => setTimeout(r, 1100)); // older than the eviction grace period
    await client.conversation.create({});
    await eventually(async () => (await client.server.status()).conversationsLoaded <= 6, 3000, "loaded conversations back under the limit");
    const writer = await server.connectInMemory();
    const before = watched.events.events.length;
    await writer.message.append({ conversationId: watched.id, role: "user", content: "still heard" });
    await watched.events.waitFor((e) => e.method === "message_added" && e.params.record.content === "still heard", 3000, before);
    const seqs = watched.events.events.map((e) => e.params.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
  });
});

describe("replay log", () => {
  it("keeps at most eventLogBytes per conversation: an old afterSeq gets resync, a recent one its events", async () => {
    const { client, server } = await fixture({ limits: { eventLogBytes: 4096 } });
    const { id } = await newConversation(client, {}, "first");
    for (let i = 0; i < 10; i++) await client.message.append({ conversationId: id, role: "user", content: `${i} ${"b".repeat(1000)}` });
    const late = await server.connectInMemory();
    expect((await late.conversation.subscribe({ conversationId: id, afterSeq: 0 })).resync).toBe(true);
    const recent = await server.connectInMemory();
    const { state } = await recent.conversation.get({ conversationId: id });
    const outcome = await recent.conversation.subscribe({ conversationId: id, afterSeq: state.seq - 2 });
    expect(outcome).toMatchObject({ resync: false, replayed: 2 });
  });

  it("keeps at most replayBudgetBytes across conversations, trimming the least recently used first", async () => {
    const { client, server } = await fixture({ limits: { replayBudgetBytes: 20_000 } });
    const old = await newConversation(client, {}, "a".repeat(6000));
    await new Promise((r) => setTimeout(r, 20));
    const mid = await newConversation(client, {}, "b".repeat(6000));
    await new Promise((r) => setTimeout(r, 20));
    const fresh = await newConversation(client, {}, "c".repeat(6000));
    await client.message.append({ conversationId: fresh.id, role: "user", content: "d".repeat(6000) });
    const probe = await server.connectInMemory();
    expect((await probe.conversation.subscribe({ conversationId: old.id, afterSeq: 0 })).resync).toBe(true);
    expect((await probe.conversation.subscribe({ conversationId: fresh.id, afterSeq: 0 })).resync).toBe(false);
    void mid;
  });
});

describe("memory per idle conversation", () => {
  it("a loaded conversation with nothing to replay costs a few KB, not a preallocated log", async () => {
    v8.setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const store = new MemoryConversationStore();
    const hub = new ConversationHub(store, { ...defaultConfig().limits, maxLoadedConversations: 100_000 }, createLogger("silent"));
    const now = new Date().toISOString();
    const conversation = (i: number): Conversation => ({
      id: `c_${i}`,
      title: "",
      createdAt: now,
      updatedAt: now,
      model: null,
      system: null,
      workspace: null,
      settings: { toolHistoryRounds: 8, maxIterations: 20, toolTimeoutMs: 120_000 },
      recordCount: 0,
    });
    gc();
    const before = process.memoryUsage().heapUsed;
    const count = 3000;
    for (let i = 0; i < count; i++) await hub.create(conversation(i));
    gc();
    const perConversation = (process.memoryUsage().heapUsed - before) / count;
    expect(hub.loadedCount()).toBe(count);
    // Before: about 37.5 KB each, mostly a 4096-slot replay ring allocated up front.
    expect(perConversation).toBeLessThan(8 * 1024);
  });
});
