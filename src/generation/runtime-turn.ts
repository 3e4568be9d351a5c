/**
 * A step on an agent runtime (a model named `<runtime>/<model>`, config
 * `runtimes`): the runtime runs its own agent loop and tools, and this turns
 * its events into agentwire's, so a client reads the conversation as any
 * other. One step is one runtime turn:
 *
 *  - the trailing user messages are its prompt; the conversation's system
 *    prompt goes with a new session; the runtime's session id is stored on
 *    the conversation (runtimeSession) and resumed by the next step;
 *  - text and reasoning deltas → generation_progress; each finished piece of
 *    assistant text → a stored assistant message (message_added);
 *  - a call the runtime runs by itself → a tool call record marked
 *    `runBy: "runtime"` (a read-only mirror): tool_executing, tool_output,
 *    tool_completed / tool_failed;
 *  - a call it asks about → tool_pending, answered by tool.confirm (confirm
 *    → the runtime runs it; skip → it is declined) or by the step's
 *    auto-confirm budget;
 *  - before a question is offered, the conversation's toolPolicy, remembered
 *    approvals (approvalRules) and mode apply to it by the runtime's tool
 *    name (Codex: `shell`, `apply_patch`): denied or not in the mode → it is
 *    declined (tool_failed); run without asking (policy, `auto`, a rule) →
 *    confirmed at once (tool_pending autoConfirmed);
 *  - each model call's usage → usage_updated, counted in the conversation's
 *    usage; the runtime's plan / to-do list → plan_updated (state.plan);
 *  - its questions to the user → input_requested (as ask_user's), answered
 *    by input.respond;
 *  - interrupt → the runtime's own interrupt; partial text is kept, waiting
 *    calls are skipped, one `interrupted`.
 *
 * Nothing here knows which runtime it drives (src/runtimes/runtime.ts).
 */
import type { ApprovalRule, MessageRecord, ReasoningRecord, ToolCallRecord } from "../../protocol/index.js";
import { MAX_CHOICE_CHARS, MAX_CHOICES, MAX_QUESTION_CHARS } from "../../protocol/limits/inputs.js";
import { MAX_PLAN_ENTRIES, MAX_PLAN_ENTRY_CHARS } from "../../protocol/limits/plans.js";
import type { PlanEntry } from "../../protocol/plan-entries.js";
import type { ConversationUsage, ModelPricing, TokenUsage } from "../../protocol/usage.js";
import { addCall, conversationTotals, costOf } from "../llm/usage-totals.js";
import { approvalVerdict, deniedByPolicyText } from "./approval-policy.js";
import { ruleFor } from "../tools/approval-rules.js";
import { APPROVALS_FILE, readWorkspaceApprovals } from "./workspace-approvals.js";
import { approvalSettingsIn, modeOffers, notInModeText, type ModeSet } from "./modes.js";
import { newId } from "../ids.js";
import type { Logger } from "../logging/logger.js";
import { RuntimeUnavailableError, type AgentRuntime, type RuntimeApproval, type RuntimeQuestion, type RuntimeSession } from "../runtimes/runtime.js";
import type { ConversationRuntime } from "../sessions/conversation-runtime.js";
import type { ToolRegistry } from "../tools/tool.js";
import { toolCallDisplay } from "../tools/tool-display.js";
import { ErrorCodes } from "../../protocol/index.js";
import type { Generation } from "./generation.js";
import { ProgressCoalescer } from "./progress-coalescer.js";
import { PendingToolCall } from "./tool-decision.js";
import type { ToolDecision } from "../sessions/active-generation.js";

/** How long a runtime has to end its turn after an interrupt before its process is stopped. */
const INTERRUPT_GRACE_MS = 2000;
/** The step's prompt is read from this many trailing records at most. */
const PROMPT_RECORDS = 200;

export interface RuntimeTurnDeps {
  runtime: AgentRuntime;
  /** The model id the runtime is given (the part after `<runtime>/`). */
  modelId: string;
  /** For tool_pending's kind / title / locations: a runtime's `shell` call shows as agentwire's shell call would. */
  tools: ToolRegistry;
  log: Logger;
  /** The server's modes (the conversation's settings.mode applies to the runtime's questions). */
  modes: ModeSet;
  /** What the configuration declares of a model (pricing for usage_updated's cost); null when nothing. */
  modelInfo(model: string): { contextWindow?: number; pricing?: ModelPricing } | null;
}

