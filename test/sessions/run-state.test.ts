/**
 * Run state that must outlive memory: the last error and how the last
 * generation ended survive a restart (lowdb store) and an unload; a model or
 * reasoning change made mid-step applies from the next model call; a
 * conversation someone could act on (a generation waiting on a tool call) is
 * never unloaded by the idle sweep or the LRU bound.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { AgentwireClient } from "../../clients/typescript/index.js";
import { OpenAIProvider } from "../../src/llm/openai-provider.js";
import { startFakeOpenAI } from "../fake-openai/server.js";
import { newConversation, startAgentFixture, useAgentFixture } from "../harness/agent-fixture.js";
import { eventually } from "../harness/eventually.js";
import { startTestServer } from "../harness/test-server.js";

const shellCall = (command: string, id = "call_1") => ({ id, name: "shell", args: JSON.stringify({ command }) });

describe("across a restart (lowdb store)", () => {
  it("keeps lastError and lastGeneration, and generation.wait still answers for the last generation", async () => {
    const fake = await startFakeOpenAI({ apiKey: "k" });
    const provider = async () => new OpenAIProvider({ apiKey: "k", baseURL: fake.url, maxRetries: 0 });
    const first = await startTestServer({ model: "fake-model" }, { provider });
    const dataDir = first.dataDir;
    let second: Awaited<ReturnType<typeof startTestServer>> | undefined;
    try {
      let client: AgentwireClient = await first.connectInMemory();
      fake.enqueue({ kind: "reply", text: ["fine"] }, { kind: "error", status: 400, message: "Quota of the day is gone." });
      const failed = await newConversation(client);
      const ok = await newConversation(client);
      const okStep = await client.step({ conversationId: ok.id });
      await ok.events.waitForEnd(okStep.generationId);
      const failedStep = await client.step({ conversationId: failed.id });
      await failed.events.waitForEnd(failedStep.generationId);
      const before = await client.conversation.get({ conversationId: failed.id });
      expect(before.state.lastError).toMatchObject({ code: -32030, status: 400 });
      expect(before.state.lastGeneration).toMatchObject({ generationId: failedStep.generationId, outcome: "error" });
      await first.stop();

      // On disk, with the conversation's metadata.
      const meta = JSON.parse(await readFile(join(dataDir, "conversations", failed.id, "meta.json"), "utf8"));
      expect(meta.runState.lastError).toEqual(before.state.lastError);

      second = await startTestServer({ model: "fake-model", server: { dataDir } }, { provider });
      client = await second.connectInMemory();
      const after = await client.conversation.get({ conversationId: failed.id });
      expect(after.state.lastError).toEqual(before.state.lastError);
      expect(after.state.lastGeneration).toEqual(before.state.lastGeneration);
      const okAfter = await client.conversation.get({ conversationId: ok.id });
      expect(okAfter.state.lastError).toBeNull();
      expect(okAfter.state.lastGeneration).toMatchObject({ generationId: okStep.generationId, outcome: "completed" });

      expect(await client.generation.wait({ conversationId: failed.id })).toMatchObject({
        done: true,
        generationId: failedStep.generationId,
        outcome: "error",
        error: { code: -32030, status: 400 },
      });
      expect(await client.generation.wait({ conversationId: ok.id, generationId: okStep.generationId })).toMatchObject({
        done: true,
        outcome: "completed",
        finalRecord: { role: "assistant", content: "fine" },
      });
    } finally {
      await first.close();
      await second?.close();
      await fake.close();
    }
  });
});

describe("model and reasoning switch mid-step", () => {
  const fx = useAgentFixture();

  it("conversation.update of model and settings.reasoning applies from the next model call of the running step", async () => {
    fx.fake.enqueue({ kind: "reply", toolCalls: [shellCall("echo one")] }, { kind: "reply", text: ["two"] });
    const { id, events } = await newConversation(fx.client, { settings: { reasoning: "low" } });
    const { generationId } = await fx.client.step({ conversationId: id });
    await events.waitForMethod("tool_pending");
    await fx.client.conversation.update({ conversationId: id, model: "switched-model", settings: { reasoning: "high" } });
    const updated = await events.waitForMethod("conversation_updated");
    expect(updated.params.conversation).toMatchObject({ model: "switched-model", settings: { reasoning: "high" } });
    await fx.client.tool.confirm({ conversationId: id, toolCallId: "call_1", action: "confirm" });
    await events.waitForEnd(generationId);

    expect(fx.fake.requests.map((r) => [r.model, r.reasoning_effort])).toEqual([
      ["fake-model", "low"],
      ["switched-model", "high"],
    ]);
    expect(events.of("generation_started").map((e) => e.model)).toEqual(["fake-model", "switched-model"]);
  });

  it("a step that named its own model keeps it whatever the conversation's becomes", async () => {
    fx.fake.enqueue({ kind: "reply", toolCalls: [shellCall("echo one")] }, { kind: "reply", text: ["two"] });
    const { id, events } = await newConversation(fx.client);
    const { generationId } = await fx.client.step({ conversationId: id, model: "step-model" });
    await events.waitForMethod("tool_pending");
    await fx.client.conversation.update({ conversationId: id, model: "switched-model" });
    await fx.client.tool.confirm({ conversationId: id, toolCallId: "call_1", action: "confirm" });
    await events.waitForEnd(generationId);
    expect(fx.fake.requests.map((r) => r.model)).toEqual(["step-model", "step-model"]);
  });
});

describe("memory bounds never unload what someone can act on", () => {
  it("a generation waiting on a tool call survives the idle sweep and the LRU bound; idle ones go, and their state comes back", async () => {
    const fx = await startAgentFixture({ config: { limits: { idleUnloadMs: 0, maxLoadedConversations: 3 } } });
    try {
      const { hub } = fx.server.server.app;
      fx.fake.enqueue(
        { kind: "reply", toolCalls: [shellCall("echo held")] },
        { kind: "reply", toolCalls: [shellCall("echo budget", "call_2")] },
        { kind: "error", status: 400, message: "no" },
      );
      const held = await newConversation(fx.client);
      const { generationId } = await fx.client.step({ conversationId: held.id });
      await held.events.waitForMethod("tool_pending");
      // Nobody watches it any more: only the pending call keeps it.
      await fx.client.conversation.unsubscribe({ conversationId: held.id });
      const failed = await newConversation(fx.client);
      const failedStep = await fx.client.step({ conversationId: failed.id });
      await failed.events.waitForMethod("tool_pending");
      await fx.client.tool.confirm({ conversationId: failed.id, toolCallId: "call_2", action: "auto", count: 5 });
      await failed.events.waitForEnd(failedStep.generationId);
      await fx.client.conversation.unsubscribe({ conversationId: failed.id });
      const heldRuntime = await hub.get(held.id);
      const failedState = (await fx.client.conversation.get({ conversationId: failed.id })).state;
      expect(failedState).toMatchObject({ autoConfirmRemaining: 5, lastError: { status: 400 }, lastGeneration: { outcome: "error" } });

      // Idle sweep, as if far in the future: the failed one goes, the held one stays.
      // Its run state is being written (a generation's end is stored right after it): busy until that is on disk.
      const failedRuntime = await hub.get(failed.id);
      await eventually(() => !failedRuntime.busy, 2000, "the run state to be written");
      expect(await hub.unloadIdle(0, Date.now() + 3_600_000)).toBe(1);
      expect(hub.loadedCount()).toBe(1);
      expect(await hub.get(held.id)).toBe(heldRuntime);

      // LRU: more conversations than the bound, every one long untouched (past the eviction grace).
      heldRuntime.lastUsed = Date.now() - 60_000;
      for (let i = 0; i < 5; i++) {
        const filler = await fx.client.conversation.create({ title: `filler ${i}` });
        (await hub.get(filler.id)).lastUsed = Date.now() - 60_000;
      }
      await new Promise((r) => setTimeout(r, 20));
      expect(hub.loadedCount()).toBeLessThan(6); // fillers were unloaded…
      expect(await hub.get(held.id)).toBe(heldRuntime); // …the held one, the oldest of all, was not

      // The unloaded one's state came back from disk.
      const reloaded = (await fx.client.conversation.get({ conversationId: failed.id })).state;
      expect(reloaded.lastError).toEqual(failedState.lastError);
      expect(reloaded.lastGeneration).toEqual(failedState.lastGeneration);
      expect(reloaded.autoConfirmRemaining).toBe(5);

      // The held generation goes on as if nothing happened.
      fx.fake.enqueue({ kind: "reply", text: ["after"] });
      await fx.client.tool.confirm({ conversationId: held.id, toolCallId: "call_1", action: "confirm" });
      expect(await fx.client.generation.wait({ conversationId: held.id, generationId, timeoutMs: 5000 })).toMatchObject({
        done: true,
        outcome: "completed",
        finalRecord: { content: "after" },
      });
    } finally {
      await fx.close();
    }
  });
});
