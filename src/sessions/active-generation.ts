import type { PendingTool } from "../../protocol/index.js";

/** The code and message of an `error` that ends a generation. */
export interface GenerationEnding {
  code: number;
  message: string;
}

/** How a pending tool call was settled. */
export type ToolDecision =
  | { action: "confirm" }
  | { action: "edit"; arguments: Record<string, unknown> }
  | { action: "skip"; message?: string }
  | { action: "interrupted" };

/** Where an offered call stands: waiting, decided but not yet run, or run (or settled) by the loop. */
export interface OfferedCallState {
  toolName: string;
  /** The arguments it was offered with (what a remembered rule is computed from). */
  arguments: Record<string, unknown>;
  stage: "undecided" | "decided" | "started";
  /** For a decided or started call: the decision's action, or the record's status. */
  status: string;
  /** Set for an agent runtime's own call (its approval question): it takes confirm or skip only. */
  runBy?: "runtime";
}

/**
 * What the rest of the server sees of a running generation (the loop
 * implements it): enough to show its state, settle its tool calls and stop
 * it, without knowing how the loop works.
 */
export interface ActiveGeneration {
  readonly id: string;
  pendingTools(): PendingTool[];
  /** The state of a call this generation offered; undefined when it did not offer it. */
  offered(toolCallId: string): OfferedCallState | undefined;
  /**
   * Settle an offered call. Synchronous and first-wins, so when two clients
   * answer the same call exactly one decision takes effect: false for the other.
   */
  decide(toolCallId: string, decision: ToolDecision): boolean;
  /** Confirm every still-undecided call that the auto-confirm budgets allow (after tool.confirm "auto"). */
  autoConfirmWaiting(): void;
  /** Confirm every still-undecided call `matches` accepts (after tool.confirm stored a remembered rule). */
  confirmWaiting(matches: (toolName: string, args: Record<string, unknown>) => boolean): void;
  /** Stop everything; resolves once the generation has fully ended. */
  interrupt(): Promise<void>;
  /**
   * Stop, keeping calls that have not run pending (a server shutdown, for the
   * next process; interrupt keepPending, for the next step).
   */
  shutdown(): Promise<void>;
  /**
   * Stop because this instance no longer owns the conversation (cluster
   * mode): nothing more is written (calls not run stay pending, a reply
   * being streamed is not stored), and the generation ends with one `error`
   * carrying `ending`. Resolves once it has fully ended.
   */
  abandon(ending: GenerationEnding): Promise<void>;
}
