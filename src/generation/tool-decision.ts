import type { FileChange, ToolCallRecord } from "../../protocol/index.js";
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
  /** Set when the confirmation timeout skipped it (its decision is then a skip): the wait it was given, in ms. */
  timedOutAfterMs: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** What the call would change, as tool_pending showed it (Tool.preview); undefined when its tool cannot tell. */
  changes: FileChange[] | undefined;
  /** The generation's change count (GenerationDiff.count) when `changes` was computed. */
  changesAt = 0;

  /** Undoes what the call's tool prepared while it waited (Tool.prepare), when no run used it. */
  private unprepare: (() => void) | undefined;

  constructor(public record: ToolCallRecord) {}

  /** Keep what undoes the tool's preparation for this call. */
  prepared(undo: () => void): void {
    this.unprepare = undo;
  }

  /** The round is over: undo the preparation (nothing happens when the run used it). */
  dropPreparation(): void {
    const undo = this.unprepare;
    this.unprepare = undefined;
    undo?.();
  }

  /**
   * Skip the call if it is still undecided after `ms` (settings.confirmTimeoutMs).
   * Any decision cancels the timer, and so does `dispose`.
   */
  startTimeout(ms: number): void {
    if (this.decision || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.decision) return;
      this.timedOutAfterMs = ms;
      this.decide({ action: "skip" });
    }, ms);
  }

  /** Cancel the confirmation timer, if any (the round is over; nothing may fire after the generation ends). */
  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

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
    this.dispose();
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
