/**
 * The openai SDK client both OpenAI wires (chat, responses) send through:
 * one per provider, the SDK's own retries off (model-call.ts retries), its
 * errors mapped by openai-errors.ts.
 */
import OpenAI from "openai";
import { toLlmError } from "../openai-errors.js";
import { LlmError, type ChatRequest } from "../provider.js";
import type { WireClient, WireConnection } from "./wire.js";

export function connectOpenAI(
  connection: WireConnection,
  send: (client: OpenAI, request: ChatRequest, signal: AbortSignal) => Promise<Response>,
): WireClient {
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
  return {
    send: (request, signal) => send(client, request, signal),
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
