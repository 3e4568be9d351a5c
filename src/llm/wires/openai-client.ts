/**
 * The openai SDK client both OpenAI wires (chat, responses) send through:
 * one per provider, the SDK's own retries off (model-call.ts retries), its
 * errors mapped by openai-errors.ts. Over the node:http transport the
 * streaming call is sent as the SDK would send it (openai-direct.ts), with
 * the SDK's URL and headers worked out without it where that can be done
 * exactly (openai-headers.ts).
 *
 * The SDK's client is therefore loaded (a chunk of its own in the shipped
 * bundle) and made at its first use: the built-in fetch transport, a models
 * list, or headers only the SDK can work out. A one-shot `agentwire chat`
 * sends its one model call without it (issue 27). What it reads of the
 * environment (OPENAI_ORG_ID, OPENAI_PROJECT_ID, OPENAI_CUSTOM_HEADERS, …) is
 * the same whenever it is made: the server never changes its environment.
 */
import type { ClientOptions, OpenAI } from "openai";
import { APIError } from "openai/core/error";
import { toLlmError } from "../openai-errors.js";
import { LlmError, type ChatRequest } from "../provider.js";
import { directSender, sdkRequest } from "./openai-direct.js";
import { sdkRequestWithoutSdk } from "./openai-headers.js";
import type { WireClient, WireConnection } from "./wire.js";

/** One wire's streaming call: its path, its body, and the same call through the SDK. */
export interface OpenAICall<B extends object> {
  /** The path under the base URL, as the SDK's method posts it. */
  path: string;
  body(request: ChatRequest): B;
  /** The body's JSON, exactly JSON.stringify(body(request)) (default: that), for the request sent direct. */
  json?(request: ChatRequest): string;
  /** The SDK's method for it: used when the transport is the built-in fetch. */
  sdk(client: OpenAI, body: B, signal: AbortSignal): Promise<Response>;
}

/** The SDK client's options for one provider (openai-headers.ts must agree with what the SDK sends for them). */
export function sdkClientOptions(connection: WireConnection): ClientOptions {
  return {
    ...(connection.fetch ? { fetch: connection.fetch } : {}),
    apiKey: connection.apiKey,
    baseURL: connection.baseURL,
    ...(connection.headers ? { defaultHeaders: connection.headers } : {}),
    maxRetries: 0,
    timeout: connection.timeoutMs,
    // The SDK logs unparsable chunks to the console; we report them as LlmError instead.
    logLevel: "off",
  };
}

export function connectOpenAI<B extends object>(connection: WireConnection, call: OpenAICall<B>): WireClient {
  let loading: Promise<OpenAI> | undefined;
  const sdkClient = () =>
    (loading ??= import("openai").then(
      ({ default: OpenAI }) => new OpenAI(sdkClientOptions(connection)),
      (error: unknown) => {
        loading = undefined; // the next use tries again
        throw error;
      },
    ));
  const baseURL = connection.baseURL;
  // Over node:http the request goes as the SDK would send it, without its per-request machinery (openai-direct.ts).
  const direct = connection.http
    ? directSender(connection.http, async () => sdkRequestWithoutSdk(connection, call.path) ?? sdkRequest(await sdkClient(), call.path))
    : undefined;
  return {
    send: async (request, signal) => {
      if (!direct) return call.sdk(await sdkClient(), call.body(request), signal);
      return direct.send(call.json ? call.json(request) : JSON.stringify(call.body(request)), signal);
    },
    async listModels(signal, timeoutMs) {
      const noModels = (detail: string) => new LlmError(`the endpoint at ${baseURL} lists no models (${detail})`, "http", 404);
      try {
        const client = await sdkClient();
        const page = await client.models.list({ signal, timeout: timeoutMs });
        const models = page.data.map((model) => ({ id: model.id, ownedBy: model.owned_by || undefined }));
        if (models.length === 0) throw noModels("empty list");
        return models;
      } catch (err) {
        if (signal?.aborted) signal.throwIfAborted();
        if (err instanceof APIError && err.status === 404) {
          const body = err.error as { message?: unknown } | undefined;
          throw noModels(typeof body?.message === "string" ? `404: ${body.message}` : "404");
        }
        throw toLlmError(err, baseURL);
      }
    },
    toLlmError: (err) => toLlmError(err, baseURL),
    // Before a request's clocks start: the SDK's client when the request goes through it, else the direct request's headers.
    ready: () => (direct ? direct.ready() : sdkClient().then(() => undefined)),
  };
}