/** Runs one step through a runtime to its end. Never throws: every outcome is reported as events. */
export async function runRuntimeGeneration(generation: Generation, conversation: ConversationRuntime, deps: RuntimeTurnDeps): Promise<void> {
  const turn = new RuntimeTurn(generation, conversation, deps);
  try {
    await turn.run();
  } catch (error) {
    if (!generation.interrupted) turn.fail(error);
  } finally {
    if (generation.interrupted) await turn.settleInterrupted().catch((error) => deps.log.error("settling an interrupt failed", error));
    generation.end();
  }
}

class RuntimeTurn {
  /** Tool records of this turn, by the runtime's call id. */
  private readonly records = new Map<string, ToolCallRecord>();
  /** Writes in order: events arrive faster than the store commits. */
  private writes: Promise<void> = Promise.resolve();
  private text = "";
  private reasoning = "";
  private usage: TokenUsage | null = null;

  constructor(
    private readonly generation: Generation,
    private readonly conversation: ConversationRuntime,
    private readonly deps: RuntimeTurnDeps,
  ) {}

  async run(): Promise<void> {
    const { handle } = this.conversation;
    // Questions of a runtime process that is gone (the server stopped without settling them) can no longer be answered.
    for (const stale of this.conversation.storedPendingCalls()) {
      if (stale.runBy === "runtime") await this.skip(stale, "interrupted");
    }
    const prompt = await this.prompt();
    const model = this.generation.modelFor(handle.conversation);
    this.conversation.publish("generation_started", { generationId: this.generation.id, model, iteration: 1 });
    this.generation.phase = "streaming";
    const session = await this.session();
    if (this.generation.interrupted) return;
    const stop = () => void this.interruptRuntime(session);
    this.generation.signal.addEventListener("abort", stop, { once: true });
    const progress = new ProgressCoalescer((kind, delta) => this.conversation.publishProgress(this.generation.id, kind, delta));
    const controls = this.generation.modelControls(handle.conversation.settings);
    try {
      for await (const event of session.turn({ prompt, model: this.deps.modelId, ...(controls.reasoning ? { reasoning: controls.reasoning } : {}) })) {
        switch (event.type) {
          case "text":
            this.text += event.delta;
            progress.add("text", event.delta);
            break;
          case "reasoning":
            this.reasoning += event.delta;
            progress.add("reasoning", event.delta);
            break;
          case "message":
            progress.flush();
            this.text = "";
            this.reasoning = "";
            this.queue(() => this.storeMessage(event.text, event.reasoning));
            break;
          case "tool_started":
            progress.flush();
            this.queue(() => this.started(event.callId, event.toolName, event.arguments));
            break;
          case "tool_output":
            progress.flush();
            this.conversation.publish("tool_output", { generationId: this.generation.id, toolCallId: event.callId, stream: "stdout", chunk: event.chunk });
            break;
          case "tool_finished":
            this.queue(() => this.finished(event.callId, event.success, event.result, event.exitCode));
            break;
          case "approval":
            progress.flush();
            this.queue(() => this.offer(event.approval));
            break;
          case "question":
            progress.flush();
            // Answered apart from the event stream (the runtime waits for it), after what came before is stored.
            void this.writes.then(() => this.ask(event.question)).catch((error: unknown) => {
              this.deps.log.warn(`runtime ${this.deps.runtime.name}: its question failed`, error);
              event.question.respond(null);
            });
            break;
          case "usage": {
            const usage = event.usage;
            this.usage = usage;
            // After the text it produced is stored, as the loop announces a model call's usage.
            this.queue(() => this.recordUsage(usage));
            break;
          }
          case "plan": {
            const entries = planEntries(event.entries);
            this.queue(() => this.conversation.updatePlan(this.generation.id, entries));
            break;
          }
          case "done":
            progress.flush();
            await this.writes;
            if (this.generation.interrupted) return;
            if (event.outcome === "completed") {
              this.generation.outcome = { outcome: "completed" };
              this.conversation.publish("generation_complete", { generationId: this.generation.id, iteration: 1, finishReason: "stop", usage: this.usage, final: true });
              return;
            }
            // Interrupted by someone else than this generation (the runtime's own limits): an error, with what it said.
            throw new Error(event.error ?? `the runtime ended the turn (${event.outcome})`);
        }
      }
    } finally {
      progress.flush();
      this.generation.signal.removeEventListener("abort", stop);
    }
  }

