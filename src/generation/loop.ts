/**
 * The agent loop of one generation: model call → stored assistant message →
 * offered tool calls → decisions → tool runs → next model call, until the
 * model answers without tools, maxIterations is reached, an error ends it,
 * or it is interrupted. Records are written at their boundaries only, and
 * each is announced once it is durable; token deltas go to sockets, never
 * to disk.
 */
import {
  ErrorCodes,
  ErrorMeanings,
  type CompactionRecord,
  type CompactionTrigger,
  type ConversationRecord,
  type FileChange,
  type MessageRecord,
  type ReasoningRecord,
  type ToolCallDisplay,
  type ToolCallRecord,
  type ApprovalRule,
} from "../../protocol/index.js";
import { loadContextImages } from "../context/context-images.js";
import { buildLlmContext, declinedText, trailingUserMessages } from "../context/build-llm-context.js";
import { readContextRecords } from "../context/context-records.js";
import { newId } from "../ids.js";
import type { ConversationUsage, ModelPricing } from "../../protocol/usage.js";
import type { LlmProvider, LlmToolSpec, ProposedToolCall, Usage } from "../llm/provider.js";
import { addCall, conversationTotals, costOf } from "../llm/usage-totals.js";
import { LlmError } from "../llm/provider.js";
import type { ChatMessage } from "../llm/chat-message.js";
import { isContextLengthError } from "../llm/context-length.js";
import type { Logger } from "../logging/logger.js";
import type { ConversationRuntime } from "../sessions/conversation-runtime.js";
import { storedDisplay } from "../sessions/pending-tool.js";
import type { Tool, ToolRegistry, ToolResult } from "../tools/tool.js";
import type { OpenInput } from "../sessions/input-requests.js";
import { askUserResult } from "../tools/ask-user.js";
import { toolCallDisplay } from "../tools/tool-display.js";
import { argumentsNow, checkArguments, decodeArguments, formatArgumentIssues } from "../tools/validate-arguments.js";
import { approvalVerdict, deniedByPolicyText, isDeniedByPolicy } from "./approval-policy.js";
import { approvalSettingsIn, modeOffers, notInModeText, withModePrompt, type ModeSet } from "./modes.js";
import { ruleFor } from "../tools/approval-rules.js";
import { APPROVALS_FILE, readWorkspaceApprovals, type WorkspaceApprovals } from "./workspace-approvals.js";
import type { Generation } from "./generation.js";
import { ProgressCoalescer } from "./progress-coalescer.js";
import { PendingToolCall } from "./tool-decision.js";
import { wireError } from "./wire-errors.js";
import { keepCheckpoint } from "../sessions/file-checkpoints.js";
import { autoCompactLimit, compactionRequestText, estimateRequestTokens, estimateTokens } from "./compaction.js";

export interface LoopDeps {
  /** The provider serving `model` (resolved per model call: the conversation's model may change mid-step). */
  provider(model: string): Promise<LlmProvider>;
  tools: ToolRegistry;
  /** The tools offered now (MCP servers may come and go between model calls). */
  toolSpecs(): LlmToolSpec[];
  /** Settles once tools still starting (the conversation's own MCP servers) can be listed; absent: nothing to wait for. */
  toolsReady?(signal: AbortSignal): Promise<void>;
  log: Logger;
  /** Largest model request, in bytes of conversation text (maxContextBytes). */
  maxContextBytes: number;
  /** Bytes of file checkpoints a conversation keeps (maxCheckpointBytes). */
  maxCheckpointBytes: number;
  /** What the configuration declares of a model (context window, pricing); null when it declares nothing or names no provider. */
  modelInfo(model: string): { contextWindow?: number; pricing?: ModelPricing } | null;
  /** The configured template rendered for this call, for a conversation without its own system prompt. */
  defaultSystemPrompt(workspace: string, tools: readonly string[], signal: AbortSignal): Promise<string>;
  /** The server's modes; the conversation's (settings.mode) is read at every model call. */
  modes: ModeSet;
  /**
   * Undefined when this model call may start now; else a promise that settles when it may (the server
   * lets a few start per event-loop turn: turn-gate.ts). Absent: every call starts at once.
   */
  modelCallTurn?(): Promise<void> | undefined;
}

/** The share of a declared context window past which context_nearly_full is sent. */
const CONTEXT_NEARLY_FULL = 0.8;

/**
 * Calls of one round prepared while they wait (Tool.prepare) at most: a
 * preparation can be a fork of this process (~1.5 ms of the main thread), and
 * a round of many calls must not stall every other conversation's stream.
 */
const MAX_PREPARED_PER_ROUND = 4;

const NOT_RUN_INTERRUPTED = "[not run: the generation was interrupted]";
const NOT_RUN_MAX_ITERATIONS = "[not run: the step reached maxIterations]";
const notRunTimeout = (ms: number) =>
  `[not run: nobody confirmed or declined this call within ${ms} ms (settings.confirmTimeoutMs), so it was skipped]`;

/** What one streamed model call produced. */
interface ModelReply {
  /** The model asked (as the step or conversation names it). */
  model: string;
  text: string;
  reasoning: string;
  /** Absent when the stream was cut by an interrupt. */
  done?: { finishReason: string | null; usage: Usage | null; toolCalls: ProposedToolCall[]; providerItems?: unknown[] };
}

/** The assistant record of a model reply, on its way to the store. */
interface StoredReply {
  /** The store write (durable once resolved). */
  write: Promise<void>;
  /** The write's commit: resolves once message_added has been announced. */
  done: Promise<void>;
  recordId: string;
}

/** Runs a generation to its end. Never throws: every outcome is reported as events. */
export async function runGeneration(
  generation: Generation,
  runtime: ConversationRuntime,
  deps: LoopDeps,
  resumed: readonly ToolCallRecord[],
  asked: readonly OpenInput[] = [],
): Promise<void> {
  const loop = new Loop(generation, runtime, deps);
  try {
    await loop.run(resumed, asked);
  } catch (error) {
    // An abandoned generation's next write throws on purpose (see Loop.writable).
    if (generation.abandoned) {
      if (!(error instanceof GenerationAbandoned)) deps.log.warn(`generation ${generation.id} raised after it was abandoned`, error);
    } else if (generation.interrupted) deps.log.warn(`generation ${generation.id} raised after its interrupt`, error);
    else loop.fail(error);
  } finally {
    if (generation.interrupted) await loop.settleInterrupted().catch((e) => deps.log.error("settling an interrupt failed", e));
    // The runtime learns the ending (and that nothing runs any more) from the generation.
    generation.end();
  }
}

