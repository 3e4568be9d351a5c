/**
 * Usage, context and cost (issue 22): every model call's usage carries the
 * cached and reasoning tokens the endpoint reports, on both wires;
 * usage_updated follows each call with the generation's and the
 * conversation's totals, the context occupancy against the model's declared
 * window and the cost from its declared pricing (null without one, never
 * guessed); context_nearly_full is sent once when a call crosses 80 %; the
 * conversation's totals are stored (conversation.get, conversation.list
 * items) and survive a restart; server.status and /metrics add them up.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newConversation, startAgentFixture, type AgentFixture } from "../harness/agent-fixture.js";
import type { WireName } from "../../src/llm/create-provider.js";

const PRICING = { inputPerMillion: 2, cachedInputPerMillion: 0.5, outputPerMillion: 8, currency: "USD" };
/** Declared under the default provider: the fixture's endpoint override still serves it. */
const providers = {
  default: { baseUrl: "http://127.0.0.1:1/v1", models: { "fake-model": { contextWindow: 1600, pricing: PRICING } } },
};

const FIRST = { prompt_tokens: 1000, completion_tokens: 200, total_tokens: 1200, cached_tokens: 400, reasoning_tokens: 50 };
const SECOND = { prompt_tokens: 1300, completion_tokens: 100, total_tokens: 1400, cached_tokens: 1000, reasoning_tokens: 0 };
// (600 uncached × 2 + 400 cached × 0.5 + 200 out × 8) / 1e6, and (300 × 2 + 1000 × 0.5 + 100 × 8) / 1e6.
const FIRST_COST = 0.003;
const SECOND_COST = 0.0019;

