/**
 * Providers end to end: one server with two fake OpenAI-compatible endpoints
 * (two real HTTP servers, each with its own API key; one spoken to over
 * Chat Completions, the other over the Responses API) and a third that is
 * down, declared in the configuration and reached through the server's own
 * provider factory (the real openai SDK). Each request is checked by what
 * ITS endpoint received: the model id without the provider prefix, the
 * provider's headers and API key.
 */
import { readFile } from "node:fs/promises";
import { createServer } from "node:http";
import { parse } from "jsonc-parser";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { AgentwireClient } from "../../clients/typescript/index.js";
import { AgentwireConfigFile } from "../../protocol/config.js";
import { ProviderRegistry } from "../../src/llm/provider-registry.js";
import { ConfigError } from "../../src/server.js";
import { startFakeOpenAI, type FakeOpenAI } from "../fake-openai/server.js";
import { newConversation } from "../harness/agent-fixture.js";
import type { EventRecorder } from "../harness/event-recorder.js";
import { expectInvalidParams, rpcError } from "../harness/rpc-errors.js";
import { startTestServer, type TestServer } from "../harness/test-server.js";

let alpha: FakeOpenAI;
let beta: FakeOpenAI;
let downUrl: string;
let server: TestServer;
let client: AgentwireClient;