/** Thrown by requestInput when the generation stops with the question kept open (see keepsCalls). */
class QuestionKept extends Error {
  constructor() {
    super("the generation stopped with the question kept open");
    this.name = "QuestionKept";
  }
}

/** Thrown instead of a write once the generation is abandoned: its instance no longer owns the conversation. */
class GenerationAbandoned extends Error {
  constructor(generationId: string) {
    super(`generation ${generationId} was abandoned (its instance lost the conversation); nothing more is written`);
    this.name = "GenerationAbandoned";
  }
}

class Loop {
  /** Set once this generation announced that the workspace's approvals file is ignored (approvals_file_invalid). */
  private approvalsProblemReported = false;
  /** Calls of the round being offered that were prepared (MAX_PREPARED_PER_ROUND). */
  private preparedInRound = 0;
  /** Tool results the model reads instead of the stored ones, in this generation only (a secret answer), by toolCallId. */
  private readonly modelOnly = new Map<string, string>();

  constructor(
    private readonly generation: Generation,
    private readonly runtime: ConversationRuntime,
    private readonly deps: LoopDeps,
  ) {}

  /**
   * Called before every write. Once the instance lost the conversation
   * (cluster mode), nothing more is written: what was stored has been
   * announced, and the next owner finds no record nobody was told of.
   */
  private writable(): void {
    if (this.generation.abandoned) throw new GenerationAbandoned(this.generation.id);
  }

  async run(resumed: readonly ToolCallRecord[], asked: readonly OpenInput[] = []): Promise<void> {
    if (asked.length > 0) {
      await this.answerStoredQuestions(asked);
      if (this.generation.interrupted) return;
    }
    if (this.generation.compactOnly) {
      const done = await this.compact("manual", this.generation.compactOnly.instructions);
      if (!done) return; // interrupted; settleInterrupted reports it
      this.generation.outcome = { outcome: "completed" };
      this.runtime.publish("generation_complete", {
        generationId: this.generation.id,
        iteration: 1,
        finishReason: done.finishReason,
        usage: done.usage,
        final: true,
      });
      return;
    }
    if (resumed.length > 0) {
      const allowed: ToolCallRecord[] = [];
      // The policy may have changed since these calls were stored: a tool now denied is refused, not offered.
      for (const record of resumed) {
        const refusal = this.refusal(record.toolName);
        if (refusal) await this.refuse(record, refusal);
        else allowed.push(record);
      }
      await this.toolRound(await this.offerAll(allowed));
      if (this.generation.interrupted) return;
    }
    const maxIterations = this.runtime.handle.conversation.settings.maxIterations;
    for (let iteration = 1; ; iteration++) {
      const reply = await this.callModel(iteration);
      if (!reply) return; // interrupted or failed; already reported
      const { toolCalls, finishReason, usage, model, stored } = reply;
      // The assistant record and the usage totals (metadata) go to the store together: one write.
      let usageWritten!: (write: Promise<void>) => void;
      const usageWrite = new Promise<Promise<void>>((resolve) => (usageWritten = resolve));
      const used = this.recordUsage(model, usage, undefined, usageWritten);
      const complete = (final: boolean) => {
        if (final) this.generation.outcome = { outcome: "completed" };
        this.runtime.publish("generation_complete", { generationId: this.generation.id, iteration, finishReason, usage, final });
      };

      // A message steered in while the model answered is answered too: one more model call takes it.
      if (toolCalls.length === 0 && !(this.steerWaiting() && iteration < maxIterations)) {
        await this.completeWith(stored, used, usageWrite, () => complete(true));
        return;
      }
      await Promise.all([stored.done, used]);
      if (toolCalls.length === 0) {
        complete(false);
        continue;
      }
      const records = await this.storeToolCalls(toolCalls);
      if (iteration >= maxIterations) {
        for (const record of records) if (record.status === "pending") await this.skip(record, "max_iterations", NOT_RUN_MAX_ITERATIONS);
        await this.storeMessage({
          type: "message",
          id: newId("r"),
          role: "assistant",
          content: `Stopped after ${maxIterations} model calls (maxIterations). Send step to continue.`,
          notice: "max_iterations",
          generationId: this.generation.id,
          timestamp: new Date().toISOString(),
        });
        complete(true);
        return;
      }
      complete(false);
      await this.toolRound(await this.offerAll(records.filter((r) => r.status === "pending")));
      if (this.generation.interrupted) return;
    }
  }

  /**
   * One model call: stream it, then store what it said. Returns undefined
   * when it was interrupted or failed (already reported).
   */
  private async callModel(
    iteration: number,
  ): Promise<
    | { toolCalls: ProposedToolCall[]; finishReason: string | null; usage: Usage | null; model: string; stored: StoredReply }
    | undefined
  > {
    this.generation.phase = "streaming";
    let reply: ModelReply;
    try {
      reply = await this.streamModel(iteration);
    } catch (error) {
      if (this.generation.interrupted) return undefined;
      if (!isContextLengthError(error) || this.generation.compactedAfterRefusal) {
        this.fail(error);
        return undefined;
      }
      // The endpoint says the conversation no longer fits: compact once, then ask again.
      this.generation.compactedAfterRefusal = true;
      try {
        if (!(await this.compact("context_length"))) return undefined;
        this.generation.phase = "streaming";
        reply = await this.streamModel(iteration);
      } catch (retryError) {
        if (this.generation.interrupted) return undefined;
        this.fail(retryError);
        return undefined;
      }
    }
    if (this.generation.interrupted) {
      // Keep what the user already saw; the record says it was cut.
      await this.storeReasoning(reply, true);
      if (reply.text) await this.storeMessage(this.assistantRecord(reply, { interrupted: true }));
      return undefined;
    }
    if (!reply.done) {
      this.fail(new LlmError("the model stream ended without a finish", "connection"));
      return undefined;
    }
    const { toolCalls, finishReason, usage, providerItems } = reply.done;
    await this.storeReasoning(reply, false);
    const record = this.assistantRecord(reply, {
      ...(toolCalls.length ? { toolCalls: toolCalls.map((c) => ({ toolCallId: c.id, toolName: c.name })) } : {}),
      // Opaque items the endpoint wants back with this turn (see MessageRecord.providerItems).
      ...(providerItems?.length ? { providerItems: providerItems as Record<string, unknown>[] } : {}),
    });
    // Not awaited here: the caller writes the usage (and, on a final reply, the run state) beside it, in one store write
    // (they are asked for before this event-loop turn ends).
    this.writable();
    this.runtime.handle.gather?.();
    const write = this.runtime.handle.append(record);
    const stored = this.runtime.commit(write, () => {
      this.generation.finalRecordId = record.id;
      this.runtime.publish("message_added", { record });
    });
    return { toolCalls, finishReason, usage, model: reply.model, stored: { write, done: stored, recordId: record.id } };
  }

