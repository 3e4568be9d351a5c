/**
 * ACP session modes are agentwire's modes (modes.list: ask, plan, code,
 * auto and the configuration's own): a session's current mode is its
 * conversation's settings.mode (absent: the default), session/set_mode is
 * conversation.update { mode }, and a change made anywhere (another client,
 * a command's front matter) reaches the editor as current_mode_update.
 */
import type * as acp from "@agentclientprotocol/sdk";
import type { AgentwireClient, Conversation, ModesListResult } from "../../clients/typescript/index.js";

export class SessionModes {
  #list: Promise<ModesListResult | undefined> | undefined;

  constructor(private readonly client: AgentwireClient) {}

  /** modes.list is the server's configuration: asked once per process (undefined when it cannot say). */
  #modes(): Promise<ModesListResult | undefined> {
    this.#list ??= this.client.modes.list().catch(() => undefined);
    return this.#list;
  }

  /** The conversation's mode id as ACP names it. */
  static current(conversation: Conversation, defaultMode: string): string {
    return conversation.settings.mode ?? defaultMode;
  }

  async default(): Promise<string | undefined> {
    return (await this.#modes())?.default;
  }

  /** What session/new, load and resume answer as `modes`; null when the server lists none. */
  async state(conversation: Conversation): Promise<acp.SessionModeState | null> {
    const list = await this.#modes();
    if (!list || list.modes.length === 0) return null;
    return {
      currentModeId: SessionModes.current(conversation, list.default),
      availableModes: list.modes.map((m) => ({ id: m.id, name: m.name, ...(m.description ? { description: m.description } : {}) })),
    };
  }

  /** session/set_mode: an unknown mode is the server's -32602, naming it. */
  async set(conversationId: string, modeId: string): Promise<void> {
    await this.client.conversation.update({ conversationId, mode: modeId });
  }
}
