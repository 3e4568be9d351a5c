/**
 * The provider registry on its own: how model strings resolve, which
 * configurations it refuses, one LlmProvider per provider, the capability
 * gate in front of every request, and how models.list merges what endpoints
 * report with what is declared. The LlmProviders here are small in-process
 * stand-ins for the seam (test/llm/providers.test.ts runs real endpoints).
 */
import { describe, expect, it } from "vitest";
import type { ProvidersConfig } from "../../protocol/config-providers.js";
import { capabilitiesFrom, capabilityProblem } from "../../src/llm/capability-gate.js";
import type { ChatRequest, LlmProvider, ModelInfo, StreamEvent } from "../../src/llm/provider.js";
import { LlmError } from "../../src/llm/provider.js";
import {
  CapabilityError,
  ProviderConfigError,
  ProviderRegistry,
  UnknownModelError,
  type ProviderEndpoint,
  type ProviderRegistryOptions,
} from "../../src/llm/provider-registry.js";

/** An LlmProvider that records what it was asked and answers "ok", or lists `models` (or fails). */
function standIn(models: ModelInfo[] | Error = []) {
  const requests: ChatRequest[] = [];
  const provider: LlmProvider = {
    async *stream(request): AsyncGenerator<StreamEvent> {
      requests.push(request);
      yield { type: "text", delta: "ok" };
      yield { type: "done", finishReason: "stop", usage: null, toolCalls: [] };
    },
    async listModels() {
      if (models instanceof Error) throw models;
      return models;
    },
  };
  return { provider, requests };
}

function registry(providers: ProvidersConfig, extra: Partial<ProviderRegistryOptions> = {}) {
  const made: ProviderEndpoint[] = [];
  const stands = new Map<string, ReturnType<typeof standIn>>();
  const r = new ProviderRegistry({
    providers,
    envEndpoint: {},
    factory: async (endpoint) => {
      made.push(endpoint);
      const s = standIn();
      stands.set(endpoint.name, s);
      return s.provider;
    },
    ...extra,
  });
  return { registry: r, made, stands };
}

const request = (over: Partial<ChatRequest> = {}): ChatRequest => ({
  model: "ignored",
  messages: [{ role: "user", content: "hi" }],
  tools: [],
  signal: new AbortController().signal,
  ...over,
});

async function drain(provider: LlmProvider, req: ChatRequest): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of provider.stream(req)) events.push(event);
  return events;
}

const TWO: ProvidersConfig = {
  openai: { baseUrl: "https://api.openai.com/v1", apiKey: "sk-a", models: { "gpt-4.1": { imageInput: true } } },
  local: { baseUrl: "http://127.0.0.1:11434/v1", models: { "meta-llama/llama-3": {} } },
};