  /**
   * After a model call: add it to the generation's and the conversation's
   * totals (the conversation's are stored with its metadata, so they survive
   * a restart), then announce usage_updated — and context_nearly_full when
   * this call took the context over 80 % of a declared window.
   */
  private async recordUsage(
    model: string,
    usage: Usage | null,
    compacted?: { contextTokens: number; announce: () => void },
    written?: (write: Promise<void>) => void,
  ): Promise<void> {
    const info = this.deps.modelInfo(model);
    const cost = costOf(usage, info?.pricing);
    const generation = this.generation.countModelCall(usage, cost);
    const windowTokens = info?.contextWindow ?? null;
    let conversation: ConversationUsage | undefined;
    let before = 0;
    this.writable();
    await this.runtime.updateConversation(
      (current) => {
        const stored = conversationTotals(current.usage);
        before = stored.contextTokens;
        // Without usage the context is as last known.
        // After a compaction the context is the summary, whatever the summary request took.
        const contextTokens = compacted ? compacted.contextTokens : usage ? usage.promptTokens + usage.completionTokens : stored.contextTokens;
        conversation = { ...addCall(stored, usage, cost), contextTokens };
        return { ...current, usage: conversation };
      },
      () => {
        const usedTokens = conversation!.contextTokens;
        const generationId = this.generation.id;
        this.runtime.publish("usage_updated", {
          generationId,
          model,
          last: usage,
          generation,
          conversation: conversation!,
          context: { usedTokens, windowTokens },
          cost,
        });
        const threshold = windowTokens === null ? Infinity : windowTokens * CONTEXT_NEARLY_FULL;
        if (usedTokens >= threshold && before < threshold) {
          const percent = Math.round((usedTokens / windowTokens!) * 100);
          this.runtime.publish("notice", {
            generationId,
            level: "warning",
            code: "context_nearly_full",
            message: `The conversation fills ${percent} % of ${model}'s context window (${usedTokens} of ${windowTokens} tokens).`,
            data: { usedTokens, windowTokens, ratio: usedTokens / windowTokens!, model },
          });
        }
        compacted?.announce();
      },
      written,
    );
  }

  /** True when a message steered into this generation waits for its next model call. */
  private steerWaiting(): boolean {
    return this.runtime.queue.some((held) => held.delivery === "steer");
  }

  /** Build the request, stream the answer to subscribers, and collect it. Throws the provider's failure. */
  private async buildRequest(toolHistoryRounds?: number): Promise<{ records: ConversationRecord[]; messages: ChatMessage[]; tools: LlmToolSpec[] }> {
    const { handle } = this.runtime;
    // Steered messages join here: after every tool result of the round before, never between a call and its result.
    if (this.steerWaiting()) {
      this.writable();
      await this.runtime.takeHeld((held) => held.delivery === "steer", "steered");
    }
    const conversation = handle.conversation;
    const rounds = toolHistoryRounds ?? conversation.settings.toolHistoryRounds;
    const records = await readContextRecords((from, to) => handle.readRecords(from, to), handle.recordCount, rounds, this.deps.maxContextBytes);
    const images = await loadContextImages(records, (assetId) => handle.readAsset(assetId), this.deps.maxContextBytes);
    await this.deps.toolsReady?.(this.generation.signal);
    // Tools the conversation's policy denies, or its mode does not offer, are not offered (nor named in the system prompt).
    const tools = this.deps.toolSpecs().filter((spec) => this.refusal(spec.name) === undefined);
    // A conversation's own prompt is sent verbatim (even ""); the template is for those without one. The mode's addendum follows either.
    const system = withModePrompt(
      conversation.system ??
        (await this.deps.defaultSystemPrompt(conversation.workspace ?? process.cwd(), tools.map((t) => t.name), this.generation.signal)),
      this.mode(),
    );
    const messages = buildLlmContext(records, { toolHistoryRounds: rounds, system, images });
    for (const [i, message] of messages.entries()) {
      const real = message.role === "tool" ? this.modelOnly.get(message.tool_call_id) : undefined;
      if (real !== undefined) messages[i] = { ...message, content: real } as ChatMessage;
    }
    return { records, messages, tools };
  }

  /**
   * settings.autoCompact: true when this request would pass its share of the
   * model's declared window (and there is something to compact: a model
   * answer since the last compaction).
   */
  private wantsCompaction(model: string, records: readonly ConversationRecord[], messages: readonly ChatMessage[]): boolean {
    const conversation = this.runtime.handle.conversation;
    const limit = autoCompactLimit(conversation.settings, this.deps.modelInfo(model)?.contextWindow);
    if (limit === null) return false;
    if (!records.some((r) => r.type === "message" && r.role === "assistant" && r.notice === undefined)) return false;
    return estimateRequestTokens(messages, conversation.usage?.contextTokens ?? null) > limit;
  }

