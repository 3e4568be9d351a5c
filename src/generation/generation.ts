import { ErrorCodes, type Conversation, type ConversationSettings, type GenerationOutcome, type Mode, type PendingTool } from "../../protocol/index.js";
import type { Cost, UsageTotals } from "../../protocol/usage.js";
import type { ModelControls, Usage } from "../llm/provider.js";
import { addCall, emptyTotals, sumUsage } from "../llm/usage-totals.js";
import type { ActiveGeneration, GenerationEnding, OfferedCallState, ToolDecision } from "../sessions/active-generation.js";
import type { ConversationRuntime } from "../sessions/conversation-runtime.js";
import { pendingToolOf } from "../sessions/pending-tool.js";
import type { GenerationSummary } from "../store/conversation-store.js";
import { GenerationDiff } from "./generation-diff.js";
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
  /**
   * The signal's aborted state as a plain field: `interrupted` is asked for every token, and
   * AbortSignal's getter (a brand check, then the read) was ~2.5 % of the main thread at 300
   * streams. Set by the first abort listener, registered here before any other, so it is true
   * from the moment abort() is called, whoever calls it.
   */
  #aborted = false;
  phase: GenerationPhase = "starting";
  /** The net change of the files its tools changed (generation_diff_updated). */
  readonly diff = new GenerationDiff();
  /** Offered calls of the current round, by toolCallId, in offer order. */
  readonly calls = new Map<string, PendingToolCall>();
  /** Tool uses this step may still run without asking (`step` autoConfirm). */
  private stepAutoConfirm: number;
  /** Set by shutdown: calls not yet run stay pending on disk, to be offered again after a restart. */
  keepPending = false;
  /**
   * Set by abandon (cluster mode: this instance lost the conversation): the
   * `error` the generation ends with. From then on the loop writes nothing.
   */
  abandoned: GenerationEnding | undefined;
  private finish!: () => void;
  readonly done: Promise<void>;
  private ended = false;
  /** How it ended, set by the loop where it announces the end (generation_complete final, error, interrupted). */
  outcome: { outcome: GenerationOutcome; error?: GenerationSummary["error"] } | undefined;
  /** Tokens of its model calls so far, added up; null until the endpoint reports some. */
  private usage: Usage | null = null;
  private modelCalls = 0;
  /** Its model calls' tokens and cost so far (usage_updated's `generation`). */
  private totals: UsageTotals = emptyTotals();
  /** The last assistant message it stored: what generation.wait answers with. */
  finalRecordId: string | null = null;
  /** Set for a generation started by conversation.compact: it compacts the conversation and ends (no model turn). */
  compactOnly: { instructions?: string } | undefined;
  /** Set once the loop has compacted after a context-length error: it does so once per generation. */
  compactedAfterRefusal = false;
  /**
   * A sub-agent's generation (spawn-agent.ts): its parent generation's
   * auto-confirm budget, spent when its own run out, so a step the client
   * let run without asking does not stall on its sub-agent's calls.
   */
  borrowAutoConfirm: (() => boolean) | undefined;

  constructor(
    readonly id: string,
    /** The model when the step started (from the step, the conversation or the server). */
    readonly model: string,
    autoConfirm: boolean | number | undefined,
    private readonly runtime: ConversationRuntime,
    private readonly stepControls: StepControls = {},
    /** The step's own `model`: it pins the model for the whole step. */
    private readonly stepModel?: string,
  ) {
    this.stepAutoConfirm = autoConfirm === true ? Number.POSITIVE_INFINITY : typeof autoConfirm === "number" ? autoConfirm : 0;
    this.controller.signal.addEventListener("abort", () => (this.#aborted = true), { once: true });
    this.done = new Promise((resolve) => {
      this.finish = resolve;
    });
  }

  /**
   * The controls of one model call: the step's overrides over the
   * conversation's settings, read at each call (a conversation.update made
   * during the step applies to its next model call, as toolHistoryRounds does).
   * The conversation's mode, when it sets a reasoning effort, goes over settings.reasoning.
   */
  modelControls(settings: ConversationSettings, mode?: Pick<Mode, "reasoning">): ModelControls {
    const base: ConversationSettings = mode?.reasoning ? { ...settings, reasoning: mode.reasoning } : settings;
    const pick = <K extends keyof StepControls>(key: K) => {
      const value = this.stepControls[key] !== undefined ? this.stepControls[key] : base[key];
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

  /**
   * The model of one model call, read at each call like the controls: a
   * conversation.update of `model` during the step applies from its next
   * call, unless the step named its own model. Should the conversation's
   * model be cleared meanwhile, the step keeps the one it started with.
   * A mode with a model of its own goes over the conversation's.
   */
  modelFor(conversation: Conversation, mode?: Pick<Mode, "model">): string {
    return this.stepModel ?? mode?.model ?? conversation.model ?? this.model;
  }

  /** One model call finished; its usage (if reported) joins the sum, and its cost (if priced) the totals. */
  /**
   * The summary of this generation completing now with `finalRecordId` as its
   * last message: the loop writes it (as the run state's lastGeneration)
   * together with the turn's last record and metadata, so a turn's end is
   * one durable write; end() then hands the runtime this same summary, and
   * the run state it stores is already on disk.
   */
  completedSummary(finalRecordId: string | null): GenerationSummary {
    this.prepared = this.summaryOf({ outcome: "completed" }, finalRecordId);
    return this.prepared;
  }

  private prepared: GenerationSummary | undefined;

  private summaryOf(outcome: { outcome: GenerationOutcome; error?: GenerationSummary["error"] }, finalRecordId: string | null): GenerationSummary {
    return {
      generationId: this.id,
      outcome: outcome.outcome,
      endedAt: new Date().toISOString(),
      ...(outcome.error ? { error: outcome.error } : {}),
      usage: this.usage,
      modelCalls: this.modelCalls,
      finalRecordId,
    };
  }

  countModelCall(usage: Usage | null, cost: Cost | null): UsageTotals {
    this.modelCalls++;
    this.totals = addCall(this.totals, usage, cost);
    if (usage) this.usage = sumUsage(this.usage, usage);
    return this.totals;
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get interrupted(): boolean {
    return this.#aborted;
  }

  pendingTools(): PendingTool[] {
    const out: PendingTool[] = [];
    for (const call of this.calls.values()) {
      if (!call.decided) out.push(pendingToolOf(call.record, call.changes));
    }
    return out;
  }

  offered(toolCallId: string): OfferedCallState | undefined {
    const call = this.calls.get(toolCallId);
    if (!call) return undefined;
    const stage = call.started ? "started" : call.decided ? "decided" : "undecided";
    return {
      toolName: call.record.toolName,
      arguments: call.record.arguments,
      stage,
      status: call.current?.action ?? call.record.status,
      ...(call.record.runBy ? { runBy: call.record.runBy } : {}),
    };
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

  confirmWaiting(matches: (toolName: string, args: Record<string, unknown>) => boolean): void {
    for (const call of this.calls.values()) {
      if (!call.decided && matches(call.record.toolName, call.record.arguments)) call.decide({ action: "confirm" });
    }
  }

  /** Consume one unit of auto-confirm budget: the step's first, then the conversation's, then (a sub-agent) its parent's. */
  takeAutoConfirm(): boolean {
    if (this.stepAutoConfirm > 0) {
      this.stepAutoConfirm--;
      return true;
    }
    return this.runtime.spendAutoConfirm() || (!this.interrupted && this.borrowAutoConfirm?.() === true);
  }

  /** Stop for a server shutdown or interrupt keepPending: like interrupt, but calls not run are kept pending, not skipped. */
  shutdown(): Promise<void> {
    if (!this.controller.signal.aborted) this.keepPending = true;
    return this.interrupt();
  }

  /** Stop without writing anything more, ending with an `error` (see ActiveGeneration.abandon). */
  abandon(ending: GenerationEnding): Promise<void> {
    if (!this.ended && !this.abandoned) {
      this.abandoned = ending;
      this.keepPending = true;
    }
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

  /**
   * Called once by the loop when it has fully stopped. The ending is handed
   * to the runtime (kept for generation.wait, stored as lastGeneration)
   * before `done` resolves, so whoever awaited the end finds it recorded.
   */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    // Every path of the loop announces its end; a path that did not is a bug, reported as an error rather than lost.
    const outcome =
      this.outcome ??
      (this.interrupted
        ? { outcome: "interrupted" as const }
        : { outcome: "error" as const, error: { code: ErrorCodes.INTERNAL_ERROR, message: "Internal error" } });
    // The summary written ahead with the turn's last writes (completedSummary), when the ending is still that one.
    const prepared = this.prepared;
    const summary: GenerationSummary =
      prepared && outcome.outcome === "completed" && !outcome.error && prepared.finalRecordId === this.finalRecordId && prepared.modelCalls === this.modelCalls
        ? prepared
        : this.summaryOf(outcome, this.finalRecordId);
    try {
      this.runtime.endGeneration(summary);
    } finally {
      this.finish();
    }
  }
}
