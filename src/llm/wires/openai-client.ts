/**
 * The openai SDK client both OpenAI wires (chat, responses) send through:
 * one per provider, the SDK's own retries off (model-call.ts retries), its
 * errors mapped by openai-errors.ts. Over the node:http transport the
 * streaming call is sent as the SDK would send it (openai-direct.ts).
 */
import OpenAI from "openai";
import { toLlmError } from "../openai-errors.js";
import { LlmError, type ChatRequest } from "../provider.js";
import { directSender } from "./openai-direct.js";
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

export function connectOpenAI<B extends object>(connection: WireConnection, call: OpenAICall<B>): WireClient {
  const client = new OpenAI({
    ...(connection.fetch ? { fetch: connection.fetch } : {}),
    apiKey: connection.apiKey,
    baseURL: connection.baseURL,
    ...(connection.headers ? { defaultHeaders: connection.headers } : {}),
    maxRetries: 0,
    timeout: connection.timeoutMs,
    // The SDK logs unparsable chunks to the console; we report them as LlmError instead.
    logLevel: "off",
  });
  const baseURL = connection.baseURL;
  // Over node:http the request goes as the SDK would send it, without its per-request machinery (openai-direct.ts).
  const direct = connection.http ? directSender(client, connection.http, call.path) : undefined;
  return {
    send: (request, signal) => {
      if (!direct) return call.sdk(client, call.body(request), signal);
      return direct(call.json ? call.json(request) : JSON.stringify(call.body(request)), signal);
    },
    async listModels(signal, timeoutMs) {
      const noModels = (detail: string) => new LlmError(`the endpoint at ${baseURL} lists no models (${detail})`, "http", 404);
      try {
        const page = await client.models.list({ signal, timeout: timeoutMs });
        const models = page.data.map((model) => ({ id: model.id, ownedBy: model.owned_by || undefined }));
        if (models.length === 0) throw noModels("empty list");
        return models;
      } catch (err) {
        if (signal?.aborted) signal.throwIfAborted();
        if (err instanceof OpenAI.APIError && err.status === 404) {
          const body = err.error as { message?: unknown } | undefined;
          throw noModels(typeof body?.message === "string" ? `404: ${body.message}` : "404");
        }
        throw toLlmError(err, baseURL);
      }
    },
    toLlmError: (err) => toLlmError(err, baseURL),
  };
}
