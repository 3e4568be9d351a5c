/**
 * Records every notification a generated client receives, in arrival order,
 * and waits for a given number of them.
 */
import type { AgentwireClient, NotificationMethod, NotificationParams } from "../../clients/typescript/index.js";

export interface LoggedNotification {
  method: NotificationMethod;
  params: any;
}

export class NotificationLog {
  readonly all: LoggedNotification[] = [];
  readonly #dispose: () => void;
  #waiters: { check: () => boolean; resolve: () => void }[] = [];

  constructor(client: AgentwireClient) {
    this.#dispose = client.onAny((method, params) => {
      this.all.push({ method, params });
      this.#waiters = this.#waiters.filter((w) => (w.check() ? (w.resolve(), false) : true));
    });
  }

  /** Params of the notifications of one method, in arrival order. */
  of<N extends NotificationMethod>(method: N): NotificationParams<N>[] {
    return this.all.filter((n) => n.method === method).map((n) => n.params as NotificationParams<N>);
  }

  /** Notifications that belong to a conversation (everything but `connected`). */
  events(): LoggedNotification[] {
    return this.all.filter((n) => n.method !== "connected");
  }

  /** Resolves once `count` notifications of `method` have arrived; rejects after `timeoutMs`. */
  waitFor(method: NotificationMethod, count: number, timeoutMs = 3000): Promise<void> {
    const check = () => this.all.filter((n) => n.method === method).length >= count;
    if (check()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        const got = this.all.filter((n) => n.method === method).length;
        reject(new Error(`waited for ${count} ${method} notifications, got ${got} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#waiters.push({
        check,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }

  dispose(): void {
    this.#dispose();
  }
}

/** Poll `probe` until it returns true (state the server reaches asynchronously, e.g. after a socket closes). */
export async function eventually(probe: () => Promise<boolean> | boolean, timeoutMs = 3000, what = "condition"): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await probe()) return;
    if (Date.now() > deadline) throw new Error(`${what} not reached within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
