/**
 * What every runtime session keeps for its running turn, whatever drives the
 * agent underneath: the pull queue the turn's events go out through, the
 * promise `wait()` answers, and the tool calls seen so far with whether they
 * were announced to agentwire yet (a call may show first as an approval, as
 * output, or only when it finished; tool_started goes out once).
 */
import type { RuntimeEvent } from "./runtime.js";

/** A pull queue of one turn's events, ended by its `done`. */
export class EventQueue {
  private readonly items: RuntimeEvent[] = [];
  private wake: (() => void) | undefined;
  private closed = false;

  push(event: RuntimeEvent): void {
    if (this.closed) return;
    this.items.push(event);
    if (event.type === "done") this.closed = true;
    this.wake?.();
  }

  async *drain(): AsyncIterable<RuntimeEvent> {
    for (;;) {
      const next = this.items.shift();
      if (next) {
        yield next;
        if (next.type === "done") return;
        continue;
      }
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
      this.wake = undefined;
    }
  }
}

/** A tool call of the runtime's, announced to agentwire (approval or tool_started) or not yet. */
export interface ToolCallState {
  toolName: string;
  arguments: Record<string, unknown>;
  announced: boolean;
}

/** One session's turn bookkeeping: at most one turn at a time. */
export class TurnChannel {
  private queue: EventQueue | undefined;
  private idle: Promise<void> = Promise.resolve();
  private settle: (() => void) | undefined;
  /** This turn's tool calls by id. */
  readonly calls = new Map<string, ToolCallState>();

  /** Whether a turn is running (has not sent its `done`). */
  get running(): boolean {
    return this.queue !== undefined;
  }

  /** Start a turn (the caller checks none is running): its events, to hand back from `turn()`. */
  begin(): AsyncIterable<RuntimeEvent> {
    const queue = new EventQueue();
    this.queue = queue;
    this.calls.clear();
    this.idle = new Promise((resolve) => {
      this.settle = resolve;
    });
    return queue.drain();
  }

  /** Resolves when no turn is running. */
  wait(): Promise<void> {
    return this.idle;
  }

  emit(event: RuntimeEvent): void {
    this.queue?.push(event);
  }

  /** Announce a known call as running, once. */
  announce(id: string): void {
    const call = this.calls.get(id);
    if (!call || call.announced) return;
    call.announced = true;
    this.emit({ type: "tool_started", callId: id, toolName: call.toolName, arguments: call.arguments });
  }

  /** End the running turn with `done` (nothing when none runs); `cleanup` runs first, once the turn counts as ended. */
  finish(done: RuntimeEvent & { type: "done" }, cleanup?: () => void): void {
    const queue = this.queue;
    if (!queue) return;
    this.queue = undefined;
    cleanup?.();
    queue.push(done);
    this.settle?.();
  }
}