describe("resolving a model string", () => {
  it("routes provider/model to that provider with the id it knows, keeping further slashes in the id", () => {
    const { registry: r } = registry(TWO, { defaultProvider: "openai" });
    expect(r.resolve("local/qwen3:8b")).toEqual({ provider: "local", modelId: "qwen3:8b", qualified: "local/qwen3:8b", capabilities: null });
    expect(r.resolve("local/meta-llama/llama-3")).toMatchObject({ provider: "local", modelId: "meta-llama/llama-3" });
    expect(r.resolve("local/meta-llama/llama-3").capabilities).toEqual(capabilitiesFrom({}));
  });

  it("sends a bare name, or one declared under the default provider, to the default provider", () => {
    const { registry: r } = registry(TWO, { defaultProvider: "local" });
    expect(r.resolve("qwen3:8b")).toMatchObject({ provider: "local", modelId: "qwen3:8b", qualified: "local/qwen3:8b" });
    // Declared under the default provider: its own slash does not make it a prefix.
    expect(r.resolve("meta-llama/llama-3")).toMatchObject({ provider: "local", modelId: "meta-llama/llama-3" });
  });

  it("refuses an unknown prefix when providers are configured, saying how to write a slashed id", () => {
    const { registry: r } = registry(TWO, { defaultProvider: "openai" });
    expect(() => r.resolve("nope/model")).toThrow(UnknownModelError);
    expect(() => r.resolve("nope/model")).toThrow(/no provider "nope" \(providers: openai, local\).*"openai\/nope\/model"/);
    expect(() => r.resolve("openai/")).toThrow(/names provider "openai" but no model/);
  });

  it("with only the environment's endpoint, a slashed name is that endpoint's model id, as before providers existed", () => {
    const { registry: r } = registry({}, { envEndpoint: { baseUrl: "https://openrouter.ai/api/v1" } });
    expect(r.names()).toEqual(["default"]);
    expect(r.resolve("meta-llama/llama-3.1-8b")).toMatchObject({ provider: "default", modelId: "meta-llama/llama-3.1-8b" });
    expect(r.resolve("default/gpt-4.1")).toMatchObject({ provider: "default", modelId: "gpt-4.1" });
  });

  it("onlyListedModels refuses an undeclared model and names the declared ones", () => {
    const { registry: r } = registry({ strict: { baseUrl: "http://127.0.0.1:1/v1", onlyListedModels: true, models: { a: {}, b: {} } } }, { defaultProvider: "strict" });
    expect(r.resolve("strict/a").modelId).toBe("a");
    expect(() => r.resolve("c")).toThrow(/serves only its declared models \(onlyListedModels\), and "c" is not one: a, b/);
  });
});

describe("the configuration it refuses or completes", () => {
  it("a defaultProvider that names no provider", () => {
    expect(() => registry(TWO, { defaultProvider: "anthropic" })).toThrow(ProviderConfigError);
    expect(() => registry(TWO, { defaultProvider: "anthropic" })).toThrow(/defaultProvider: names "anthropic".*providers: openai, local\)/);
  });

  it("reads apiKeyEnv from the environment it is given, and refuses one that is not set", () => {
    const providers: ProvidersConfig = { or: { baseUrl: "https://openrouter.ai/api/v1", apiKeyEnv: "OR_KEY", apiKey: "ignored" } };
    const { registry: r } = registry(providers, { env: { OR_KEY: "sk-or" } });
    expect(r.endpoint("or")).toEqual({ name: "or", wire: "chat", baseUrl: "https://openrouter.ai/api/v1", apiKey: "sk-or", headers: {} });
    expect(() => registry(providers, { env: {} })).toThrow(/providers\.or\.apiKeyEnv: names OR_KEY, which is not set \(an endpoint that takes no key, such as Ollama, needs no apiKeyEnv: leave it out\)/);
  });

  it("keeps the environment's endpoint as `default` unless it is replaced or plainly unused", () => {
    expect(registry(TWO).registry.names()).toEqual(["default", "openai", "local"]);
    expect(registry(TWO, { defaultProvider: "openai" }).registry.names()).toEqual(["openai", "local"]);
    expect(registry(TWO, { defaultProvider: "openai", envEndpoint: { baseUrl: "http://127.0.0.1:2/v1" } }).registry.names()).toEqual(["default", "openai", "local"]);
    const replaced = registry({ default: { baseUrl: "http://127.0.0.1:3/v1", wire: "responses" } }, { envEndpoint: { baseUrl: "http://127.0.0.1:2/v1" } });
    expect(replaced.registry.endpoint("default")).toMatchObject({ baseUrl: "http://127.0.0.1:3/v1", wire: "responses" });
  });
});

describe("one LlmProvider per provider", () => {
  it("is made once, on first use, with the provider's endpoint; concurrent first uses share it", async () => {
    const { registry: r, made } = registry({ ...TWO, openai: { ...TWO.openai, headers: { "OpenAI-Organization": "org-1" } } });
    expect(made).toEqual([]);
    const [a, b] = await Promise.all([r.llm("openai"), r.llm("openai")]);
    expect(a).toBe(b);
    await r.llm("local");
    expect(made.map((e) => e.name)).toEqual(["openai", "local"]);
    expect(made[0]).toEqual({ name: "openai", wire: "chat", baseUrl: "https://api.openai.com/v1", apiKey: "sk-a", headers: { "OpenAI-Organization": "org-1" } });
  });

  it("a factory that fails is asked again on the next use", async () => {
    let calls = 0;
    const r = new ProviderRegistry({
      providers: {},
      envEndpoint: {},
      factory: async () => {
        if (++calls === 1) throw new LlmError("not yet", "connection");
        return standIn().provider;
      },
    });
    await expect(r.llm("default")).rejects.toThrow("not yet");
    await expect(r.llm("default")).resolves.toBeDefined();
    expect(calls).toBe(2);
  });
});

