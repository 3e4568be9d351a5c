/**
 * The Chat Completions provider under its historical name: a ModelCallProvider
 * on the chat wire. New code picks a wire with createWireProvider
 * (create-provider.ts).
 */
import { ModelCallProvider, type ModelCallOptions } from "./model-call.js";
import { chatWire } from "./wires/chat-wire.js";

export type OpenAIProviderOptions = ModelCallOptions;

export class OpenAIProvider extends ModelCallProvider {
  constructor(options: OpenAIProviderOptions = {}) {
    super(chatWire, options);
  }
}
