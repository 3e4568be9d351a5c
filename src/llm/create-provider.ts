/**
 * The one way to get an LlmProvider for a model endpoint: pick the wire the
 * endpoint speaks; retries, timeouts and error mapping are the same for all
 * (model-call.ts).
 */
import { ModelCallProvider, type ModelCallOptions } from "./model-call.js";
import type { LlmProvider } from "./provider.js";
import { chatWire } from "./wires/chat-wire.js";
import type { ResponsesWireOptions } from "./wires/responses-request.js";
import { createResponsesWire } from "./wires/responses-wire.js";
import type { WireName } from "./wires/wire.js";

export type { WireName } from "./wires/wire.js";

/** Connection and retry options (see ModelCallOptions), plus what only the responses wire reads. */
export interface WireProviderOptions extends ModelCallOptions, ResponsesWireOptions {}

/**
 * "chat": Chat Completions (`/chat/completions`), which every OpenAI-compatible
 * server speaks. "responses": the Responses API (`/responses`), stateless
 * (`store: false`), with reasoning summaries and encrypted reasoning carried
 * across turns.
 */
export function createWireProvider(wire: WireName, options: WireProviderOptions = {}): LlmProvider {
  switch (wire) {
    case "chat":
      return new ModelCallProvider(chatWire, options);
    case "responses":
      return new ModelCallProvider(createResponsesWire({ encryptedReasoning: options.encryptedReasoning }), options);
    default:
      throw new Error(`unknown wire ${JSON.stringify(wire)}: expected "chat" or "responses"`);
  }
}
