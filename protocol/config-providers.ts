/**
 * Model providers (agentwire.json `providers`): named endpoints, each with
 * the wire protocol it speaks and the models it serves with what each can
 * do. A model is addressed as `provider/model`; a bare name goes to the
 * default provider. The environment's endpoint (OPENAI_BASE_URL,
 * OPENAI_API_KEY, `llm.*`) is the provider named `default` unless a
 * provider of that name is declared here. src/llm/provider-registry.ts
 * reads these definitions.
 */
import * as z from "zod";
// Types .meta({ defaultText }) (see config-meta.ts).
import type {} from "./config-meta.js";
import { ModelPricing } from "./model-pricing.js";

import { PROVIDER_NAME_PATTERN } from "./provider-defaults.js";

export { ENV_PROVIDER_NAME, KEYLESS_HINT, OPENAI_DEFAULT_BASE_URL, PROVIDER_NAME_PATTERN } from "./provider-defaults.js";

export const ProviderName = z
  .string()
  .regex(PROVIDER_NAME_PATTERN)
  .describe("Provider name: letters, digits, _ and -, at most 32. Its models are addressed as <name>/<model>.");

export const ReasoningEffort = z.enum(["low", "medium", "high"]).describe("A reasoning effort a model accepts.");

export const ModelCapabilitiesConfig = z
  .strictObject({
    tools: z
      .boolean()
      .default(true)
      .describe("The model takes tools (function calling). A model without tools only runs in conversations whose settings.toolPolicy denies every tool."),
    imageInput: z.boolean().default(false).describe("The model takes images in user messages."),
    reasoning: z
      .union([z.boolean(), z.array(ReasoningEffort).min(1)])
      .default(false)
      .describe("The reasoning efforts the model takes: true for low, medium and high; a list for only those; false for none. \"off\" is always accepted (it sends nothing)."),
    temperature: z.boolean().default(true).describe("The model takes a sampling temperature (reasoning models often refuse one)."),
    reasoningContent: z
      .boolean()
      .default(false)
      .describe(
        "The endpoint wants the model's earlier thinking back (DeepSeek's thinking mode: a 400 without it after tool calls): each stored reasoning record is sent as `reasoning_content` on the assistant message after it (chat wire). Default false: earlier thinking is not sent (a strict endpoint may refuse the field).",
      ),
    maxOutputTokens: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe("Most tokens the model writes in one answer; a larger maxTokens is refused.")
      .meta({ defaultText: "no limit known" }),
    contextWindow: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(
        "The model's context window in tokens, as reported by models.list and usage_updated's context.windowTokens (informational: agentwire bounds requests by limits.maxContextBytes). A conversation filling 80 % of it gets a context_nearly_full notice, and one whose next request would pass its settings.autoCompact share of it (default 0.85) is compacted first; without it there is no automatic compaction but after the endpoint refuses a request as too long.",
      ),
    pricing: ModelPricing.optional().describe(ModelPricing.description!).meta({ defaultText: "none: costs are null" }),
  })
  .describe("What one model can do. Every key is optional; a model not declared at all has unknown capabilities and nothing is refused for it.");

/** The model APIs a provider can speak: the one list of wire names (src/llm/wires/wire-table.ts implements each). */
export const WireName = z
  .enum(["chat", "responses", "anthropic"])
  .describe(
    "The API a provider speaks: chat (Chat Completions, what every OpenAI-compatible server offers), responses (OpenAI's Responses API) or anthropic (Anthropic's Messages API).",
  );
export type WireName = z.infer<typeof WireName>;


export const ProviderDefinition = z
  .strictObject({
    wire: WireName.default("chat").describe(
      "The API it speaks: chat (Chat Completions, what every OpenAI-compatible server offers), responses (OpenAI's Responses API) or anthropic (Anthropic's Messages API, through @anthropic-ai/sdk).",
    ),
    baseUrl: z
      .string()
      .url()
      .describe(
        "Its endpoint, e.g. https://api.openai.com/v1 or http://localhost:11434/v1; for the anthropic wire https://api.anthropic.com (a trailing /v1 is taken off: the SDK adds /v1/messages).",
      ),
    apiKey: z.string().min(1).optional().describe("Its API key. Secret: prefer apiKeyEnv."),
    apiKeyEnv: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
      .optional()
      .describe(
        "Name of the environment variable holding its API key; wins over apiKey. The server refuses to start when it is not set. Leave both out for an endpoint that takes no key (Ollama, llama.cpp).",
      ),
    headers: z
      .record(z.string().min(1), z.string())
      .optional()
      .describe("Extra headers sent with every request (e.g. OpenRouter's HTTP-Referer, an organization id). Secret: values are masked by `agentwire config`."),
    models: z
      .record(z.string().min(1).max(200), ModelCapabilitiesConfig)
      .optional()
      .describe("Its models, by the id the endpoint knows them by, with their capabilities. models.list shows them along with what the endpoint's /models route reports."),
    onlyListedModels: z
      .boolean()
      .default(false)
      .describe("Refuse models not declared under `models` (false: an undeclared model is allowed, with unknown capabilities)."),
  })
  .describe("One model provider.");

export const ProvidersConfig = z
  .record(ProviderName, ProviderDefinition)
  .describe("Model providers by name. A model is addressed as <provider>/<model>; a bare model name goes to defaultProvider.");

/**
 * As written in a file or by hand (defaults may be left out);
 * src/llm/provider-registry.ts parses what it is given, which applies them.
 */
export type ProviderDefinition = z.input<typeof ProviderDefinition>;
export type ProvidersConfig = z.input<typeof ProvidersConfig>;
export type ModelCapabilitiesConfig = z.input<typeof ModelCapabilitiesConfig>;
export type ReasoningEffort = z.infer<typeof ReasoningEffort>;