  private async streamModel(iteration: number): Promise<ModelReply> {
    // Behind the other model calls asked for in this event-loop turn, past a few: streams already running keep flowing.
    const turn = this.deps.modelCallTurn?.();
    if (turn) await turn;
    const conversation = this.runtime.handle.conversation;
    let { records, messages, tools } = await this.buildRequest();
    // Read per call: a model (or mode) changed by conversation.update mid-step applies from here.
    const mode = this.mode();
    const model = this.generation.modelFor(conversation, mode);
    if (this.wantsCompaction(model, records, messages)) {
      if (!(await this.compact("threshold"))) return { model, text: "", reasoning: "" };
      this.generation.phase = "streaming";
      ({ messages, tools } = await this.buildRequest());
    }
    // generation_started is told here, once the request is built and before it is sent: its frame reaches a client
    // while the endpoint has yet to answer. Told once the request had been written (issue 27, an earlier round), it
    // woke the client just as the endpoint began to answer and this server to read the answer: on two cores shared
    // with a local endpoint, the client then waited for a core 1–3 ms (scheduler traces), and the call's first
    // token's frame with it (TTFT's part after the first token 2.9–3.0 → 1.1 ms in the benchmark's full burst
    // scenario; the write costs ~0.1 ms before the send). It comes before every other event of its call.
    this.runtime.publish("generation_started", { generationId: this.generation.id, model, iteration });
    const reply: ModelReply = { model, text: "", reasoning: "" };
    const progress = new ProgressCoalescer((kind, delta) => this.runtime.publishProgress(this.generation.id, kind, delta));
    // Deltas handed over inside the network read that brought them (ChatRequest.onDelta); a provider that cannot
    // yields them below instead. A failure to publish one ends the call at its next event, as a throw here did.
    let deltaFailure: { error: unknown } | undefined;
    const onDelta = (kind: "text" | "reasoning", delta: string) => {
      if (deltaFailure || this.generation.interrupted) return;
      try {
        if (kind === "text") reply.text += delta;
        else reply.reasoning += delta;
        progress.add(kind, delta);
      } catch (error) {
        deltaFailure = { error };
      }
    };
    try {
      const provider = await this.deps.provider(model);
      const stream = provider.stream({
        model,
        messages,
        tools,
        signal: this.generation.signal,
        ...this.generation.modelControls(conversation.settings, mode),
        onDelta,
      });
      for await (const event of stream) {
        if (deltaFailure) throw deltaFailure.error;
        if (this.generation.interrupted) break;
        if (event.type === "text") {
          reply.text += event.delta;
          progress.add("text", event.delta);
        } else if (event.type === "reasoning") {
          reply.reasoning += event.delta;
          progress.add("reasoning", event.delta);
        } else if (event.type === "notice") {
          // A retry or a rate limit: told at once, and the call goes on.
          progress.flush();
          const { level, code, message, data } = event;
          this.runtime.publish("notice", { generationId: this.generation.id, level, code, message, data });
        } else {
          reply.done = event;
        }
      }
      if (deltaFailure) throw deltaFailure.error;
    } finally {
      // Whatever was shown stays consistent with what is stored next.
      progress.flush();
    }
    return reply;
  }

  /**
   * Compact the conversation: the model is sent the request the next model
   * call would send (same system prompt, tools and history, so a prompt
   * cache still serves it) with the summary prompt after it, and its answer
   * is stored as a compaction record; from then on buildLlmContext starts
   * from it. Nothing is streamed to clients: compaction_started, then
   * usage_updated and compaction_completed once the record is stored.
   * Returns undefined when interrupted; throws what the endpoint threw.
   */
  private async compact(trigger: CompactionTrigger, instructions?: string): Promise<{ finishReason: string | null; usage: Usage | null } | undefined> {
    const conversation = this.runtime.handle.conversation;
    const mode = this.mode();
    const model = this.generation.modelFor(conversation, mode);
    const generationId = this.generation.id;
    this.generation.phase = "streaming";
    this.runtime.publish("compaction_started", { generationId, trigger, model });
    const ask = async (toolHistoryRounds?: number) => {
      const { records, messages, tools } = await this.buildRequest(toolHistoryRounds);
      // The user's unanswered messages at the end are not summarized: they stay, verbatim, after the summary.
      const waiting = trailingUserMessages(records);
      if (waiting > 0 && messages.some((m, i) => i < messages.length - waiting && m.role !== "system")) messages.splice(messages.length - waiting);
      messages.push({ role: "user", content: compactionRequestText(instructions) });
      const provider = await this.deps.provider(model);
      const stream = provider.stream({ model, messages, tools, signal: this.generation.signal, ...this.generation.modelControls(conversation.settings, mode) });
      let text = "";
      let done: { finishReason: string | null; usage: Usage | null } | undefined;
      for await (const event of stream) {
        if (this.generation.interrupted) break;
        if (event.type === "text") text += event.delta;
        else if (event.type === "done") done = event; // tool calls it made anyway are ignored
      }
      return { text, done, chars: JSON.stringify(messages).length };
    };
    let answer: Awaited<ReturnType<typeof ask>>;
    try {
      answer = await ask();
    } catch (error) {
      if (this.generation.interrupted || !isContextLengthError(error)) throw error;
      // Too long even to summarize: once more with every tool output reduced to its name.
      answer = await ask(0);
    }
    if (this.generation.interrupted) return undefined;
    const summary = answer.text.trim();
    if (!answer.done) throw new LlmError("the model stream ended without a finish", "connection");
    if (summary === "") throw new LlmError("the model answered the compaction request with no summary", "malformed");
    const { usage, finishReason } = answer.done;
    const record: CompactionRecord = {
      type: "compaction",
      id: newId("r"),
      summary,
      trigger,
      ...(instructions?.trim() ? { instructions: instructions.trim() } : {}),
      model,
      tokensBefore: usage?.promptTokens ?? estimateTokens(answer.chars),
      tokensAfter: usage?.completionTokens ?? estimateTokens(summary.length),
      generationId,
      timestamp: new Date().toISOString(),
    };
    this.writable();
    await this.runtime.commit(this.runtime.handle.append(record), () => {});
    const { tokensBefore, tokensAfter } = record;
    await this.recordUsage(model, usage, {
      contextTokens: tokensAfter,
      announce: () => this.runtime.publish("compaction_completed", { generationId, recordId: record.id, tokensBefore, tokensAfter, record }),
    });
    return { finishReason, usage };
  }

