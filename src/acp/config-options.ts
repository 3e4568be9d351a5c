/**
 * Session config options (ACP's selectors an editor shows beside the
 * prompt): the conversation's model and its reasoning effort, each set with
 * conversation.update.
 * Modes are ACP's session modes, not an option here (session-modes.ts): an editor shows
 * them in its mode picker.
 */
import type * as acp from "@agentclientprotocol/sdk";
import { RequestError } from "@agentclientprotocol/sdk";
import type { AgentwireClient, Conversation } from "../../clients/typescript/index.js";

export const MODEL_OPTION = "model";
export const REASONING_OPTION = "reasoning";
/** The reasoning value that leaves the effort unset (the model's default). */
const DEFAULT_REASONING = "default";
const REASONING_VALUES = [DEFAULT_REASONING, "off", "low", "medium", "high"] as const;
/** Longest a session's answer waits for models.list (the model option then lists the current model only). */
const MODELS_WAIT_MS = 2000;

export class ConfigOptions {
  #models: Promise<{ ids: string[]; defaultModel: string | null }> | undefined;

  constructor(private readonly client: AgentwireClient) {}

  /**
   * models.list asks every provider: once per process (a failure leaves only the current model to
   * show), and a session does not wait more than MODELS_WAIT_MS for a slow provider's answer.
   */
  #knownModels(): Promise<{ ids: string[]; defaultModel: string | null }> {
    this.#models ??= this.client.models
      .list()
      .then((list) => ({ ids: list.models.map((m) => m.id), defaultModel: list.defaultModel }))
      .catch(() => ({ ids: [], defaultModel: null }));
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<{ ids: string[]; defaultModel: null }>((resolve) => {
      timer = setTimeout(() => resolve({ ids: [], defaultModel: null }), MODELS_WAIT_MS);
    });
    return Promise.race([this.#models, late]).finally(() => clearTimeout(timer));
  }

  async of(conversation: Conversation): Promise<acp.SessionConfigOption[]> {
    const { ids, defaultModel } = await this.#knownModels();
    const current = conversation.model ?? defaultModel ?? "";
    const models = [...new Set([...(current ? [current] : []), ...ids])];
    const reasoning = conversation.settings.reasoning ?? DEFAULT_REASONING;
    const options: acp.SessionConfigOption[] = [];
    if (models.length > 0) {
      options.push({ type: "select", id: MODEL_OPTION, name: "Model", category: "model", currentValue: current, options: models.map((id) => ({ value: id, name: id })) });
    }
    options.push({
      type: "select",
      id: REASONING_OPTION,
      name: "Reasoning effort",
      category: "thought_level",
      currentValue: reasoning,
      options: REASONING_VALUES.map((value) => ({ value, name: value === DEFAULT_REASONING ? "model default" : value })),
    });
    return options;
  }

  /** session/set_config_option → conversation.update; answers the options as they are now. */
  async set(conversationId: string, configId: string, value: string | boolean): Promise<acp.SessionConfigOption[]> {
    if (typeof value !== "string") throw RequestError.invalidParams({ path: "value" }, `value: ${configId} takes a value id, not a boolean`);
    let conversation: Conversation;
    if (configId === MODEL_OPTION) {
      conversation = await this.client.conversation.update({ conversationId, model: value });
    } else if (configId === REASONING_OPTION) {
      if (!(REASONING_VALUES as readonly string[]).includes(value)) {
        throw RequestError.invalidParams({ path: "value" }, `value: reasoning must be one of ${REASONING_VALUES.join(", ")}`);
      }
      conversation = await this.client.conversation.update({
        conversationId,
        settings: { reasoning: value === DEFAULT_REASONING ? null : (value as "off") },
      });
    } else {
      throw RequestError.invalidParams({ path: "configId" }, `configId: no option "${configId}" (there are ${MODEL_OPTION} and ${REASONING_OPTION})`);
    }
    return this.of(conversation);
  }
}
