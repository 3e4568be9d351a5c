/**
 * Every wire, by the name a provider's `wire` setting gives (the names are
 * protocol/config-providers.ts's WireName). A new model API is one
 * implementation file plus one entry here; the compiler refuses a name
 * without an entry.
 */
import type { WireName } from "../../../protocol/config-providers.js";
import { anthropicWire } from "./anthropic-wire.js";
import { chatWire } from "./chat-wire.js";
import type { ResponsesWireOptions } from "./responses-request.js";
import { createResponsesWire } from "./responses-wire.js";
import type { Wire } from "./wire.js";

/** What a wire may read from its provider's options (only the responses wire reads any today). */
export type WireOptions = ResponsesWireOptions;

export const WIRES: { readonly [name in WireName]: (options: WireOptions) => Wire } = {
  chat: () => chatWire,
  responses: (options) => createResponsesWire({ encryptedReasoning: options.encryptedReasoning }),
  anthropic: () => anthropicWire,
};
