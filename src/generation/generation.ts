import type { ConversationSettings, PendingTool } from "../../protocol/index.js";
import type { ModelControls } from "../llm/provider.js";
import type { ActiveGeneration, OfferedCallState, ToolDecision } from "../sessions/active-generation.js";
import type { ConversationRuntime } from "../sessions/conversation-runtime.js";
import { PendingToolCall } from "./tool-decision.js";

export type GenerationPhase = "starting" | "streaming" | "pending" | "executing";

/**
 * `step`'s overrides of the conversation's generation settings: absent keeps
 * the conversation's, null means "send none" for this step.
 */
export interface StepControls {
  temperature?: number | null;
  maxTokens?: number | null;
  reasoning?: ModelControls["reasoning"] | null;
}

/**
 * The state of one running generation: its abort signal (threaded to the
 * HTTP stream and to every tool process), its phase, its offered tool
 * calls, and the promise that settles when it has fully ended.
 */
export class Generation implements ActiveGeneration {
  readonly controller = new AbortController();
  phase: GenerationPhase = "starting";
  /** Offered calls of the current round, by toolCallId, in offer order. */
  readonly calls = new Map<string, PendingToolCall>();
  /** Tool uses this step may still run without asking (`step` autoConfirm). */
  private stepAutoConfirm: number;
  /** Set by shutdown: calls not yet run stay pending on disk, to be offered again after a restart. */
  keepPending = false;
  private finish!: () => void;
  readonly done: Promise<void>;
  private ended = false;

  constructor(
    readonly id: string,
    readonly model: string,
    autoConfirm: boolean | number | undefined,
    private readonly runtime: ConversationRuntime,
    private readonly stepControls: StepControls = {},
  ) {
    this.stepAutoConfirm = autoConfirm === true ? Number.POSITIVE_INFINITY : typeof autoConfirm === "number" ? autoConfirm : 0;
    this.done = new Promise((resolve) => {
      this.finish = resolve;
    });
  }

  /**
   * The controls of one model call: the step's overrides over the
   * conversation's settings, read at each call (a conversation.update made
   * during the step applies to its next model call, as toolHistoryRounds does).
   */
  modelControls(settings: ConversationSettings): ModelControls {
    const pick = <K extends keyof StepControls>(key: K) => {
      const value = this.stepControls[key] !== undefined ? this.stepControls[key] : settings[key];
      return value ?? undefined;
    };
    const controls: ModelControls = {};
    const temperature = pick("temperature");
    const maxTokens = pick("maxTokens");
    const reasoning = pick("reasoning");
    if (temperature !== undefined) controls.temperature = temperature;
    if (maxTokens !== undefined) controls.maxTokens = maxTokens;
    if (reasoning !== undefined) controls.reasoning = reasoning;
    return controls;
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get interrupted(): boolean {
    return this.controller.signal.aborted;
  }

  pendingTools(): PendingTool[] {
    const out: PendingTool[] = [];
    for (const call of this.calls.values()) {
      if (!call.decided) {
        out.push({ toolCallId: call.record.toolCallId, toolName: call.record.toolName, arguments: call.record.arguments });
      }
    }
    return out;
  }

  offered(toolCallId: string): OfferedCallState | undefined {
    const call = this.calls.get(toolCallId);
    if (!call) return undefined;
    const stage = call.started ? "started" : call.decided ? "decided" : "undecided";
    return { toolName: call.record.toolName, stage, status: call.current?.action ?? call.record.status };
  }

  decide(toolCallId: string, decision: ToolDecision): boolean {
    const call = this.calls.get(toolCallId);
    return call !== undefined && !call.started && call.decide(decision);
  }

  autoConfirmWaiting(): void {
    for (const call of this.calls.values()) {
      if (!call.decided && this.takeAutoConfirm()) call.decide({ action: "confirm" });
    }
  }

  /** Consume one unit of auto-confirm budget: the step's first, then the conversation's. */
  takeAutoConfirm(): boolean {
    if (this.stepAutoConfirm > 0) {
      this.stepAutoConfirm--;
      return true;
    }
    if (this.runtime.autoConfirmRemaining > 0) {
      this.runtime.autoConfirmRemaining--;
      return true;
    }
    return false;
  }

  /** Stop for a server shutdown: like interrupt, but undecided calls are kept, not skipped. */
  shutdown(): Promise<void> {
    if (!this.controller.signal.aborted) this.keepPending = true;
    return this.interrupt();
  }

  /** Idempotent; resolves when the loop has settled everything and announced `interrupted`. */
  interrupt(): Promise<void> {
    if (!this.ended && !this.controller.signal.aborted) {
      this.controller.abort();
      for (const call of this.calls.values()) call.decide({ action: "interrupted" });
    }
    return this.done;
  }

  /** Called once by the loop when it has fully stopped. */
  end(): void {
    this.ended = true;
    this.finish();
  }
}
