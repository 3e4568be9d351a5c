/**
 * The model providers a server knows (config `providers`, plus the
 * environment's endpoint as the provider named `default`): turns a `model`
 * string into a route {provider, modelId, capabilities}, hands out one
 * LlmProvider per provider (made by an injected factory on first use, then
 * kept), gates each request by the model's declared capabilities, and lists
 * every provider's models for models.list.
 *
 * How a model string resolves, first match wins:
 *  1. `p/rest` where p is a provider: provider p, model id `rest` (which may hold more slashes);
 *  2. a name declared under the default provider's `models`: the default provider;
 *  3. a name without "/": the default provider;
 *  4. otherwise (an unknown prefix): refused — except when no `providers` are
 *     configured, where the whole name goes to the environment's endpoint as
 *     it always did (OpenRouter ids like "meta-llama/llama-3.1-8b").
 */
import type * as z from "zod";
import type { ProviderDefinition, ProvidersConfig, WireName } from "../../protocol/config-providers.js";
import { ENV_PROVIDER_NAME, KEYLESS_HINT, OPENAI_DEFAULT_BASE_URL } from "../../protocol/provider-defaults.js";
import { parseConfigPart } from "../config/config-check.js";
import type { ModelsListResult } from "../../protocol/tools.js";
import { capabilitiesFrom, capabilityProblem, type CapabilityProblem, type ModelCapabilities } from "./capability-gate.js";
import type { ChatMessage } from "./chat-message.js";
import type { ChatRequest, LlmProvider, ModelInfo, StreamEvent } from "./provider.js";
import { LlmError } from "./provider.js";

/** The provider the environment's endpoint (OPENAI_BASE_URL / OPENAI_API_KEY / config `llm`) becomes. */
export const ENV_PROVIDER = ENV_PROVIDER_NAME;

/** What a factory needs to build one provider's LlmProvider. */
export interface ProviderEndpoint {
  name: string;
  wire: WireName;
  baseUrl: string;
  /** Resolved (apiKeyEnv read); absent when the endpoint takes none. */
  apiKey?: string;
  headers: Record<string, string>;
}

export type ProviderFactory = (endpoint: ProviderEndpoint) => Promise<LlmProvider>;

export interface ModelRoute {
  provider: string;
  /** The id the provider's endpoint knows the model by (no provider prefix). */
  modelId: string;
  /** `provider/modelId`: how errors and models.list name it. */
  qualified: string;
  /** Null when the model is not declared: unknown, so nothing is refused. */
  capabilities: ModelCapabilities | null;
  /** Set when `provider` is an agent runtime (config `runtimes`): the step runs through it, not through a model endpoint. */
  runtime?: true;
}

/** A model string that names no usable model; the message is meant for a -32602 on `model`. */
export class UnknownModelError extends Error {
  override name = "UnknownModelError";
}

/** A providers configuration the server cannot start with; the message names the key. */
export class ProviderConfigError extends Error {
  override name = "ProviderConfigError";
}

/**
 * A request refused before it was sent, because the model declares it cannot
 * take part of it. An LlmError, so a running generation reports it like any
 * refusal by the endpoint (an `error` event), without asking the endpoint.
 */
export class CapabilityError extends LlmError {
  constructor(
    readonly problem: CapabilityProblem,
    readonly model: string,
  ) {
    super(`Capability unsupported: ${problem.message}`, "http");
    this.name = "CapabilityError";
  }
}

interface ProviderEntry {
  endpoint: ProviderEndpoint;
  models: Map<string, ModelCapabilities>;
  onlyListedModels: boolean;
}

export interface ProviderRegistryOptions {
  providers: ProvidersConfig;
  defaultProvider?: string;
  /** The environment's endpoint, registered as `default` unless `providers` declares that name. */
  envEndpoint: { baseUrl?: string; apiKey?: string };
  factory: ProviderFactory;
  /** Where apiKeyEnv names are looked up (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Names of the agent runtimes (config `runtimes`): `<name>/<model>` routes to the runtime. */
  runtimes?: readonly string[];
}