/** A port that was just free: listen on 0, note it, close. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const port = (probe.address() as { port: number }).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  alpha = await startFakeOpenAI({ apiKey: "key-alpha", models: ["a-small", "a-vision"] });
  beta = await startFakeOpenAI({ apiKey: "key-beta", models: [{ id: "b-chat", ownedBy: "beta-inc" }] });
  downUrl = `http://127.0.0.1:${await closedPort()}/v1`;
  server = await startTestServer({
    model: "a-small",
    defaultProvider: "alpha",
    providers: {
      alpha: {
        baseUrl: alpha.url,
        apiKey: "key-alpha",
        headers: { "X-Org": "org-alpha" },
        models: {
          "a-small": {},
          "a-vision": { imageInput: true, reasoning: ["low"], maxOutputTokens: 1000 },
          "a-plain": { tools: false, temperature: false },
        },
      },
      // The other wire: Chat Completions and the Responses API side by side in one server.
      beta: { wire: "responses", baseUrl: beta.url, apiKey: "key-beta", headers: { "X-Org": "org-beta" } },
      down: { baseUrl: downUrl, models: { ghost: { imageInput: true } } },
    },
  });
  client = await server.connectInMemory();
});

afterAll(async () => {
  await server?.close();
  await alpha?.close();
  await beta?.close();
});

afterEach(() => {
  const rejected = [...alpha.rejected, ...beta.rejected];
  alpha.reset();
  beta.reset();
  expect(rejected).toEqual([]);
});

async function runStep(id: string, events: EventRecorder, step: Record<string, unknown> = {}) {
  const { generationId } = await client.step({ conversationId: id, ...step });
  return events.waitForEnd(generationId);
}

describe("routing", () => {
  it("serves two conversations on two providers of different wires at once, each endpoint getting its own wire, model id, key and headers", async () => {
    const a = await newConversation(client, { model: "alpha/a-small" }, "to alpha");
    const b = await newConversation(client, { model: "beta/b-chat" }, "to beta");
    // Paced answers, so both streams are open together.
    alpha.enqueue({ kind: "reply", text: ["a1", "a2", "a3"], delayMs: 80 });
    beta.enqueue({ kind: "reply", text: ["b1", "b2", "b3"], delayMs: 80 });
    const stepA = await client.step({ conversationId: a.id });
    const stepB = await client.step({ conversationId: b.id });
    await a.events.waitForMethod("generation_progress");
    await b.events.waitForMethod("generation_progress");
    expect(a.events.of("generation_complete")).toEqual([]);
    expect(b.events.of("generation_complete")).toEqual([]);
    expect((await a.events.waitForEnd(stepA.generationId)).method).toBe("generation_complete");
    expect((await b.events.waitForEnd(stepB.generationId)).method).toBe("generation_complete");

    expect(alpha.requests.map((r) => r.model)).toEqual(["a-small"]);
    expect(beta.requests.map((r) => r.model)).toEqual(["b-chat"]);
    expect(alpha.wires).toEqual(["chat"]);
    expect(beta.wires).toEqual(["responses"]);
    expect(JSON.stringify(alpha.messagesOf(0))).toContain("to alpha");
    expect(JSON.stringify(beta.messagesOf(0))).toContain("to beta");
    expect(alpha.exchanges[0].headers).toMatchObject({ authorization: "Bearer key-alpha", "x-org": "org-alpha" });
    expect(beta.exchanges[0].headers).toMatchObject({ authorization: "Bearer key-beta", "x-org": "org-beta" });
    // Clients see the model as it was asked for.
    expect(a.events.of("generation_started")[0].model).toBe("alpha/a-small");
    expect(b.events.of("generation_started")[0].model).toBe("beta/b-chat");
    const text = (e: EventRecorder) => e.of("message_added").find((m) => m.record.role === "assistant")!.record.content;
    expect([text(a.events), text(b.events)]).toEqual(["a1a2a3", "b1b2b3"]);
  });

  it("a bare model name goes to the default provider; provider/model to the one it names", async () => {
    const { id, events } = await newConversation(client);
    expect((await runStep(id, events)).method).toBe("generation_complete"); // the server's model, a-small
    expect((await runStep(id, events, { model: "b-chat" })).method).toBe("generation_complete"); // bare: alpha, not beta
    expect((await runStep(id, events, { model: "beta/b-chat" })).method).toBe("generation_complete");
    expect(alpha.requests.map((r) => r.model)).toEqual(["a-small", "b-chat"]);
    expect(beta.requests.map((r) => r.model)).toEqual(["b-chat"]);
  });

  it("a model naming no provider is refused on `model`, from the step or from the conversation, and nothing is sent", async () => {
    const { id } = await newConversation(client);
    const error = await expectInvalidParams(client.step({ conversationId: id, model: "gamma/x" }), "model");
    expect(error.message).toContain('no provider "gamma" (providers: alpha, beta, down)');
    const stored = await newConversation(client, { model: "gamma/x" });
    await expectInvalidParams(client.step({ conversationId: stored.id }), "model");
    expect([...alpha.requests, ...beta.requests]).toEqual([]);
    // The conversation is still usable with a model that resolves.
    expect((await runStep(stored.id, stored.events, { model: "alpha/a-small" })).method).toBe("generation_complete");
  });
});

describe("capability gating at step: CAPABILITY_UNSUPPORTED before any request", () => {
  async function expectRefused(promise: Promise<unknown>, model: string, capability: string) {
    const error = await rpcError(promise);
    expect(error.code, error.message).toBe(-32012);
    expect(error.data).toEqual({ model, capability });
    expect(error.message).toContain(model);
    return error;
  }

  it("an image to a model without image input; the same conversation runs on one with it", async () => {
    const { id, events } = await newConversation(client, { model: "alpha/a-small" });
    const gif = Buffer.from("GIF89a\x01\x00\x01\x00\x00\x00\x00;", "latin1").toString("base64");
    const { assetId } = await client.asset.upload({ conversationId: id, data: gif });
    await client.message.append({ conversationId: id, role: "user", content: "what is this?", attachments: [{ type: "image", assetId }] });
    const error = await expectRefused(client.step({ conversationId: id }), "alpha/a-small", "imageInput");
    expect(error.message).toContain("does not take images");
    expect(events.of("generation_started")).toEqual([]);
    expect(alpha.requests).toEqual([]);

    expect((await runStep(id, events, { model: "alpha/a-vision" })).method).toBe("generation_complete");
    expect(JSON.stringify(alpha.requests[0].messages)).toContain('"type":"image_url"');
  });

  it("a reasoning effort the model does not list, from the step or the settings; one it lists is sent", async () => {
    const { id, events } = await newConversation(client, { model: "alpha/a-vision" });
    const error = await expectRefused(client.step({ conversationId: id, reasoning: "high" }), "alpha/a-vision", "reasoning");
    expect(error.message).toContain("it takes low");
    const plain = await newConversation(client, { model: "alpha/a-small", settings: { reasoning: "medium" } });
    expect((await expectRefused(client.step({ conversationId: plain.id }), "alpha/a-small", "reasoning")).message).toContain("does not reason");
    // "off" sends nothing, so any model takes it.
    expect((await runStep(plain.id, plain.events, { reasoning: "off" })).method).toBe("generation_complete");
    expect((await runStep(id, events, { reasoning: "low" })).method).toBe("generation_complete");
    expect(alpha.requests.map((r) => r.reasoning_effort)).toEqual([undefined, "low"]);
  });

  it("tools to a model without tools, then a temperature to one that takes none; with every tool denied and no temperature it runs", async () => {
    const { id, events } = await newConversation(client, { model: "alpha/a-plain" });
    const tools = await expectRefused(client.step({ conversationId: id }), "alpha/a-plain", "tools");
    expect(tools.message).toContain('settings.toolPolicy {"*": "never"}');
    await client.conversation.update({ conversationId: id, settings: { toolPolicy: { "*": "never" } } });
    await expectRefused(client.step({ conversationId: id, temperature: 0.5 }), "alpha/a-plain", "temperature");
    await client.conversation.update({ conversationId: id, settings: { temperature: 0.7 } });
    await expectRefused(client.step({ conversationId: id }), "alpha/a-plain", "temperature");
    expect(alpha.requests).toEqual([]);

    expect((await runStep(id, events, { temperature: null })).method).toBe("generation_complete");
    expect(alpha.requests[0]).not.toHaveProperty("tools");
    expect(alpha.requests[0]).not.toHaveProperty("temperature");
  });

  it("a maxTokens above the model's maxOutputTokens", async () => {
    const { id } = await newConversation(client, { model: "alpha/a-vision" });
    await expectRefused(client.step({ conversationId: id, maxTokens: 1001 }), "alpha/a-vision", "maxOutputTokens");
    expect(alpha.requests).toEqual([]);
  });

  it("a change made during a step is caught before the next model call, which is not sent", async () => {
    const { id, events } = await newConversation(client, { model: "alpha/a-vision" });
    alpha.enqueue({ kind: "reply", toolCalls: [{ id: "call_1", name: "shell", args: '{"command":"echo hi"}' }] });
    const { generationId } = await client.step({ conversationId: id });
    await events.waitForMethod("tool_pending");
    await client.conversation.update({ conversationId: id, settings: { reasoning: "high" } });
    await client.tool.confirm({ conversationId: id, toolCallId: "call_1", action: "skip" });
    const end = await events.waitForEnd(generationId);
    expect(end.method).toBe("error");
    expect(end.params.message).toMatch(/^Capability unsupported: alpha\/a-vision does not take reasoning effort "high"/);
    expect(alpha.requests).toHaveLength(1);
  });
});

describe("models.list", () => {
  it("lists every provider's models with their capabilities, and shows the endpoint that is down as unreachable", async () => {
    const listed = await client.models.list();
    expect(listed.defaultModel).toBe("a-small");
    expect(listed.defaultProvider).toBe("alpha");
    expect(listed.providers).toEqual([
      { name: "alpha", wire: "chat", baseUrl: alpha.url, status: "ok" },
      { name: "beta", wire: "responses", baseUrl: beta.url, status: "ok" },
      { name: "down", wire: "chat", baseUrl: downUrl, status: "unreachable", error: expect.stringContaining("ECONNREFUSED") },
    ]);
    const byId = new Map(listed.models.map((m) => [m.id, m]));
    expect([...byId.keys()]).toEqual(["alpha/a-small", "alpha/a-vision", "alpha/a-plain", "beta/b-chat", "down/ghost"]);
    expect(byId.get("alpha/a-vision")).toEqual({
      id: "alpha/a-vision",
      provider: "alpha",
      modelId: "a-vision",
      ownedBy: "fake-openai",
      listed: true,
      declared: true,
      capabilities: { tools: true, imageInput: true, reasoning: ["low"], temperature: true, reasoningContent: false, maxOutputTokens: 1000 },
    });
    expect(byId.get("alpha/a-plain")).toMatchObject({ listed: false, declared: true, capabilities: { tools: false, temperature: false } });
    expect(byId.get("beta/b-chat")).toMatchObject({ ownedBy: "beta-inc", listed: true, declared: false, capabilities: null });
    // Down, but what the configuration says about it is still there.
    expect(byId.get("down/ghost")).toMatchObject({ listed: false, declared: true, capabilities: { imageInput: true } });
  });
});

describe("configuration", () => {
  it("the environment's endpoint alone is the provider `default`, and a slashed model id goes to it whole", async () => {
    const envOnly = await startTestServer({ model: "org/some-model", llm: { baseUrl: beta.url, apiKey: "key-beta" } });
    try {
      const c = await envOnly.connectInMemory();
      const { id, events } = await newConversation(c);
      const { generationId } = await c.step({ conversationId: id });
      expect((await events.waitForEnd(generationId)).method).toBe("generation_complete");
      expect(beta.requests.map((r) => r.model)).toEqual(["org/some-model"]);
      expect(beta.exchanges[0].headers.authorization).toBe("Bearer key-beta");
      expect((await c.models.list()).providers).toEqual([{ name: "default", wire: "chat", baseUrl: beta.url, status: "ok" }]);
    } finally {
      await envOnly.close();
    }
  });

  it("refuses to start with a defaultProvider or a default model that names no provider", async () => {
    const providers = { alpha: { baseUrl: alpha.url } };
    await expect(startTestServer({ providers, defaultProvider: "gamma" })).rejects.toThrow(ConfigError);
    await expect(startTestServer({ providers, defaultProvider: "gamma" })).rejects.toThrow(/defaultProvider: names "gamma"/);
    await expect(startTestServer({ providers, model: "gamma/x" })).rejects.toThrow(/^model: "gamma\/x" names no provider "gamma"/);
  });

  it("the providers guide's example is a valid agentwire.json whose models resolve as it says", async () => {
    const guide = await readFile(new URL("../../docs/providers.md", import.meta.url), "utf8");
    const example = /<!-- block: config [^>]*id=providers-example[^>]*-->\s*```jsonc\n([\s\S]*?)```/.exec(guide);
    expect(example, "docs/providers.md has a ```jsonc block marked id=providers-example").not.toBeNull();
    const parsed = AgentwireConfigFile.safeParse(parse(example![1]!));
    expect(parsed.success ? "ok" : parsed.error.message).toBe("ok");
    const file = parsed.data!;
    const registry = new ProviderRegistry({
      providers: file.providers!,
      defaultProvider: file.defaultProvider,
      envEndpoint: {},
      env: { OPENAI_API_KEY: "sk-test" },
      factory: async () => {
        throw new Error("not used");
      },
    });
    expect(registry.names()).toEqual(["ollama", "openai", "openai-responses"]);
    expect(registry.resolve(file.model!)).toMatchObject({ provider: "ollama", modelId: "qwen3:8b" });
    expect(registry.resolve("openai-responses/o4-mini").capabilities).toMatchObject({ reasoning: ["low", "medium", "high"], temperature: false });
    expect(() => registry.resolve("openai-responses/gpt-4.1")).toThrow(/onlyListedModels/);
  });
});