describe("the gate in front of every request", () => {
  const gated: ProvidersConfig = {
    p: {
      baseUrl: "http://127.0.0.1:1/v1",
      models: { plain: { tools: false, temperature: false }, thinker: { reasoning: ["low"], imageInput: true, maxOutputTokens: 100 } },
    },
  };

  it("sends the provider's model id, not the name the loop was given", async () => {
    const { registry: r, stands } = registry(gated, { defaultProvider: "p" });
    const events = await drain(r.providerFor(r.resolve("p/thinker")), request({ model: "p/thinker", reasoning: "low", maxTokens: 100 }));
    expect(events.map((e) => e.type)).toEqual(["text", "done"]);
    expect(stands.get("p")!.requests.map((q) => q.model)).toEqual(["thinker"]);
  });

  it("refuses before the provider is even made: tools, temperature, an effort not listed, images, too many tokens", async () => {
    const { registry: r, made } = registry(gated, { defaultProvider: "p" });
    const tool = { name: "shell", description: "d", parameters: {} };
    const image = { role: "user" as const, content: [{ type: "image_url" as const, image_url: { url: "data:image/png;base64,AA==" } }] };
    const cases: [string, Partial<ChatRequest>, string][] = [
      ["p/plain", { tools: [tool] }, "tools"],
      ["p/plain", { temperature: 0.2 }, "temperature"],
      ["p/plain", { reasoning: "low" }, "reasoning"],
      ["p/plain", { messages: [image] }, "imageInput"],
      ["p/thinker", { reasoning: "high" }, "reasoning"],
      ["p/thinker", { maxTokens: 101 }, "maxOutputTokens"],
    ];
    for (const [model, over, capability] of cases) {
      const error = await drain(r.providerFor(r.resolve(model)), request(over)).catch((e: unknown) => e);
      expect(error, `${model} ${capability}`).toBeInstanceOf(CapabilityError);
      expect((error as CapabilityError).problem.capability).toBe(capability);
      expect((error as CapabilityError).message).toMatch(new RegExp(`^Capability unsupported: ${model}`));
    }
    expect(made).toEqual([]);
    // "off" sends nothing, so a model that does not reason takes it; an undeclared model takes anything.
    await drain(r.providerFor(r.resolve("p/plain")), request({ reasoning: "off" }));
    await drain(r.providerFor(r.resolve("p/other")), request({ tools: [tool], temperature: 1, reasoning: "high", messages: [image] }));
  });

  it("says what the model takes and how to do without", () => {
    const plain = capabilitiesFrom({ tools: false });
    expect(capabilityProblem("p/m", plain, { toolCount: 3, images: false })?.message).toContain('settings.toolPolicy {"*": "never"}');
    expect(capabilityProblem("p/m", capabilitiesFrom({ reasoning: ["low", "medium"] }), { toolCount: 0, images: false, reasoning: "high" })?.message).toContain(
      "it takes low, medium",
    );
    expect(capabilityProblem("p/m", capabilitiesFrom({}), { toolCount: 0, images: false, reasoning: "low" })?.message).toContain("it does not reason");
    expect(capabilityProblem("p/m", null, { toolCount: 9, images: true, temperature: 2, reasoning: "high" })).toBeUndefined();
  });
});