export class ProviderRegistry {
  private readonly entries = new Map<string, ProviderEntry>();
  private readonly instances = new Map<string, Promise<LlmProvider>>();
  readonly defaultProvider: string;
  /** Rule 4 of the resolution: with no providers configured, an unknown prefix is part of the model id. */
  private readonly envOnly: boolean;
  private readonly runtimes: ReadonlySet<string>;

  constructor(private readonly options: ProviderRegistryOptions) {
    const env = options.env ?? process.env;
    const declared = Object.entries(options.providers);
    this.runtimes = new Set(options.runtimes ?? []);
    for (const [name] of declared) {
      if (this.runtimes.has(name)) throw new ProviderConfigError(`runtimes.${name}: "${name}" is also a provider; a model prefix must name one or the other`);
    }
    this.envOnly = declared.length === 0;
    this.defaultProvider = options.defaultProvider ?? ENV_PROVIDER;
    // The environment's endpoint is registered unless it is replaced, or plainly unused: providers are
    // declared, another one is the default, and nothing configures the environment's one.
    const envConfigured = options.envEndpoint.baseUrl !== undefined || options.envEndpoint.apiKey !== undefined;
    const envUsed = this.defaultProvider === ENV_PROVIDER || envConfigured || this.envOnly;
    if (!Object.hasOwn(options.providers, ENV_PROVIDER) && envUsed) {
      this.entries.set(ENV_PROVIDER, {
        endpoint: {
          name: ENV_PROVIDER,
          wire: "chat",
          baseUrl: options.envEndpoint.baseUrl ?? OPENAI_DEFAULT_BASE_URL,
          ...(options.envEndpoint.apiKey !== undefined ? { apiKey: options.envEndpoint.apiKey } : {}),
          headers: {},
        },
        models: new Map(),
        onlyListedModels: false,
      });
    }
    for (const [name, definition] of declared) this.entries.set(name, entryOf(name, definition, env));
    if (!this.entries.has(this.defaultProvider)) {
      throw new ProviderConfigError(`defaultProvider: names "${this.defaultProvider}", which is not a provider (providers: ${this.names().join(", ") || "none"})`);
    }
  }

  /** Provider names: `default` first when present, then in configuration order. */
  names(): string[] {
    return [...this.entries.keys()];
  }

  endpoint(name: string): ProviderEndpoint | undefined {
    return this.entries.get(name)?.endpoint;
  }

  /** The route for a model string; throws UnknownModelError saying why there is none. */
  resolve(model: string): ModelRoute {
    const slash = model.indexOf("/");
    const prefix = slash > 0 ? model.slice(0, slash) : undefined;
    if (prefix !== undefined && this.runtimes.has(prefix)) {
      const modelId = model.slice(slash + 1);
      if (modelId === "") throw new UnknownModelError(`"${model}" names runtime "${prefix}" but no model`);
      return { provider: prefix, modelId, qualified: model, capabilities: null, runtime: true };
    }
    if (prefix !== undefined && this.entries.has(prefix)) return this.route(prefix, model.slice(slash + 1), model);
    const fallback = this.entries.get(this.defaultProvider)!;
    if (prefix === undefined || fallback.models.has(model) || this.envOnly) return this.route(this.defaultProvider, model, model);
    throw new UnknownModelError(
      `"${model}" names no provider "${prefix}" (providers: ${this.names().join(", ")}); ` +
        `a model id that contains "/" is written with its provider first, e.g. "${this.defaultProvider}/${model}"`,
    );
  }

  private route(provider: string, modelId: string, asked: string): ModelRoute {
    const entry = this.entries.get(provider)!;
    if (modelId === "") throw new UnknownModelError(`"${asked}" names provider "${provider}" but no model`);
    const capabilities = entry.models.get(modelId) ?? null;
    if (!capabilities && entry.onlyListedModels) {
      throw new UnknownModelError(
        `provider "${provider}" serves only its declared models (onlyListedModels), and "${modelId}" is not one: ${[...entry.models.keys()].join(", ") || "none declared"}`,
      );
    }
    return { provider, modelId, qualified: `${provider}/${modelId}`, capabilities };
  }