  private assistantRecord(reply: ModelReply, extra: Partial<MessageRecord>): MessageRecord {
    return {
      type: "message",
      id: newId("r"),
      role: "assistant",
      content: reply.text,
      ...extra,
      generationId: this.generation.id,
      timestamp: new Date().toISOString(),
    };
  }

  /**
   * Store every proposed call. Calls that cannot run at all (unknown tool,
   * a tool the conversation's policy denies, arguments that are not a JSON
   * object) fail at once without asking.
   */
  private async storeToolCalls(calls: ProposedToolCall[]): Promise<ToolCallRecord[]> {
    const records: ToolCallRecord[] = [];
    for (const call of calls) {
      const decoded = decodeArguments(call.arguments);
      const tool = this.deps.tools.get(call.name);
      const allowed = () => this.deps.tools.list().filter((t) => this.refusal(t.name) === undefined);
      const failure = !tool
        ? `Unknown tool "${call.name}". Available tools: ${allowed().map((t) => t.name).join(", ") || "none"}.`
        : (this.refusal(call.name) ?? (decoded.ok ? undefined : formatArgumentIssues(decoded.issues)));
      const args = decoded.ok ? decoded.value : {};
      const record: ToolCallRecord = {
        type: "tool_call",
        id: newId("r"),
        toolCallId: call.id,
        toolName: call.name,
        arguments: args,
        // Computed once and kept with the call: a client shown it later (state.pendingTools, after a restart too) sees what tool_pending showed.
        ...this.displayOf(call.name, args),
        result: failure ?? null,
        success: failure ? false : null,
        status: failure ? "failed" : "pending",
        generationId: this.generation.id,
        timestamp: new Date().toISOString(),
        ...(failure ? { completedAt: new Date().toISOString() } : {}),
      };
      this.writable();
      await this.runtime.commit(this.runtime.handle.append(record), () => {
        if (failure) this.runtime.publish("tool_failed", { generationId: this.generation.id, record });
      });
      records.push(record);
    }
    return records;
  }

  private async offerAll(records: readonly ToolCallRecord[]): Promise<PendingToolCall[]> {
    // Previews take a moment: an interrupt meanwhile finds the calls being offered, not the model streaming.
    if (records.length > 0) this.generation.phase = "pending";
    const calls: PendingToolCall[] = [];
    this.preparedInRound = 0;
    try {
      for (const record of records) calls.push(await this.offer(record));
    } catch (error) {
      // No round will run these: what their tools prepared goes now.
      for (const call of calls) call.dropPreparation();
      throw error;
    }
    return calls;
  }

  /**
   * Offer a stored pending call: announce it, with the change it would make
   * when its tool can tell (Tool.preview), confirming it at once when the
   * conversation's approval policy runs it without asking, or else when an
   * auto-confirm budget allows (the policy goes first, so it spends no
   * budget). A call left waiting gets its confirmation timer.
   */
  private async offer(stored: ToolCallRecord): Promise<PendingToolCall> {
    // A call stored before records kept their display gets it now, in memory, so the state shows what tool_pending shows.
    const display = storedDisplay(stored) ?? this.display(stored);
    const record: ToolCallRecord = { ...stored, ...display };
    const call = new PendingToolCall(record);
    this.generation.calls.set(record.toolCallId, call);
    const tool = this.deps.tools.get(record.toolName);
    // Before the call can be decided (or auto-confirmed): what is approved is what was shown.
    call.changesAt = this.generation.diff.count;
    call.changes = tool && !this.generation.interrupted ? await this.preview(tool, record.arguments) : undefined;
    if (this.generation.interrupted) {
      // Interrupted while offering: nothing more is announced; settleInterrupted skips it.
      call.decide({ action: "interrupted" });
      return call;
    }
    // The mode's approval policy takes the place of settings.approval; toolPolicy and remembered approvals still apply over it.
    const settings = approvalSettingsIn(this.runtime.handle.conversation.settings, this.mode());
    let verdict = tool ? approvalVerdict(tool, settings, { arguments: record.arguments }) : "ask";
    // The workspace's file is read only for a call that would otherwise ask.
    if (tool && verdict === "ask") verdict = approvalVerdict(tool, settings, { arguments: record.arguments, workspaceRules: await this.workspaceRules() });
    const autoReason = verdict === "run" ? "policy" : verdict === "rule" ? "rule" : this.generation.takeAutoConfirm() ? "budget" : undefined;
    const rememberAs = ruleFor(record.toolName, record.arguments);
    if (autoReason) call.decide({ action: "confirm" });
    else if (settings.confirmTimeoutMs) call.startTimeout(settings.confirmTimeoutMs);
    // While the user decides, the tool gets ready (the shell tool starts the process, held): the approval then costs the run alone.
    if (!autoReason && tool?.prepare && this.preparedInRound < MAX_PREPARED_PER_ROUND) this.prepare(call, tool);
    this.runtime.publish("tool_pending", {
      generationId: this.generation.id,
      toolCallId: record.toolCallId,
      toolName: record.toolName,
      arguments: record.arguments,
      ...display,
      autoConfirmed: autoReason !== undefined,
      ...(autoReason ? { autoReason } : {}),
      ...(rememberAs ? { rememberAs } : {}),
      ...(call.changes ? { changes: call.changes } : {}),
    });
    return call;
  }

  /** Tool.prepare for a call that waits for a decision; a preparation that fails costs the call nothing (logged). */
  private prepare(call: PendingToolCall, tool: Tool): void {
    // Not waiting for zod: arguments the data cannot pass are ones the run will refuse (or, undecided, prepare nothing).
    const checked = argumentsNow(tool.parameters, call.record.arguments);
    if (!checked?.ok) return;
    try {
      const cwd = this.runtime.handle.conversation.workspace ?? process.cwd();
      call.prepared(tool.prepare!(checked.value as Record<string, unknown>, { cwd, toolCallId: call.record.toolCallId }));
      this.preparedInRound++;
      // The store too: the approval's first step is storing the call as executing.
      this.runtime.handle.prepareReplaces?.();
    } catch (error) {
      this.deps.log.warn(`could not prepare ${tool.name} for call ${call.record.toolCallId}`, error);
    }
  }

