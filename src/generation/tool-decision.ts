import type { ToolCallRecord } from "../../protocol/index.js";
import type { ToolDecision } from "../sessions/active-generation.js";

/**
 * One offered tool call of the running generation. `decide` is
 * synchronous and first-wins, so when two clients answer the same call
 * exactly one decision takes effect.
 */
export class PendingToolCall {
  private decision: ToolDecision | undefined;
  private waiter: ((d: ToolDecision) => void) | undefined;
  /** Set once the loop has started running (or settled) this call. */
  started = false;

  constructor(public record: ToolCallRecord) {}

  get decided(): boolean {
    return this.decision !== undefined;
  }

  get current(): ToolDecision | undefined {
    return this.decision;
  }

  /** Returns false when a decision was already taken. */
  decide(decision: ToolDecision): boolean {
    if (this.decision) return false;
    this.decision = decision;
    this.waiter?.(decision);
    return true;
  }

  wait(): Promise<ToolDecision> {
    if (this.decision) return Promise.resolve(this.decision);
    return new Promise((resolve) => {
      this.waiter = resolve;
    });
  }
}
