/**
 * Records the notifications a generated client receives — every one, or only
 * those of one conversation — in arrival order, with ways to wait for the
 * ones a test expects. `connected` is the connection's own greeting, not an
 * event, and is never recorded.
 */
import type { AgentwireClient, NotificationMethod, NotificationParams } from "../../clients/typescript/index.js";

export interface RecordedEvent {
  method: NotificationMethod;
  params: any;
}

export class EventRecorder {
  readonly events: RecordedEvent[] = [];
  private waiters: { test: (e: RecordedEvent) => boolean; resolve: (e: RecordedEvent) => void }[] = [];
  readonly dispose: () => void;

  /** With a `conversationId`, only that conversation's events are recorded. */
  constructor(client: AgentwireClient, readonly conversationId?: string) {
    this.dispose = client.onAny((method, params: any) => {
      if (method === "connected") return;
      if (conversationId !== undefined && params?.conversationId !== conversationId) return;
      const event = { method, params };
      this.events.push(event);
      this.waiters = this.waiters.filter((w) => {
        if (!w.test(event)) return true;
        w.resolve(event);
        return false;
      });
    });
  }

  /** Params of the events of one method, in arrival order. */
  of<N extends NotificationMethod>(method: N): NotificationParams<N>[] {
    return this.events.filter((e) => e.method === method).map((e) => e.params as NotificationParams<N>);
  }

  /** The first event (already seen or future) after index `from` matching the test. */
  waitFor(test: (e: RecordedEvent) => boolean, timeoutMs = 5000, from = 0): Promise<RecordedEvent> {
    const seen = this.events.slice(from).find(test);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for an event; saw: ${this.methods().join(", ")}`));
      }, timeoutMs);
      const waiter = {
        test,
        resolve: (e: RecordedEvent) => {
          clearTimeout(timer);
          resolve(e);
        },
      };
      this.waiters.push(waiter);
    });
  }

  waitForMethod(method: NotificationMethod, timeoutMs?: number, from = 0): Promise<RecordedEvent> {
    return this.waitFor((e) => e.method === method, timeoutMs, from);
  }

  /** Resolves once `count` events of `method` have arrived in all. */
  async waitForCount(method: NotificationMethod, count: number, timeoutMs = 5000): Promise<void> {
    const enough = () => this.of(method).length >= count;
    if (enough()) return;
    await this.waitFor(enough, timeoutMs).catch((error: Error) => {
      throw new Error(`waited for ${count} ${method} events, got ${this.of(method).length}: ${error.message}`);
    });
  }

  /** Resolves when the generation has ended (final complete, interrupted or error). */
  waitForEnd(generationId: string, timeoutMs = 5000): Promise<RecordedEvent> {
    return this.waitFor(
      (e) =>
        e.params.generationId === generationId &&
        ((e.method === "generation_complete" && e.params.final) || e.method === "interrupted" || e.method === "error"),
      timeoutMs,
    );
  }

  methods(): string[] {
    return this.events.map((e) => e.method);
  }

  /** Methods with consecutive generation_progress / tool_output collapsed, for readable sequence checks. */
  flow(): string[] {
    const out: string[] = [];
    for (const m of this.methods()) if (!((m === "generation_progress" || m === "tool_output") && out.at(-1) === m)) out.push(m);
    return out;
  }
}