  /**
   * The workspace's remembered approvals, read afresh (a rule another
   * conversation stored counts at once); [] without a workspace. A malformed
   * file is reported once per generation (approvals_file_invalid) and ignored.
   */
  private async workspaceRules(): Promise<ApprovalRule[]> {
    const workspace = this.runtime.handle.conversation.workspace;
    if (!workspace) return [];
    let found: WorkspaceApprovals;
    try {
      found = await readWorkspaceApprovals(workspace, this.generation.signal);
    } catch (error) {
      this.deps.log.warn(`could not read ${APPROVALS_FILE} of ${workspace}`, error);
      return [];
    }
    if (found.problem && !this.approvalsProblemReported && !this.generation.interrupted) {
      this.approvalsProblemReported = true;
      this.runtime.publish("notice", {
        generationId: this.generation.id,
        level: "warning",
        code: "approvals_file_invalid",
        message: `The workspace's ${APPROVALS_FILE} is ignored (its remembered approvals do not apply): ${found.problem}.`,
        data: { path: APPROVALS_FILE, problem: found.problem },
      });
    }
    return found.rules;
  }

  /**
   * What the call would change, from its tool's preview; undefined when the
   * tool has none, the arguments do not validate (the run will say so), or
   * the preview failed (logged: the call is offered all the same).
   */
  private async preview(tool: Tool, args: Record<string, unknown>): Promise<FileChange[] | undefined> {
    if (!tool.preview) return undefined;
    const checked = await checkArguments(tool.parameters, args);
    if (!checked.ok) return undefined;
    try {
      return await tool.preview(checked.value as Record<string, unknown>, {
        cwd: this.runtime.handle.conversation.workspace ?? process.cwd(),
        conversationId: this.runtime.handle.conversation.id,
        signal: this.generation.signal,
      });
    } catch (error) {
      if (!this.generation.interrupted) this.deps.log.warn(`the preview of ${tool.name} failed`, error);
      return undefined;
    }
  }

  /**
   * The change the call will make, when it is not the one tool_pending
   * showed: the arguments were edited, or a call that ran since changed a
   * file (two calls of one round editing the same file: the second's
   * preview was taken before the first ran). Undefined when it is the same.
   */
  private async changesNow(call: PendingToolCall, tool: Tool, edited: Record<string, unknown> | undefined): Promise<FileChange[] | undefined> {
    if (!tool.preview || (!edited && call.changesAt === this.generation.diff.count)) return undefined;
    const changes = await this.preview(tool, edited ?? call.record.arguments);
    if (!edited && JSON.stringify(changes) === JSON.stringify(call.changes)) return undefined;
    return changes;
  }

  /** Kind, title and locations of a call, for tool_pending and tool_executing (from the arguments it carries now). */
  private display(record: ToolCallRecord): ToolCallDisplay {
    return this.displayOf(record.toolName, record.arguments);
  }

  private displayOf(toolName: string, args: Record<string, unknown>): ToolCallDisplay {
    const cwd = this.runtime.handle.conversation.workspace ?? process.cwd();
    return toolCallDisplay(this.deps.tools.get(toolName), toolName, args, cwd);
  }

  /** The conversation's mode now (settings.mode; read per use, so a switch applies from the next model call). */
  private mode() {
    return this.deps.modes.of(this.runtime.handle.conversation.settings);
  }

  /**
   * Why a call of this tool must not run (and the tool is not offered):
   * settings.toolPolicy says never, or the mode does not offer it;
   * undefined when it may.
   */
  private refusal(toolName: string): string | undefined {
    if (isDeniedByPolicy(toolName, this.runtime.handle.conversation.settings)) return deniedByPolicyText(toolName);
    const mode = this.mode();
    return modeOffers(mode, this.deps.tools.get(toolName), toolName) ? undefined : notInModeText(toolName, mode);
  }

  /** Fail a stored pending call without running it (its tool is now denied by the policy). */
  private refuse(record: ToolCallRecord, result: string): Promise<void> {
    const failed: ToolCallRecord = { ...record, status: "failed", success: false, result, completedAt: new Date().toISOString() };
    this.writable();
    return this.runtime.commit(this.runtime.handle.replaceRecord(failed), () =>
      this.runtime.publish("tool_failed", { generationId: this.generation.id, record: failed }),
    );
  }

  /** Decide and run offered calls in order. */
  private async toolRound(calls: PendingToolCall[]): Promise<void> {
    try {
      for (const call of calls) {
        if (call.started) continue; // settled out of order (skipped by tool.confirm)
        if (!call.decided) this.generation.phase = "pending";
        const decision = await call.wait();
        if (this.generation.interrupted || decision.action === "interrupted") return;
        if (call.started) continue;
        call.started = true;
        if (decision.action === "skip") {
          if (call.timedOutAfterMs !== undefined) await this.skip(call.record, "timeout", notRunTimeout(call.timedOutAfterMs));
          else await this.skip(call.record, "user", declinedText(decision.message));
          continue;
        }
        await this.execute(call, decision.action === "edit" ? decision.arguments : undefined);
        if (this.generation.interrupted) return;
      }
    } finally {
      // A round left early (a storage failure) still cancels every confirmation timer it started.
      for (const call of calls) {
        call.dispose();
        call.dropPreparation();
      }
      if (!this.generation.interrupted) this.generation.calls.clear();
    }
  }