  /** The trailing user messages, as one prompt (what was appended since the last answer). */
  private async prompt(): Promise<string> {
    const { handle } = this.conversation;
    const count = handle.recordCount;
    const records = await handle.readRecords(Math.max(0, count - PROMPT_RECORDS), count);
    const texts: string[] = [];
    for (let i = records.length - 1; i >= 0; i--) {
      const record = records[i]!;
      if (record.type !== "message" || record.role !== "user" || record.notice !== undefined) break;
      texts.unshift(record.content);
    }
    if (texts.length === 0) throw new PromptMissing();
    return texts.join("\n\n");
  }

  /** The conversation's session in the runtime: resumed when it has one there, else launched (and stored). */
  private async session(): Promise<RuntimeSession> {
    const { handle } = this.conversation;
    const current = handle.conversation;
    const stored = current.runtimeSession?.runtime === this.deps.runtime.name ? current.runtimeSession.sessionId : undefined;
    const session = await this.deps.runtime.open({
      cwd: current.workspace ?? process.cwd(),
      model: this.deps.modelId,
      ...(current.system ? { instructions: current.system } : {}),
      ...(stored && this.deps.runtime.capabilities.resume ? { resumeId: stored } : {}),
    });
    if (session.sessionId !== stored) {
      const runtimeSession = { runtime: this.deps.runtime.name, sessionId: session.sessionId };
      await this.conversation.updateConversation(
        (conversation) => ({ ...conversation, runtimeSession }),
        () => this.conversation.publish("conversation_updated", { conversation: this.conversation.handle.conversation, deleted: false }),
      );
    }
    return session;
  }

  private async interruptRuntime(session: RuntimeSession): Promise<void> {
    for (const call of this.generation.calls.values()) call.decide({ action: "interrupted" });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<"late">((resolve) => {
      timer = setTimeout(() => resolve("late"), INTERRUPT_GRACE_MS);
    });
    try {
      const ended = await Promise.race([session.interrupt().then(() => session.wait()), late]);
      // A runtime that does not stop when asked is stopped: its process goes (its sessions resume on the next step).
      if (ended === "late") await this.deps.runtime.close();
    } catch (error) {
      this.deps.log.warn(`runtime ${this.deps.runtime.name}: interrupt failed`, error);
      await this.deps.runtime.close();
    } finally {
      clearTimeout(timer);
    }
  }

  private queue(write: () => Promise<void>): void {
    this.writes = this.writes.then(write).catch((error: unknown) => {
      this.deps.log.error(`runtime ${this.deps.runtime.name}: storing its event failed`, error);
    });
  }

  /** Its thinking first, as a record of its own (as the loop stores a model's), then the text; an interrupted reply may have no text. */
  private async storeMessage(text: string, reasoning: string | undefined, interrupted = false): Promise<void> {
    if (reasoning) {
      const thinking: ReasoningRecord = {
        type: "reasoning",
        id: newId("r"),
        content: reasoning,
        ...(interrupted ? { interrupted: true } : {}),
        generationId: this.generation.id,
        timestamp: new Date().toISOString(),
      };
      await this.conversation.commit(this.conversation.handle.append(thinking), () =>
        this.conversation.publish("reasoning_added", { generationId: this.generation.id, record: thinking }),
      );
    }
    if (!text && interrupted) return;
    const record: MessageRecord = {
      type: "message",
      id: newId("r"),
      role: "assistant",
      content: text,
      generationId: this.generation.id,
      timestamp: new Date().toISOString(),
    };
    return this.conversation.commit(this.conversation.handle.append(record), () => {
      this.generation.finalRecordId = record.id;
      this.conversation.publish("message_added", { record });
    });
  }

  private display(toolName: string, args: Record<string, unknown>) {
    const cwd = this.conversation.handle.conversation.workspace ?? process.cwd();
    return toolCallDisplay(this.deps.tools.get(toolName), toolName, args, cwd);
  }

