/**
 * One live connection to the server that survives drops: it reconnects with
 * backoff and tells the app each time a new client is ready, so the app can
 * resubscribe with `afterSeq`. The socket URL is the page's own origin (the
 * server allows its own origin without any flag).
 *
 * Browsers do not expose the HTTP status of a refused upgrade (a 401 and a
 * dead server both look like close code 1006), so a connection that never
 * opens is reported as `refused`: the app then offers a token field, which is
 * harmless when the server was merely down.
 */
import { AgentwireClient } from "../typescript/index.js";

export type ConnectionState =
  | { kind: "connecting" }
  | { kind: "connected"; client: AgentwireClient }
  | { kind: "reconnecting"; attempt: number; refused: boolean };

export interface ConnectionOptions {
  url: string;
  /** Read at every attempt: the user may enter one while we retry. */
  token: () => string | undefined;
  onState: (state: ConnectionState) => void;
}

/** Quick first retries (a dropped socket usually comes back at once), then slower. */
const BACKOFF_MS = [150, 300, 600, 1200, 2500, 5000];

export class Connection {
  #client: AgentwireClient | undefined;
  #attempt = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** An attempt is under way: a second one would open a second socket. */
  #connecting = false;

  constructor(private readonly options: ConnectionOptions) {}

  start(): void {
    this.options.onState({ kind: "connecting" });
    void this.#connect();
  }

  /** Try again now (e.g. after a token was entered) instead of waiting for the backoff. */
  retryNow(): void {
    if (this.#client || this.#connecting) return;
    clearTimeout(this.#timer);
    void this.#connect();
  }

  async #connect(): Promise<void> {
    this.#timer = undefined;
    this.#connecting = true;
    let client: AgentwireClient;
    try {
      client = await AgentwireClient.connect(this.options.url, {
        token: this.options.token() || undefined,
        clientInfo: { name: "agentwire-web", version: "1" },
        requestTimeoutMs: 15_000,
      });
    } catch {
      this.#scheduleRetry(true);
      return;
    } finally {
      this.#connecting = false;
    }
    this.#attempt = 0;
    this.#client = client;
    client.onClose(() => {
      if (this.#client !== client) return;
      this.#client = undefined;
      this.#scheduleRetry(false);
    });
    this.options.onState({ kind: "connected", client });
  }

  #scheduleRetry(refused: boolean): void {
    if (this.#timer) return;
    const delay = BACKOFF_MS[Math.min(this.#attempt, BACKOFF_MS.length - 1)];
    this.#attempt++;
    this.options.onState({ kind: "reconnecting", attempt: this.#attempt, refused });
    this.#timer = setTimeout(() => void this.#connect(), delay);
  }
}