describe("listing every provider's models", () => {
  it("merges each endpoint's list with the declared models, and reports a failing endpoint without hiding the others", async () => {
    const lists: Record<string, ModelInfo[] | Error> = {
      openai: [{ id: "gpt-4.1", ownedBy: "system" }, { id: "o4-mini" }],
      local: new LlmError("cannot reach the model endpoint at http://127.0.0.1:11434/v1: ECONNREFUSED", "connection"),
      keyed: new LlmError("the model endpoint answered 401: Incorrect API key provided.", "http", 401),
    };
    const r = new ProviderRegistry({
      providers: { ...TWO, keyed: { baseUrl: "https://user:secret@example.test/v1" } },
      defaultProvider: "openai",
      envEndpoint: {},
      factory: async (endpoint) => standIn(lists[endpoint.name]).provider,
    });
    const listed = await r.listModels();
    expect(listed.defaultProvider).toBe("openai");
    expect(listed.providers).toEqual([
      { name: "openai", wire: "chat", baseUrl: "https://api.openai.com/v1", status: "ok" },
      { name: "local", wire: "chat", baseUrl: "http://127.0.0.1:11434/v1", status: "unreachable", error: expect.stringContaining("ECONNREFUSED") },
      { name: "keyed", wire: "chat", baseUrl: "https://example.test/v1", status: "error", error: expect.stringContaining("401"), httpStatus: 401 },
    ]);
    expect(listed.models).toEqual([
      { id: "openai/gpt-4.1", provider: "openai", modelId: "gpt-4.1", ownedBy: "system", listed: true, declared: true, capabilities: capabilitiesFrom({ imageInput: true }) },
      { id: "openai/o4-mini", provider: "openai", modelId: "o4-mini", listed: true, declared: false, capabilities: null },
      // The endpoint is down, but what the configuration declares is still shown.
      { id: "local/meta-llama/llama-3", provider: "local", modelId: "meta-llama/llama-3", listed: false, declared: true, capabilities: capabilitiesFrom({}) },
    ]);
  });

  it("an endpoint that never answers is reported unreachable after the time limit", async () => {
    const r = new ProviderRegistry({
      providers: {},
      envEndpoint: {},
      factory: async () => ({
        stream: standIn().provider.stream,
        listModels: (signal) =>
          new Promise<ModelInfo[]>((_resolve, reject) => signal!.addEventListener("abort", () => reject(signal!.reason), { once: true })),
      }),
    });
    const started = Date.now();
    const listed = await r.listModels(50);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(listed.providers[0]).toMatchObject({ name: "default", status: "unreachable", error: "timed out listing models" });
  });
});

describe("a route's stream", () => {
  /** A provider whose stream says when it was opened and when it was closed (its finally ran). */
  function watched() {
    const log: string[] = [];
    const provider: LlmProvider = {
      async *stream(): AsyncGenerator<StreamEvent> {
        log.push("opened");
        try {
          yield { type: "text", delta: "a" };
          yield { type: "text", delta: "b" };
          yield { type: "done", finishReason: "stop", usage: null, toolCalls: [] };
        } finally {
          log.push("closed");
        }
      },
      listModels: async () => [],
    };
    const r = new ProviderRegistry({ providers: { p: { baseUrl: "http://127.0.0.1:1/v1" } }, envEndpoint: {}, defaultProvider: "p", factory: async () => provider });
    return { log, routed: r.providerFor(r.resolve("p/m")) };
  }

  it("passes the provider's events through, in order, then ends", async () => {
    const { log, routed } = watched();
    expect((await drain(routed, request())).map((e) => (e.type === "text" ? e.delta : e.type))).toEqual(["a", "b", "done"]);
    expect(log).toEqual(["opened", "closed"]);
  });

  it("left early (a break, an interrupt), closes the provider's stream, which releases its request", async () => {
    const { log, routed } = watched();
    for await (const event of routed.stream(request())) {
      expect(event).toEqual({ type: "text", delta: "a" });
      break;
    }
    expect(log).toEqual(["opened", "closed"]);
  });

  it("closed before its first event, never opens the provider's stream", async () => {
    const { log, routed } = watched();
    const iterator = routed.stream(request())[Symbol.asyncIterator]();
    await iterator.return?.();
    expect(await iterator.next()).toEqual({ done: true, value: undefined });
    expect(log).toEqual([]);
  });
});