  private newRecord(callId: string, toolName: string, args: Record<string, unknown>, status: ToolCallRecord["status"]): ToolCallRecord {
    return {
      type: "tool_call",
      id: newId("r"),
      toolCallId: callId,
      toolName,
      arguments: args,
      ...this.display(toolName, args),
      result: null,
      success: null,
      status,
      runBy: "runtime",
      generationId: this.generation.id,
      timestamp: new Date().toISOString(),
    };
  }

  /** A call the runtime runs without asking: stored as executing, announced as tool_executing. */
  private async started(callId: string, toolName: string, args: Record<string, unknown>): Promise<void> {
    if (this.records.has(callId)) return;
    const record = this.newRecord(callId, toolName, args, "executing");
    this.records.set(callId, record);
    this.generation.phase = "executing";
    await this.conversation.commit(this.conversation.handle.append(record), () => this.announceExecuting(record));
  }

  private announceExecuting(record: ToolCallRecord, edited = false): void {
    this.conversation.publish("tool_executing", {
      generationId: this.generation.id,
      toolCallId: record.toolCallId,
      toolName: record.toolName,
      arguments: record.arguments,
      ...this.display(record.toolName, record.arguments),
      edited,
    });
  }

  private async finished(callId: string, success: boolean, result: string, exitCode: number | null | undefined): Promise<void> {
    const record = this.records.get(callId);
    // A call declined here (skipped) or never announced has nothing more to show.
    if (!record || record.status === "skipped" || record.status === "completed" || record.status === "failed") return;
    const done: ToolCallRecord = {
      ...record,
      status: success ? "completed" : "failed",
      success,
      result,
      ...(exitCode !== undefined ? { exitCode } : {}),
      completedAt: new Date().toISOString(),
    };
    this.records.set(callId, done);
    await this.conversation.commit(this.conversation.handle.replaceRecord(done), () =>
      this.conversation.publish(success ? "tool_completed" : "tool_failed", { generationId: this.generation.id, record: done }),
    );
  }

  /** A question of the runtime: stored pending, offered as tool_pending, answered by tool.confirm (or the auto-confirm budget). */
  private async offer(approval: RuntimeApproval): Promise<void> {
    const previous = this.records.get(approval.callId);
    const settings = this.conversation.handle.conversation.settings;
    const mode = this.deps.modes.of(settings);
    const tool = this.deps.tools.get(approval.toolName);
    const approvalSettings = approvalSettingsIn(settings, mode);
    let verdict = approvalVerdict(tool ?? { name: approval.toolName }, approvalSettings, { arguments: approval.arguments });
    // The workspace's remembered approvals, read only for a call that would otherwise ask.
    if (verdict === "ask") verdict = approvalVerdict(tool ?? { name: approval.toolName }, approvalSettings, { arguments: approval.arguments, workspaceRules: await this.workspaceRules() });
    // Refused without asking: the runtime is told no, and the call ends failed (as the loop refuses a call its policy denies).
    const refusal = verdict === "deny" ? deniedByPolicyText(approval.toolName) : modeOffers(mode, tool, approval.toolName) ? undefined : notInModeText(approval.toolName, mode);
    if (refusal) return this.refuse(approval, previous, refusal);
    const pending = this.newRecord(approval.callId, approval.toolName, approval.arguments, "pending");
    this.records.set(approval.callId, pending);
    const call = new PendingToolCall(previous ? { ...pending, id: previous.id } : pending);
    this.generation.calls.set(approval.callId, call);
    const autoReason = this.generation.interrupted ? undefined : verdict === "run" ? "policy" : verdict === "rule" ? "rule" : this.generation.takeAutoConfirm() ? "budget" : undefined;
    const auto = autoReason !== undefined;
    // tool.confirm remember stores it (Claude's tool names: a rule for the tool; Codex's `shell`: by command prefix).
    const rememberAs = ruleFor(approval.toolName, approval.arguments);
    if (auto) call.decide({ action: "confirm" });
    if (this.generation.interrupted) call.decide({ action: "interrupted" });
    this.generation.phase = "pending";
    const write = previous ? this.conversation.handle.replaceRecord(call.record) : this.conversation.handle.append(call.record);
    await this.conversation.commit(write, () =>
      this.conversation.publish("tool_pending", {
        generationId: this.generation.id,
        toolCallId: call.record.toolCallId,
        toolName: call.record.toolName,
        arguments: call.record.arguments,
        ...this.display(call.record.toolName, call.record.arguments),
        autoConfirmed: auto,
        ...(autoReason ? { autoReason } : {}),
        ...(rememberAs ? { rememberAs } : {}),
      }),
    );
    // Answered apart from the event stream: the runtime sends nothing more about this call until it is.
    void call.wait().then((decision) => this.queue(() => this.decided(call, approval, decision)));
  }

