/**
 * server.status: the instance id (stable per data dir, across restarts), the
 * load now (active conversations, pending tool calls) and the totals since
 * start, by outcome.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import { newConversation, startAgentFixture } from "../harness/agent-fixture.js";
import { startTestServer } from "../harness/test-server.js";

it("instanceId is generated once per data dir, kept in instance.json, the same after a restart, and differs for another data dir", async () => {
  const first = await startTestServer();
  let second: Awaited<ReturnType<typeof startTestServer>> | undefined;
  const other = await startTestServer();
  try {
    const id = (await (await first.connectInMemory()).server.status()).instanceId;
    expect(id).toMatch(/^i_[0-9a-f-]{36}$/);
    expect(JSON.parse(await readFile(join(first.dataDir, "instance.json"), "utf8")).instanceId).toBe(id);
    await first.stop();
    second = await startTestServer({ server: { dataDir: first.dataDir } });
    expect((await (await second.connectInMemory()).server.status()).instanceId).toBe(id);
    expect((await (await other.connectInMemory()).server.status()).instanceId).not.toBe(id);
  } finally {
    await second?.stop();
    await first.close();
    await other.close();
  }
});

it("counts active conversations and pending tool calls now, and generations and tool calls by outcome since start", async () => {
  const fx = await startAgentFixture({ provider: { maxRetries: 0 } });
  try {
    const status0 = await fx.client.server.status();
    expect(status0.totals).toEqual({
      generations: { completed: 0, interrupted: 0, error: 0 },
      toolCalls: { completed: 0, failed: 0, skipped: 0 },
      modelCalls: 0,
      promptTokens: 0,
      completionTokens: 0,
      cachedPromptTokens: 0,
      reasoningTokens: 0,
      cost: [],
      unpricedModelCalls: 0,
      framesSent: expect.any(Number),
      slowConsumersDropped: 0,
    });
    fx.fake.enqueue(
      { kind: "reply", toolCalls: [{ id: "call_a", name: "shell", args: '{"command":"echo a"}' }, { id: "call_b", name: "shell", args: '{"command":"echo b"}' }] },
      { kind: "error", status: 400, message: "refused" },
    );
    const { id, events } = await newConversation(fx.client);
    const { generationId } = await fx.client.step({ conversationId: id });
    await events.waitForCount("tool_pending", 2);
    const busy = await fx.client.server.status();
    expect(busy).toMatchObject({ generations: 1, conversationsActive: 1, pendingToolCalls: 2 });

    await fx.client.tool.confirm({ conversationId: id, toolCallId: "call_a", action: "confirm" });
    await fx.client.tool.confirm({ conversationId: id, toolCallId: "call_b", action: "skip" });
    await fx.client.generation.wait({ conversationId: id, generationId, timeoutMs: 5000 });

    fx.fake.enqueue({ kind: "reply", text: ["x"], hangAfter: 1 });
    const second = await fx.client.step({ conversationId: id });
    await events.waitFor((e) => e.method === "generation_progress" && e.params.generationId === second.generationId);
    await fx.client.interrupt({ conversationId: id });

    const status = await fx.client.server.status();
    expect(status).toMatchObject({ generations: 0, conversationsActive: 0, pendingToolCalls: 0 });
    expect(status.totals).toMatchObject({
      generations: { completed: 0, interrupted: 1, error: 1 },
      toolCalls: { completed: 1, failed: 0, skipped: 1 },
      modelCalls: 1,
      slowConsumersDropped: 0,
    });
    expect(status.totals.framesSent).toBeGreaterThan(status0.totals.framesSent + 10);
  } finally {
    await fx.close();
  }
});