for (const wire of ["chat", "responses", "anthropic"] as WireName[]) {
  describe(`on the ${wire} wire`, () => {
    let dataDir: string;
    let fx: AgentFixture;
    beforeAll(async () => {
      dataDir = await mkdtemp(join(tmpdir(), "agentwire-usage-"));
      fx = await startAgentFixture({ wire, config: { providers, server: { dataDir } } });
    });
    afterAll(async () => {
      await fx?.close();
      await rm(dataDir, { recursive: true, force: true });
    });

    it("reports each call's tokens, the running totals, the context and the cost; the totals survive a restart", async () => {
      fx.fake.enqueue(
        { kind: "reply", text: ["Running it."], toolCalls: [{ id: "call_1", name: "shell", args: '{"command":"true"}' }], usage: FIRST },
        { kind: "reply", text: ["Done."], usage: SECOND },
      );
      // Automatic compaction off: the third call below starts over 85 % of the window, and this test counts model calls.
      const { id, events } = await newConversation(fx.client, { settings: { autoCompact: null } });
      const { generationId } = await fx.client.step({ conversationId: id, autoConfirm: true });
      expect((await events.waitForEnd(generationId)).method).toBe("generation_complete");

      const updates = events.of("usage_updated");
      expect(updates).toHaveLength(2);
      expect(updates[0]).toMatchObject({
        generationId,
        model: "fake-model",
        last: { promptTokens: 1000, cachedPromptTokens: 400, completionTokens: 200, reasoningTokens: 50, totalTokens: 1200 },
        context: { usedTokens: 1200, windowTokens: 1600 },
        cost: { amount: FIRST_COST, currency: "USD" },
        generation: { modelCalls: 1, promptTokens: 1000, cachedPromptTokens: 400, cost: { amount: FIRST_COST, currency: "USD" }, unpricedModelCalls: 0 },
      });
      const totals = {
        modelCalls: 2,
        promptTokens: 2300,
        cachedPromptTokens: 1400,
        completionTokens: 300,
        reasoningTokens: 50,
        totalTokens: 2600,
        cost: { amount: 0.0049, currency: "USD" },
        unpricedModelCalls: 0,
      };
      expect(updates[1]).toMatchObject({ context: { usedTokens: 1400, windowTokens: 1600 }, cost: { amount: SECOND_COST }, generation: totals });
      expect(updates[1]!.conversation).toEqual({ ...totals, contextTokens: 1400 });
      // Each model call's generation_complete carries the same detailed usage.
      expect(events.of("generation_complete").map((e) => e.usage)).toEqual([updates[0]!.last, updates[1]!.last]);
      // usage_updated comes after the call's message is stored and before its generation_complete.
      const flow = events.flow();
      expect(flow.slice(flow.lastIndexOf("message_added"))).toEqual(["message_added", "usage_updated", "notice", "generation_complete"]);

      // 1200 of 1600 is 75 %; 1400 crosses 80 %: one notice, and it ended nothing.
      expect(events.of("notice")).toEqual([
        expect.objectContaining({
          conversationId: id,
          generationId,
          level: "warning",
          code: "context_nearly_full",
          data: { usedTokens: 1400, windowTokens: 1600, ratio: 0.875, model: "fake-model" },
        }),
      ]);
      // Another call still over 80 % does not tell it again.
      fx.fake.enqueue({ kind: "reply", text: ["Still full."], usage: SECOND });
      await fx.client.message.append({ conversationId: id, role: "user", content: "again" });
      const again = await fx.client.step({ conversationId: id });
      await events.waitForEnd(again.generationId);
      expect(events.of("notice")).toHaveLength(1);
      const stored = { ...totals, modelCalls: 3, promptTokens: 3600, cachedPromptTokens: 2400, completionTokens: 400, totalTokens: 4000, contextTokens: 1400 };
      stored.cost = { amount: 0.0068, currency: "USD" };
      expect((await fx.client.conversation.get({ conversationId: id })).conversation.usage).toEqual(stored);
      expect((await fx.client.conversation.list({})).data.find((c) => c.id === id)?.usage).toEqual(stored);

      const status = await fx.client.server.status();
      expect(status.totals).toMatchObject({ cachedPromptTokens: 2400, reasoningTokens: 50, cost: [{ amount: 0.0068, currency: "USD" }], unpricedModelCalls: 0 });
      const metrics = await (await fetch(`${fx.server.url.replace("ws:", "http:")}/metrics`)).text();
      expect(metrics).toContain('agentwire_model_tokens_total{kind="cached_prompt"} 2400');
      expect(metrics).toContain('agentwire_model_tokens_total{kind="reasoning"} 50');
      expect(metrics).toContain(`agentwire_model_cost_total{currency="USD"} ${0.0068}`);

      // A restart on the same data dir: the totals come back with the conversation.
      await fx.close();
      fx = await startAgentFixture({ wire, config: { providers, server: { dataDir } } });
      expect((await fx.client.conversation.get({ conversationId: id })).conversation.usage).toEqual(stored);
      expect((await fx.client.conversation.list({})).data.find((c) => c.id === id)?.usage).toEqual(stored);
      // …and the next call adds to them.
      fx.fake.enqueue({ kind: "reply", text: ["After."], usage: FIRST });
      const recorder = await newConversationAfterRestart(fx, id);
      expect(recorder.conversation).toMatchObject({ modelCalls: 4, promptTokens: 4600, contextTokens: 1200 });
    });

    it("without a declared pricing the cost is null (never guessed), and without a window so is windowTokens", async () => {
      fx.fake.enqueue({ kind: "reply", text: ["Cheap?"], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } });
      const { id, events } = await newConversation(fx.client, { model: "undeclared-model" });
      const { generationId } = await fx.client.step({ conversationId: id });
      await events.waitForEnd(generationId);
      const [update] = events.of("usage_updated");
      expect(update).toMatchObject({
        model: "undeclared-model",
        cost: null,
        context: { usedTokens: 15, windowTokens: null },
        generation: { cost: null, unpricedModelCalls: 1 },
        conversation: { cost: null, unpricedModelCalls: 1, modelCalls: 1 },
      });
      // Chat sends no details when the endpoint gives none: null, not 0. The Responses API always sends them;
      // Anthropic always sends its cache counts (reads and writes) and no thinking count unless it thought.
      expect(update!.last).toEqual({
        promptTokens: 10,
        cachedPromptTokens: wire === "chat" ? null : 0,
        ...(wire === "anthropic" ? { cacheWritePromptTokens: 0 } : {}),
        completionTokens: 5,
        reasoningTokens: wire === "responses" ? 0 : null,
        totalTokens: 15,
      });
      expect(events.of("notice")).toEqual([]);
      expect((await fx.client.conversation.get({ conversationId: id })).conversation.usage).toMatchObject({ cost: null, unpricedModelCalls: 1 });
    });
  });
}

/** Append, step and wait on a conversation after a restart; the last usage_updated's conversation totals. */
async function newConversationAfterRestart(fx: AgentFixture, id: string) {
  const { EventRecorder } = await import("../harness/event-recorder.js");
  const events = new EventRecorder(fx.client, id);
  await fx.client.conversation.subscribe({ conversationId: id });
  await fx.client.message.append({ conversationId: id, role: "user", content: "after the restart" });
  const { generationId } = await fx.client.step({ conversationId: id });
  await events.waitForEnd(generationId);
  return events.of("usage_updated").at(-1)!;
}
