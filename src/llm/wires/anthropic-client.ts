/**
 * The @anthropic-ai/sdk client the anthropic wire sends through. The SDK is
 * loaded on the first request (a separate chunk of the shipped bundle): a
 * server whose providers all speak OpenAI's APIs never loads it.
 *
 * The client is told everything (key, base URL, no OpenTelemetry) so it
 * reads nothing of the environment (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL,
 * profiles): the provider configuration is the one source. Its retries are
 * off; model-call.ts retries.
 */
import type Anthropic from "@anthropic-ai/sdk";
import { causeCode, causeMessage, retryHeaders, toLlmError } from "../openai-errors.js";
import { LlmError, type ChatRequest, type ModelInfo } from "../provider.js";
import { anthropicRequestBody } from "./anthropic-request.js";
import type { WireClient, WireConnection } from "./wire.js";

type Sdk = typeof import("@anthropic-ai/sdk");

/**
 * The SDK's base URL is the host (it adds /v1/messages); a configured
 * `…/v1`, as OpenAI base URLs are written, is taken off rather than doubled.
 */
export function anthropicBaseURL(baseURL: string): string {
  return baseURL.replace(/\/+$/, "").replace(/\/v1$/, "");
}

/**
 * Anthropic's rate-limit headers (`anthropic-ratelimit-requests-remaining`,
 * …-tokens-reset) under the names the rate_limited notice reads
 * (`x-ratelimit-remaining-requests`, `x-ratelimit-reset-tokens`).
 */
function rateLimitHeaders(headers: Headers | undefined): Record<string, string> | undefined {
  const kept = { ...retryHeaders(headers) };
  headers?.forEach((value, name) => {
    const match = /^anthropic-ratelimit-(.+)-(limit|remaining|reset)$/.exec(name.toLowerCase());
    if (match) kept[`x-ratelimit-${match[2]}-${match[1]}`] = value;
  });
  return Object.keys(kept).length > 0 ? kept : undefined;
}

/** What the SDK throws, as an LlmError: the API's error body is `{type: "error", error: {type, message}}`; its type is the code. */
function anthropicError(sdk: Sdk, err: unknown, baseURL: string): LlmError {
  if (err instanceof LlmError) return err;
  if (err instanceof sdk.APIConnectionTimeoutError) return new LlmError(`the model endpoint at ${baseURL} did not answer in time`, "timeout");
  if (err instanceof sdk.APIUserAbortError) return new LlmError(`the request to the model endpoint at ${baseURL} was aborted`, "connection");
  if (err instanceof sdk.APIConnectionError) {
    return new LlmError(`cannot reach the model endpoint at ${baseURL}: ${causeCode(err) ?? causeMessage(err)}`, "connection");
  }
  if (err instanceof sdk.APIError) {
    const body = err.error as { error?: { type?: unknown; message?: unknown } } | undefined;
    const detail = typeof body?.error?.message === "string" && body.error.message !== "" ? body.error.message : err.message;
    const code = typeof body?.error?.type === "string" ? body.error.type : undefined;
    if (err.status === undefined) return new LlmError(`the model endpoint reported an error mid-stream: ${detail}`, "http", undefined, undefined, code);
    return new LlmError(`the model endpoint answered ${err.status}: ${detail}`, "http", err.status, rateLimitHeaders(err.headers), code);
  }
  return toLlmError(err, baseURL);
}

export function connectAnthropic(connection: WireConnection): WireClient {
  const baseURL = anthropicBaseURL(connection.baseURL);
  let sdk: Sdk | undefined;
  let loading: Promise<{ sdk: Sdk; client: Anthropic }> | undefined;
  const client = () =>
    (loading ??= import("@anthropic-ai/sdk").then((loaded) => {
      sdk = loaded;
      const client = new loaded.default({
        ...(connection.fetch ? { fetch: connection.fetch } : {}),
        apiKey: connection.apiKey,
        baseURL,
        ...(connection.headers ? { defaultHeaders: connection.headers } : {}),
        maxRetries: 0,
        timeout: connection.timeoutMs,
        openTelemetry: false,
        logLevel: "off",
      });
      return { sdk: loaded, client };
    }));
  const toError = (err: unknown) => (sdk ? anthropicError(sdk, err, baseURL) : toLlmError(err, baseURL));
  return {
    async send(request: ChatRequest, signal: AbortSignal) {
      const { client: anthropic } = await client();
      return anthropic.messages.create(anthropicRequestBody(request), { signal }).asResponse();
    },
    async listModels(signal, timeoutMs): Promise<ModelInfo[]> {
      try {
        const { client: anthropic } = await client();
        const page = await anthropic.models.list({ limit: 1000 }, { signal, timeout: timeoutMs });
        const models = page.data.map((model) => ({ id: model.id }));
        if (models.length === 0) throw new LlmError(`the endpoint at ${baseURL} lists no models (empty list)`, "http", 404);
        return models;
      } catch (err) {
        if (signal?.aborted) signal.throwIfAborted();
        const error = toError(err);
        if (error.status === 404) throw new LlmError(`the endpoint at ${baseURL} lists no models (${error.message})`, "http", 404);
        throw error;
      }
    },
    toLlmError: toError,
    ready: async () => void (await client()),
  };
}