  /** The provider's LlmProvider, made on first use; a failed construction is retried on the next use. */
  llm(name: string): Promise<LlmProvider> {
    let instance = this.instances.get(name);
    if (!instance) {
      const entry = this.entries.get(name);
      if (!entry) return Promise.reject(new Error(`no provider named "${name}"`));
      instance = this.options.factory(entry.endpoint);
      this.instances.set(name, instance);
      instance.catch(() => {
        if (this.instances.get(name) === instance) this.instances.delete(name);
      });
    }
    return instance;
  }

  /**
   * An LlmProvider for one route: each request is checked against the
   * model's capabilities before it is sent, and carries the provider's model
   * id (the loop names the model as it was asked for, prefix included).
   */
  providerFor(route: ModelRoute): LlmProvider {
    const registry = this;
    const open = async (request: ChatRequest): Promise<AsyncIterator<StreamEvent>> => {
      const problem = capabilityProblem(route.qualified, route.capabilities, {
        toolCount: request.tools.length,
        images: request.messages.some((m) => m.role === "user" && Array.isArray(m.content) && m.content.some((p) => p.type === "image_url")),
        temperature: request.temperature,
        maxTokens: request.maxTokens,
        reasoning: request.reasoning,
      });
      if (problem) throw new CapabilityError(problem, route.qualified);
      const llm = await registry.llm(route.provider);
      // Earlier thinking goes back only to a model declared to want it (ChatMessage.reasoning).
      const messages = route.capabilities?.reasoningContent ? request.messages : withoutReasoning(request.messages);
      return llm.stream({ ...request, messages, model: route.modelId })[Symbol.asyncIterator]();
    };
    return {
      stream: (request: ChatRequest) => opened(() => open(request)),
      listModels: async (signal) => (await registry.llm(route.provider)).listModels(signal),
    };
  }

  /**
   * Every provider's models: what its endpoint's /models reports merged with
   * what the configuration declares, and each provider's status. An endpoint
   * that fails is reported with its error, never hidden; its declared models
   * are still listed. Providers are asked at once, each within `timeoutMs`.
   */
  async listModels(timeoutMs = 15_000): Promise<Omit<ModelsListResult, "defaultModel" | "runtimes">> {
    const results = await Promise.all(
      this.names().map(async (name) => {
        const entry = this.entries.get(name)!;
        try {
          const listed = await (await this.llm(name)).listModels(AbortSignal.timeout(timeoutMs));
          return { name, entry, listed, failure: undefined };
        } catch (error) {
          return { name, entry, listed: [] as ModelInfo[], failure: describeFailure(error) };
        }
      }),
    );
    const models: ModelsListResult["models"] = [];
    const providers: ModelsListResult["providers"] = [];
    for (const { name, entry, listed, failure } of results) {
      providers.push({
        name,
        wire: entry.endpoint.wire,
        baseUrl: displayUrl(entry.endpoint.baseUrl),
        status: failure?.status ?? "ok",
        ...(failure ? { error: failure.error } : {}),
        ...(failure?.httpStatus !== undefined ? { httpStatus: failure.httpStatus } : {}),
      });
      const seen = new Set<string>();
      for (const model of listed) {
        // A provider that serves only its declared models does not offer the others.
        if (seen.has(model.id) || (entry.onlyListedModels && !entry.models.has(model.id))) continue;
        seen.add(model.id);
        models.push(modelEntry(name, model.id, entry.models.get(model.id) ?? null, true, model.ownedBy));
      }
      for (const [id, capabilities] of entry.models) {
        if (!seen.has(id)) models.push(modelEntry(name, id, capabilities, false));
      }
    }
    return { models, providers, defaultProvider: this.defaultProvider };
  }
}

