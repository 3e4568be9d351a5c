/**
 * ask_user through cluster forwarding: a question asked by a generation on
 * the owner A reaches a client on B, whose input.respond runs on A (its
 * scope is conversation); every client sees input_resolved, and the second
 * answer, from A's side, is refused.
 */
import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { ErrorCodes } from "../../protocol/index.js";
import { OpenAIProvider } from "../../src/llm/openai-provider.js";
import { MemoryConversationStore } from "../../src/store/memory-store.js";
import { createAskUserTool } from "../../src/tools/ask-user.js";
import { createBuiltinRegistry } from "../../src/tools/builtin-registry.js";
import { startFakeOpenAI } from "../fake-openai/server.js";
import { EventRecorder } from "../harness/event-recorder.js";
import { REDIS_URL, redisAvailable } from "../harness/redis-test.js";
import { startTestServer, type TestServer } from "../harness/test-server.js";

const closers: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => {});
});

describe.skipIf(!redisAvailable)("ask_user in a cluster", { timeout: 20_000 }, () => {
  it("a client on another instance answers; both see input_resolved; the second answer is refused", async () => {
    const fake = await startFakeOpenAI({ apiKey: "test-key" });
    closers.push(() => fake.close());
    const store = new MemoryConversationStore();
    const keyPrefix = `agentwire-test:${randomBytes(6).toString("hex")}:`;
    const servers: TestServer[] = [];
    for (let i = 0; i < 2; i++) {
      const server = await startTestServer(
        { model: "fake-model", server: { redis: REDIS_URL } },
        {
          store,
          tools: createBuiltinRegistry([createAskUserTool()]),
          provider: async () => new OpenAIProvider({ apiKey: "test-key", baseURL: fake.url, retryBaseDelayMs: 10, retryMaxDelayMs: 20 }),
          cluster: { keyPrefix, forwardTimeoutMs: 3000 },
        },
      );
      closers.push(() => server.close());
      servers.push(server);
    }
    const a = await servers[0]!.connectInMemory();
    const b = await servers[1]!.connectInMemory();
    const { id } = await a.conversation.create({});
    const onA = new EventRecorder(a, id);
    const onB = new EventRecorder(b, id);
    await a.conversation.subscribe({ conversationId: id });
    await b.conversation.subscribe({ conversationId: id });
    fake.enqueue(
      { kind: "reply", toolCalls: [{ id: "call_ask", name: "ask_user", args: JSON.stringify({ question: "Which one?", choices: ["left", "right"] }) }] },
      { kind: "reply", text: ["Going right."] },
    );
    await a.message.append({ conversationId: id, role: "user", content: "pick" });
    const { generationId } = await a.step({ conversationId: id });
    const asked = (await onB.waitForMethod("input_requested")).params;
    expect((await b.conversation.get({ conversationId: id })).state.pendingInputs).toHaveLength(1);

    expect(await b.input.respond({ conversationId: id, requestId: asked.requestId, answer: "right" })).toEqual({ outcome: "answered" });
    const late = await a.input.respond({ conversationId: id, requestId: asked.requestId, answer: "left" }).catch((e) => e);
    expect(late.code).toBe(ErrorCodes.INPUT_NOT_PENDING);
    await onA.waitForEnd(generationId);
    await onB.waitForEnd(generationId);
    for (const seen of [onA, onB]) expect(seen.of("input_resolved")).toEqual([expect.objectContaining({ requestId: asked.requestId, outcome: "answered" })]);
    expect(onA.of("tool_completed")[0]!.record.result).toBe("right");
  });
});