  private async decided(call: PendingToolCall, approval: RuntimeApproval, decision: ToolDecision): Promise<void> {
    if (call.started) return;
    call.started = true;
    this.generation.calls.delete(approval.callId);
    const action = decision.action;
    if (action === "confirm" || action === "edit") {
      // An edit reaches here only for a runtime that takes changed input (capabilities.editApproval; agent.ts refuses it otherwise).
      const edited = action === "edit" ? decision.arguments : undefined;
      approval.respond("accept", edited ? { arguments: edited } : undefined);
      const executing: ToolCallRecord = { ...call.record, ...(edited ? { arguments: edited, originalArguments: call.record.arguments, edited: true, ...this.display(call.record.toolName, edited) } : {}), status: "executing" };
      this.records.set(approval.callId, executing);
      this.generation.phase = "executing";
      await this.conversation.commit(this.conversation.handle.replaceRecord(executing), () => this.announceExecuting(executing, edited !== undefined));
      return;
    }
    const interrupted = action === "interrupted";
    approval.respond(interrupted ? "cancel" : "decline", action === "skip" && decision.message !== undefined ? { message: decision.message } : undefined);
    await this.skip(call.record, interrupted ? "interrupted" : "user");
  }

  /**
   * The runtime's questions to the user, one at a time, as ask_user's
   * (input_requested, answered by input.respond; not stored: the runtime's
   * process holds the question, and a restart ends it). The first one
   * declined or cancelled ends them all.
   */
  private async ask(question: RuntimeQuestion): Promise<void> {
    const answers: Record<string, string[]> = {};
    for (const item of question.questions) {
      const choices = item.choices?.slice(0, MAX_CHOICES).map((choice) => choice.slice(0, MAX_CHOICE_CHARS));
      const reply = await this.conversation.askInput(
        {
          source: "ask_user",
          question: item.question.slice(0, MAX_QUESTION_CHARS),
          ...(choices?.length ? { choices, ...(item.multiple ? { multiple: true } : {}) } : {}),
          ...(item.secret ? { secret: true } : {}),
          toolCallId: question.callId,
          generationId: this.generation.id,
        },
        false,
        this.generation.signal,
      );
      if (!reply || reply.outcome !== "answered") return question.respond(null);
      const answer = reply.answer;
      answers[item.id] = typeof answer === "string" ? [answer] : Array.isArray(answer) ? answer : Object.values(answer).map(String);
    }
    question.respond(answers);
  }

  /** The workspace's remembered approvals (.agentwire/approvals.json); none without a workspace or when it cannot be read. */
  private async workspaceRules(): Promise<ApprovalRule[]> {
    const workspace = this.conversation.handle.conversation.workspace;
    if (!workspace) return [];
    try {
      const found = await readWorkspaceApprovals(workspace, this.generation.signal);
      return found.problem ? [] : found.rules;
    } catch (error) {
      this.deps.log.warn(`could not read ${APPROVALS_FILE} of ${workspace}`, error);
      return [];
    }
  }

  /** A question the conversation's policy or mode answers no: declined to the runtime, stored failed with why. */
  private async refuse(approval: RuntimeApproval, previous: ToolCallRecord | undefined, result: string): Promise<void> {
    approval.respond("decline", { message: result });
    const record = this.newRecord(approval.callId, approval.toolName, approval.arguments, "failed");
    const failed: ToolCallRecord = { ...record, ...(previous ? { id: previous.id } : {}), success: false, result, completedAt: new Date().toISOString() };
    this.records.set(approval.callId, failed);
    const write = previous ? this.conversation.handle.replaceRecord(failed) : this.conversation.handle.append(failed);
    await this.conversation.commit(write, () => this.conversation.publish("tool_failed", { generationId: this.generation.id, record: failed }));
  }