function entryOf(name: string, written: ProviderDefinition, env: NodeJS.ProcessEnv): ProviderEntry {
  // Definitions may come by hand (tests, embedders) as well as from the parsed configuration: parsing applies the schema's defaults.
  // As data (config-check.ts): the providers' zod schema is not built for a valid definition.
  const definition = parseConfigPart<z.output<typeof ProviderDefinition>>("providers.*", written);
  let apiKey = definition.apiKey;
  if (definition.apiKeyEnv !== undefined) {
    apiKey = env[definition.apiKeyEnv];
    if (!apiKey) throw new ProviderConfigError(`providers.${name}.apiKeyEnv: names ${definition.apiKeyEnv}, which is not set${KEYLESS_HINT}`);
  }
  return {
    endpoint: {
      name,
      wire: definition.wire,
      baseUrl: definition.baseUrl,
      ...(apiKey !== undefined ? { apiKey } : {}),
      headers: { ...definition.headers },
    },
    models: new Map(Object.entries(definition.models ?? {}).map(([id, declared]) => [id, capabilitiesFrom(declared)])),
    onlyListedModels: definition.onlyListedModels,
  };
}

function modelEntry(provider: string, modelId: string, capabilities: ModelCapabilities | null, listed: boolean, ownedBy?: string) {
  return {
    id: `${provider}/${modelId}`,
    provider,
    modelId,
    ...(ownedBy ? { ownedBy } : {}),
    listed,
    declared: capabilities !== null,
    capabilities,
  };
}

type ProviderStatus = ModelsListResult["providers"][number]["status"];

/** unreachable: no answer (refused, reset, timed out); error: it answered, with a failure. */
function describeFailure(error: unknown): { status: ProviderStatus; error: string; httpStatus?: number } {
  if (error instanceof LlmError) {
    const unreachable = error.kind === "connection" || error.kind === "timeout";
    return { status: unreachable ? "unreachable" : "error", error: error.message, ...(error.status !== undefined ? { httpStatus: error.status } : {}) };
  }
  if (error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError")) {
    return { status: "unreachable", error: "timed out listing models" };
  }
  return { status: "error", error: error instanceof Error ? error.message : String(error) };
}

/** The base URL without any user:password part, so models.list never shows a credential. */
function displayUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (!parsed.username && !parsed.password) return url;
    parsed.username = "";
    parsed.password = "";
    return parsed.toString();
  } catch {
    return url;
  }
}

function withoutReasoning(messages: ChatMessage[]): ChatMessage[] {
  if (!messages.some((m) => m.role === "assistant" && m.reasoning !== undefined)) return messages;
  return messages.map((m) => {
    if (m.role !== "assistant" || m.reasoning === undefined) return m;
    const { reasoning: _dropped, ...rest } = m;
    return rest;
  });
}

/**
 * The events of the iterator `open` resolves to, opened at the first next():
 * what `async *stream() { …; yield* inner }` did, without an async generator
 * of its own in between. Every event of every stream passes here, and a
 * delegating generator cost each one its own promises and microtask turns.
 * A failure to open is thrown by that first next(), as before.
 */
function opened(open: () => Promise<AsyncIterator<StreamEvent>>): AsyncIterable<StreamEvent> {
  let inner: AsyncIterator<StreamEvent> | undefined;
  let opening: Promise<AsyncIterator<StreamEvent>> | undefined;
  let closed = false;
  const iterator: AsyncIterator<StreamEvent> = {
    next() {
      if (inner) return inner.next();
      if (closed) return Promise.resolve({ done: true as const, value: undefined });
      opening ??= open();
      return opening.then((it) => {
        inner = it;
        return it.next();
      });
    },
    // Leaving early (the loop's break, an interrupt) closes the inner stream, which releases its request.
    return(value?: unknown) {
      closed = true;
      if (inner?.return) return inner.return(value);
      return Promise.resolve({ done: true as const, value: undefined });
    },
  };
  return { [Symbol.asyncIterator]: () => iterator };
}