  private async execute(call: PendingToolCall, edited: Record<string, unknown> | undefined): Promise<void> {
    const tool = this.deps.tools.get(call.record.toolName);
    this.generation.phase = "executing";
    const executing: ToolCallRecord = {
      ...call.record,
      status: "executing",
      ...(edited ? { arguments: edited, originalArguments: call.record.arguments, edited: true, ...this.displayOf(call.record.toolName, edited) } : {}),
    };
    const changes = tool ? await this.changesNow(call, tool, edited) : undefined;
    // Durable before the tool starts: a crash must never leave a call that ran looking "pending",
    // or the next process would offer it again and it could run twice.
    await this.replace(call, executing, () =>
      this.runtime.publish("tool_executing", {
        generationId: this.generation.id,
        toolCallId: executing.toolCallId,
        toolName: executing.toolName,
        arguments: executing.arguments,
        ...this.display(executing),
        edited: executing.edited === true,
        ...(changes ? { changes } : {}),
      }),
    );
    let success = false;
    let result: string;
    let exitCode: number | null | undefined;
    let diff: string | undefined;
    let change: ToolResult["change"];
    let childConversationId: string | undefined;
    const checked = tool ? await checkArguments(tool.parameters, executing.arguments) : undefined;
    if (!tool || !checked) {
      result = `Unknown tool "${executing.toolName}".`;
    } else if (!checked.ok) {
      result = `Invalid arguments:\n${formatArgumentIssues(checked.issues)}`;
    } else {
      try {
        const outcome = await tool.run(checked.value as Record<string, unknown>, {
          cwd: this.runtime.handle.conversation.workspace ?? process.cwd(),
          conversationId: this.runtime.handle.conversation.id,
          toolCallId: executing.toolCallId,
          generationId: this.generation.id,
          signal: this.generation.signal,
          timeoutMs: this.runtime.handle.conversation.settings.toolTimeoutMs,
          onOutput: (stream, chunk) =>
            this.runtime.publish("tool_output", { generationId: this.generation.id, toolCallId: executing.toolCallId, stream, chunk }),
          // ask_user's questions are stored (offered again after a restart); an MCP server's die with its call.
          requestInput: async (question) => {
            const reply = await this.runtime.askInput(
              { ...question, toolCallId: executing.toolCallId, generationId: this.generation.id },
              question.source === "ask_user",
              this.generation.signal,
              () => this.keepsCalls(),
            );
            if (!reply) throw new QuestionKept();
            return reply;
          },
        });
        if (outcome.modelOutput !== undefined) this.modelOnly.set(executing.toolCallId, outcome.modelOutput);
        success = outcome.success && !this.generation.interrupted;
        result = outcome.output;
        exitCode = outcome.exitCode;
        diff = outcome.diff;
        change = outcome.change;
        childConversationId = outcome.childConversationId;
        if (success && outcome.plan) {
          // The plan is stored and announced before the call completes: a client that sees the call done has the plan.
          this.writable();
          await this.runtime.updatePlan(this.generation.id, outcome.plan);
        }
      } catch (error) {
        // A shutdown with the question open: the call stays executing on disk, its question stored for the next process.
        if (error instanceof QuestionKept) return;
        // Also a plan that could not be stored: the call then fails, so the model does not count on it.
        success = false;
        this.deps.log.error(`tool ${executing.toolName} threw`, error);
        result = `The tool failed: ${error instanceof Error ? error.message : String(error)}`;
      }
    }
    // A change the tool made counts even when the call then failed (interrupted after its write).
    if (change) await this.keepCheckpoint(executing, change);
    const netChange = change ? await this.generation.diff.add(change, this.generation.signal, diff) : undefined;
    const finished: ToolCallRecord = {
      ...executing,
      status: success ? "completed" : "failed",
      success,
      result,
      ...(exitCode !== undefined ? { exitCode } : {}),
      ...(diff !== undefined ? { diff } : {}),
      ...(netChange ? { netChange } : {}),
      ...(childConversationId ? { childConversationId } : {}),
      completedAt: new Date().toISOString(),
    };
    await this.replace(call, finished, () => {
      this.runtime.publish(success ? "tool_completed" : "tool_failed", { generationId: this.generation.id, record: finished });
      if (netChange) this.runtime.publish("generation_diff_updated", { generationId: this.generation.id, changes: this.generation.diff.changes() });
    });
    // Let the result leave before the loop goes on: a socket sends a tick's frames after its first one once
    // the tick is over (websocket-server.ts corks them until process.nextTick; an embedder's link may hold
    // them all), and what follows — the next model call's request — is synchronous work that would hold
    // tool_completed and what came with it back by a few tenths of a millisecond.
    await new Promise<void>((resolve) => process.nextTick(resolve));
  }

  /**
   * Keep what the file was before the call, for conversation.rewind
   * (file-checkpoints.ts); say so when older checkpoints had to go. A
   * checkpoint that cannot be stored costs the call nothing: the change is
   * made, only a rewind could not undo it (logged).
   */
  private async keepCheckpoint(call: ToolCallRecord, change: NonNullable<ToolResult["change"]>): Promise<void> {
    const max = this.deps.maxCheckpointBytes;
    try {
      const dropped = await keepCheckpoint(
        this.runtime.handle,
        { recordId: call.id, toolCallId: call.toolCallId, toolName: call.toolName, path: change.path, before: change.before, after: change.after },
        max,
      );
      if (dropped.length === 0) return;
      const paths = [...new Set(dropped.map((d) => d.path))];
      this.runtime.publish("notice", {
        generationId: this.generation.id,
        level: "warning",
        code: "checkpoint_dropped",
        message: `The file checkpoints passed ${max} bytes (limits.maxCheckpointBytes): the oldest ${dropped.length === 1 ? "one was" : `${dropped.length} were`} dropped, so a rewind to before them cannot restore ${paths.join(", ")}.`,
        data: { dropped: dropped.length, paths, toolCallIds: dropped.map((d) => d.toolCallId), maxCheckpointBytes: max },
      });
    } catch (error) {
      this.deps.log.error(`could not keep the file checkpoint of tool call ${call.toolCallId}`, error);
    }
  }