  /**
   * A model call of the runtime's: counted in the generation's and the
   * conversation's totals (stored with its metadata), then usage_updated —
   * the same shape as agentwire's own model calls (runtime models have no
   * declared window, so the context occupancy is the call's tokens).
   */
  private async recordUsage(usage: TokenUsage): Promise<void> {
    const model = this.generation.modelFor(this.conversation.handle.conversation);
    const info = this.deps.modelInfo(model);
    const cost = costOf(usage, info?.pricing);
    const generation = this.generation.countModelCall(usage, cost);
    let conversation: ConversationUsage | undefined;
    await this.conversation.updateConversation(
      (current) => {
        conversation = { ...addCall(conversationTotals(current.usage), usage, cost), contextTokens: usage.promptTokens + usage.completionTokens };
        return { ...current, usage: conversation };
      },
      () =>
        this.conversation.publish("usage_updated", {
          generationId: this.generation.id,
          model,
          last: usage,
          generation,
          conversation: conversation!,
          context: { usedTokens: conversation!.contextTokens, windowTokens: info?.contextWindow ?? null },
          cost,
        }),
    );
  }

  private async skip(record: ToolCallRecord, reason: "user" | "interrupted"): Promise<void> {
    const skipped: ToolCallRecord = {
      ...record,
      status: "skipped",
      success: false,
      result: reason === "user" ? "[declined by the user]" : "[not run: the generation was interrupted]",
      completedAt: new Date().toISOString(),
    };
    this.records.set(record.toolCallId, skipped);
    await this.conversation.commit(this.conversation.handle.replaceRecord(skipped), () =>
      this.conversation.publish("tool_skipped", { generationId: this.generation.id, record: skipped, reason }),
    );
  }

  /** After an interrupt: the partial text is kept, calls still waiting or running are closed, one `interrupted`. */
  async settleInterrupted(): Promise<void> {
    const phase = this.generation.phase;
    await this.writes;
    if (this.text || this.reasoning) await this.storeMessage(this.text, this.reasoning || undefined, true);
    for (const record of [...this.records.values()]) {
      if (record.status === "pending") await this.skip(record, "interrupted");
      else if (record.status === "executing") await this.finished(record.toolCallId, false, "[interrupted while the runtime ran it]", undefined);
    }
    this.generation.calls.clear();
    this.generation.outcome = { outcome: "interrupted" };
    this.conversation.publish("interrupted", { generationId: this.generation.id, phase });
    await this.conversation.delivered();
  }

  /** End with one `error` event; a missing package says what to install. */
  fail(error: unknown): void {
    const message =
      error instanceof RuntimeUnavailableError || error instanceof PromptMissing
        ? error.message
        : `runtime ${this.deps.runtime.name}: ${error instanceof Error ? error.message : String(error)}`;
    // A runtime that fails is to its step what a failing model endpoint is to an ordinary one.
    const code = error instanceof RuntimeUnavailableError ? ErrorCodes.CAPABILITY_UNSUPPORTED : error instanceof PromptMissing ? ErrorCodes.INVALID_PARAMS : ErrorCodes.LLM_ERROR;
    this.deps.log.warn(`generation ${this.generation.id} on runtime ${this.deps.runtime.name} failed`, error);
    this.generation.outcome = { outcome: "error", error: { code, message } };
    this.conversation.publish("error", { generationId: this.generation.id, code, message });
  }
}

/** A runtime's plan within agentwire's bounds (protocol/plan.ts): empty steps dropped, long ones cut, at most MAX_PLAN_ENTRIES. */
function planEntries(entries: PlanEntry[]): PlanEntry[] {
  return entries
    .map((entry) => ({ ...entry, content: entry.content.trim().slice(0, MAX_PLAN_ENTRY_CHARS) }))
    .filter((entry) => entry.content !== "")
    .slice(0, MAX_PLAN_ENTRIES);
}

class PromptMissing extends Error {
  constructor() {
    super("nothing to send to the runtime: the conversation does not end with a user message (message.append one first)");
    this.name = "PromptMissing";
  }
}
