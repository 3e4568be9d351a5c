/**
 * The server's HistoryIndex, loaded at the first history.* call: the index
 * and its parsers are ~25 KB of code a server that is never asked about
 * other runtimes' sessions (and every one-shot command) never evaluates.
 */
import type { HistoryConfig } from "../../protocol/config.js";
import type { Logger } from "../logging/logger.js";
import type { HistoryIndex } from "./history-index.js";

/** What the server asks of the index (history-handlers.ts). */
export type History = Pick<HistoryIndex, "enabled" | "sources" | "sessions" | "read" | "close">;

export class LazyHistoryIndex implements History {
  #index: Promise<HistoryIndex> | undefined;
  #closed = false;

  /** The arguments of HistoryIndex's constructor, kept until the first call. */
  constructor(private readonly args: ConstructorParameters<typeof HistoryIndex>) {}

  static of(config: HistoryConfig, log: Logger, env: NodeJS.ProcessEnv, home: string, cacheFile?: string): LazyHistoryIndex {
    return new LazyHistoryIndex([config, log, env, home, cacheFile]);
  }

  get enabled(): boolean {
    return this.args[0].enabled;
  }

  private index(): Promise<HistoryIndex> {
    this.#index ??= import("./history-index.js").then(({ HistoryIndex }) => {
      const index = new HistoryIndex(...this.args);
      if (this.#closed) index.close();
      return index;
    });
    return this.#index;
  }

  async sources(): ReturnType<HistoryIndex["sources"]> {
    return (await this.index()).sources();
  }

  async sessions(): ReturnType<HistoryIndex["sessions"]> {
    return (await this.index()).sessions();
  }

  async read(id: string): ReturnType<HistoryIndex["read"]> {
    return (await this.index()).read(id);
  }

  close(): void {
    this.#closed = true;
    void this.#index?.then((index) => index.close());
  }
}
