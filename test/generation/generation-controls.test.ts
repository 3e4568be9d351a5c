/**
 * Generation controls (temperature, maxTokens, reasoning) from conversation
 * settings and from `step`, checked in the request body the fake
 * OpenAI-compatible server received through the real SDK.
 */
import { expect, it } from "vitest";
import { newConversation, useAgentFixture } from "../harness/agent-fixture.js";
import { expectInvalidParams } from "../harness/rpc-errors.js";

const fx = useAgentFixture();

/** Run one step with a plain answer and return the body the model endpoint received. */
async function stepBody(conversationId: string, events: Awaited<ReturnType<typeof newConversation>>["events"], step: object = {}) {
  fx.fake.enqueue({ kind: "reply", text: ["ok"] });
  const before = fx.fake.requests.length;
  const { generationId } = await fx.client.step({ conversationId, ...step });
  expect((await events.waitForEnd(generationId)).method).toBe("generation_complete");
  expect(fx.fake.requests).toHaveLength(before + 1);
  return fx.fake.requests.at(-1)! as Record<string, unknown>;
}

it("unset controls send nothing: no temperature, max_tokens or reasoning_effort in the request", async () => {
  const { id, events } = await newConversation(fx.client);
  const body = await stepBody(id, events);
  expect(body).not.toHaveProperty("temperature");
  expect(body).not.toHaveProperty("max_tokens");
  expect(body).not.toHaveProperty("max_completion_tokens");
  expect(body).not.toHaveProperty("reasoning_effort");
  const { conversation } = await fx.client.conversation.get({ conversationId: id });
  expect(conversation.settings).not.toHaveProperty("temperature");
});

it("conversation settings reach the request body; step overrides them for that step only, null sends none", async () => {
  const { id, events } = await newConversation(fx.client, { settings: { temperature: 0.3, maxTokens: 256, reasoning: "high" } });
  expect(await stepBody(id, events)).toMatchObject({ temperature: 0.3, max_tokens: 256, reasoning_effort: "high" });

  const overridden = await stepBody(id, events, { temperature: 1.5, maxTokens: null, reasoning: "low" });
  expect(overridden).toMatchObject({ temperature: 1.5, reasoning_effort: "low" });
  expect(overridden).not.toHaveProperty("max_tokens");

  // The override was for that step: the next one uses the settings again.
  expect(await stepBody(id, events)).toMatchObject({ temperature: 0.3, max_tokens: 256, reasoning_effort: "high" });

  // reasoning "off" sends no reasoning_effort; conversation.update with null unsets a control.
  await fx.client.conversation.update({ conversationId: id, settings: { reasoning: "off", temperature: null } });
  const updated = await stepBody(id, events);
  expect(updated).not.toHaveProperty("reasoning_effort");
  expect(updated).not.toHaveProperty("temperature");
  expect(updated).toMatchObject({ max_tokens: 256 });
});

it("step overrides alone (no settings) reach the body, temperature 0 included", async () => {
  const { id, events } = await newConversation(fx.client);
  expect(await stepBody(id, events, { temperature: 0, maxTokens: 1, reasoning: "medium" })).toMatchObject({
    temperature: 0,
    max_tokens: 1,
    reasoning_effort: "medium",
  });
});

it("refuses out-of-range or mistyped controls with -32602 naming the field, and starts no generation", async () => {
  await expectInvalidParams(fx.client.conversation.create({ settings: { temperature: 2.5 } }), "settings.temperature");
  await expectInvalidParams(fx.client.conversation.create({ settings: { maxTokens: 0 } }), "settings.maxTokens");
  await expectInvalidParams(fx.client.conversation.create({ settings: { maxTokens: 1.5 } }), "settings.maxTokens");
  await expectInvalidParams(fx.client.conversation.create({ settings: { reasoning: "max" as never } }), "settings.reasoning");
  const { id } = await newConversation(fx.client);
  await expectInvalidParams(fx.client.conversation.update({ conversationId: id, settings: { temperature: -0.1 } }), "settings.temperature");
  await expectInvalidParams(fx.client.step({ conversationId: id, temperature: 3 }), "temperature");
  await expectInvalidParams(fx.client.step({ conversationId: id, maxTokens: -5 }), "maxTokens");
  await expectInvalidParams(fx.client.step({ conversationId: id, reasoning: "extreme" as never }), "reasoning");
  await expectInvalidParams(fx.client.step({ conversationId: id, temperature: "hot" as never }), "temperature");
  expect(fx.fake.requests).toHaveLength(0);
  expect((await fx.client.conversation.get({ conversationId: id })).state.generating).toBe(false);
});