  /**
   * ask_user questions an earlier process left open (their calls stored as
   * executing): wait for each answer, then complete its call as the tool
   * would have, before anything else runs.
   */
  private async answerStoredQuestions(asked: readonly OpenInput[]): Promise<void> {
    for (const entry of asked) {
      this.generation.phase = "pending";
      const reply = await this.runtime.awaitInput(entry.request.requestId, entry.reply, this.generation.signal, () => this.keepsCalls());
      if (!reply) return;
      const record = this.runtime.handle.openToolCalls.find((r) => r.toolCallId === entry.request.toolCallId && r.status === "executing");
      if (!record) continue;
      const result = askUserResult(reply, entry.request.secret === true);
      if (result.modelOutput !== undefined) this.modelOnly.set(record.toolCallId, result.modelOutput);
      const finished: ToolCallRecord = {
        ...record,
        status: result.success ? "completed" : "failed",
        success: result.success,
        result: result.output,
        completedAt: new Date().toISOString(),
      };
      this.writable();
      await this.runtime.commit(this.runtime.handle.replaceRecord(finished), () =>
        this.runtime.publish(result.success ? "tool_completed" : "tool_failed", { generationId: this.generation.id, record: finished }),
      );
      if (this.generation.interrupted) return;
    }
  }

  /** True when the generation stops without ending its calls: a server shutdown, or its instance lost the conversation. */
  private keepsCalls(): boolean {
    return this.generation.keepPending || this.generation.abandoned !== undefined;
  }

  /** Mark a not-yet-run call skipped (and announce it). */
  async skip(record: ToolCallRecord, reason: "user" | "interrupted" | "max_iterations" | "timeout", result: string): Promise<void> {
    const skipped: ToolCallRecord = {
      ...record,
      status: "skipped",
      success: false,
      result,
      completedAt: new Date().toISOString(),
    };
    this.writable();
    await this.runtime.commit(this.runtime.handle.replaceRecord(skipped), () => {
      const call = this.generation.calls.get(record.toolCallId);
      if (call) call.record = skipped;
      this.runtime.publish("tool_skipped", { generationId: this.generation.id, record: skipped, reason });
    });
  }

  /**
   * After an interrupt: skip every call that never ran, then announce
   * `interrupted` exactly once. An abandoned generation writes nothing (its
   * calls stay pending for the next owner) and ends with its `error` instead.
   */
  async settleInterrupted(): Promise<void> {
    const phase = this.generation.phase;
    const abandoned = this.generation.abandoned;
    const keptPending: string[] = [];
    for (const call of this.generation.calls.values()) {
      if (call.started) continue;
      if (this.generation.keepPending || abandoned) {
        keptPending.push(call.record.toolCallId);
        continue;
      }
      call.started = true;
      await this.skip(call.record, "interrupted", NOT_RUN_INTERRUPTED).catch((error) =>
        this.deps.log.error(`could not store that tool call ${call.record.toolCallId} was skipped`, error),
      );
    }
    this.generation.calls.clear();
    if (abandoned) {
      const { code, message } = abandoned;
      this.generation.outcome = { outcome: "error", error: { code, message } };
      this.runtime.publish("error", { generationId: this.generation.id, code, message });
    } else {
      this.generation.outcome = { outcome: "interrupted" };
      this.runtime.publish("interrupted", { generationId: this.generation.id, phase, ...(keptPending.length > 0 ? { keptPending } : {}) });
    }
    await this.runtime.delivered();
  }

  /** End the generation with one `error` event (as src/generation/wire-errors.ts maps its cause); the conversation stays usable. */
  fail(error: unknown): void {
    const wire = wireError(error, { kind: "generation", generationId: this.generation.id }, this.deps.log);
    if (!wire) this.deps.log.error(`generation ${this.generation.id} failed`, error);
    const { code, message, status } = wire ?? { code: ErrorCodes.INTERNAL_ERROR, message: ErrorMeanings.INTERNAL_ERROR };
    const ending = { code, message, ...(status !== undefined ? { status } : {}) };
    // The runtime's lastError follows from this outcome when the generation ends.
    this.generation.outcome = { outcome: "error", error: ending };
    this.runtime.publish("error", { generationId: this.generation.id, ...ending });
  }

  /** The reply's thinking, as a record of its own right before the reply's message (nothing when it had none). */
  private async storeReasoning(reply: ModelReply, interrupted: boolean): Promise<void> {
    if (!reply.reasoning) return;
    const record: ReasoningRecord = {
      type: "reasoning",
      id: newId("r"),
      content: reply.reasoning,
      ...(interrupted ? { interrupted: true } : {}),
      generationId: this.generation.id,
      timestamp: new Date().toISOString(),
    };
    this.writable();
    await this.runtime.commit(this.runtime.handle.append(record), () => {
      this.runtime.publish("reasoning_added", { generationId: this.generation.id, record });
    });
  }

  /**
   * A final reply's end: the run state naming this generation as the last
   * one (lastGeneration, lastError cleared) is written in the same store
   * write as the assistant record and the usage totals, and generation_complete
   * is announced once all three are durable. Generation.end then finds the
   * run state already stored (nothing more is written).
   */
  private async completeWith(stored: StoredReply, used: Promise<void>, usageWrite: Promise<Promise<void>>, announce: () => void): Promise<void> {
    this.writable();
    const lastGeneration = this.generation.completedSummary(stored.recordId);
    this.runtime.endingWith(lastGeneration);
    const state = { ...this.runtime.runState(), lastError: null };
    const runState = this.runtime.handle.updateRunState(state);
    // In line after the usage's commit (so generation_complete follows usage_updated), announced only when the record
    // and the usage are durable too: a failed one ends the generation with an error instead.
    // The generation ends with its generation_complete, in the same call: a client that saw the event and asks
    // at once (a new step, a compaction) finds it ended.
    await new Promise<void>((resolve, reject) => {
      const ended = Promise.race([usageWrite, used.then(() => Promise.reject(new Error("the usage was not written")))]).then((write) =>
        this.runtime.commit(Promise.all([runState, stored.write, write]).then(() => undefined), () => {
          announce();
          this.generation.end();
          resolve();
        }),
      );
      Promise.all([stored.done, used, ended, runState]).then(() => resolve(), reject);
    });
  }

  private storeMessage(record: MessageRecord): Promise<void> {
    this.writable();
    return this.runtime.commit(this.runtime.handle.append(record), () => {
      this.generation.finalRecordId = record.id;
      this.runtime.publish("message_added", { record });
    });
  }

  private replace(call: PendingToolCall, record: ToolCallRecord, announce: () => void): Promise<void> {
    this.writable();
    return this.runtime.commit(this.runtime.handle.replaceRecord(record), () => {
      call.record = record;
      announce();
    });
  }
}
