/**
 * The agent loop of one generation: model call → stored assistant message →
 * offered tool calls → decisions → tool runs → next model call, until the
 * model answers without tools, maxIterations is reached, an error ends it,
 * or it is interrupted. Records are written at their boundaries only;
 * token deltas go to sockets, never to disk.
 */
import { ErrorCodes, type MessageRecord, type ToolCallRecord } from "../../protocol/index.js";
import { buildLlmContext } from "../context/build-llm-context.js";
import { newId } from "../ids.js";
import type { LlmProvider, LlmToolSpec, ProposedToolCall, Usage } from "../llm/provider.js";
import { LlmError } from "../llm/provider.js";
import type { Logger } from "../logging/logger.js";
import type { ConversationRuntime } from "../sessions/conversation-runtime.js";
import { StoreFileError } from "../store/store-file-error.js";
import type { ToolRegistry } from "../tools/tool.js";
import { formatArgumentIssues, validateArguments } from "../tools/validate-arguments.js";
import type { Generation } from "./generation.js";
import { PendingToolCall } from "./tool-decision.js";

export interface LoopDeps {
  provider(): Promise<LlmProvider>;
  tools: ToolRegistry;
  toolSpecs: LlmToolSpec[];
  log: Logger;
}

const DECLINED = "The user declined to run this tool.";
const NOT_RUN_INTERRUPTED = "[not run: the generation was interrupted]";
const NOT_RUN_MAX_ITERATIONS = "[not run: the step reached maxIterations]";

/** Runs a generation to its end. Never throws: every outcome is reported as events. */
export async function runGeneration(
  generation: Generation,
  runtime: ConversationRuntime,
  deps: LoopDeps,
  resumed: ToolCallRecord[],
): Promise<void> {
  const loop = new Loop(generation, runtime, deps);
  try {
    await loop.run(resumed);
  } catch (error) {
    if (generation.interrupted) deps.log.warn(`generation ${generation.id} raised after its interrupt`, error);
    else loop.fail(error);
  } finally {
    if (generation.interrupted) await loop.settleInterrupted().catch((e) => deps.log.error("settling an interrupt failed", e));
    runtime.generation = null;
    generation.end();
  }
}

class Loop {
  constructor(
    private readonly gen: Generation,
    private readonly rt: ConversationRuntime,
    private readonly deps: LoopDeps,
  ) {}

  async run(resumed: ToolCallRecord[]): Promise<void> {
    if (resumed.length > 0) {
      await this.toolRound(resumed.map((r) => this.offer(r)));
      if (this.gen.interrupted) return;
    }
    const maxIterations = this.rt.handle.conversation.settings.maxIterations;
    for (let iteration = 1; ; iteration++) {
      const reply = await this.callModel(iteration);
      if (!reply) return; // interrupted or failed; already reported
      const { assistant, toolCalls, finishReason, usage } = reply;
      const complete = (final: boolean) =>
        this.rt.publish("generation_complete", { generationId: this.gen.id, iteration, finishReason, usage, final });

      if (toolCalls.length === 0) {
        this.rt.lastError = null;
        complete(true);
        return;
      }
      const records = await this.storeToolCalls(toolCalls, assistant);
      if (iteration >= maxIterations) {
        for (const record of records) if (record.status === "pending") await this.skip(record, "max_iterations", NOT_RUN_MAX_ITERATIONS);
        await this.storeMessage({
          type: "message",
          id: newId("r"),
          role: "assistant",
          content: `Stopped after ${maxIterations} model calls (maxIterations). Send step to continue.`,
          notice: "max_iterations",
          generationId: this.gen.id,
          timestamp: new Date().toISOString(),
        });
        this.rt.lastError = null;
        complete(true);
        return;
      }
      complete(false);
      const offered = records.filter((r) => r.status === "pending").map((r) => this.offer(r));
      await this.toolRound(offered);
      if (this.gen.interrupted) return;
    }
  }

  /** One model call, streamed. Returns undefined when it was interrupted or failed (already reported). */
  private async callModel(iteration: number): Promise<
    | { assistant: MessageRecord; toolCalls: ProposedToolCall[]; finishReason: string | null; usage: Usage | null }
    | undefined
  > {
    const conversation = this.rt.handle.conversation;
    this.gen.phase = "streaming";
    const messages = buildLlmContext(this.rt.handle.records, {
      toolHistoryRounds: conversation.settings.toolHistoryRounds,
      system: conversation.system ?? undefined,
    });
    this.rt.publish("generation_started", { generationId: this.gen.id, model: this.gen.model, iteration });
    let text = "";
    let reasoning = "";
    const progress = new ProgressCoalescer((kind, delta) =>
      this.rt.publish("generation_progress", { generationId: this.gen.id, kind, delta }),
    );
    let done: { finishReason: string | null; usage: Usage | null; toolCalls: ProposedToolCall[] } | undefined;
    try {
      const provider = await this.deps.provider();
      const stream = provider.stream({
        model: this.gen.model,
        messages,
        tools: this.deps.toolSpecs,
        signal: this.gen.signal,
      });
      for await (const event of stream) {
        if (this.gen.interrupted) break;
        if (event.type === "text") {
          text += event.delta;
          progress.add("text", event.delta);
        } else if (event.type === "reasoning") {
          reasoning += event.delta;
          progress.add("reasoning", event.delta);
        } else {
          done = event;
        }
      }
    } catch (error) {
      if (!this.gen.interrupted) {
        progress.flush();
        this.fail(error);
        return undefined;
      }
    }
    // Whatever was shown stays consistent with what is stored next.
    progress.flush();
    if (this.gen.interrupted) {
      // Keep what the user already saw; the record says it was cut.
      if (text || reasoning) {
        await this.storeMessage({
          type: "message",
          id: newId("r"),
          role: "assistant",
          content: text,
          ...(reasoning ? { reasoning } : {}),
          interrupted: true,
          generationId: this.gen.id,
          timestamp: new Date().toISOString(),
        });
      }
      return undefined;
    }
    if (!done) {
      this.fail(new LlmError("the model stream ended without a finish", "connection"));
      return undefined;
    }
    const assistant: MessageRecord = {
      type: "message",
      id: newId("r"),
      role: "assistant",
      content: text,
      ...(reasoning ? { reasoning } : {}),
      ...(done.toolCalls.length
        ? { toolCalls: done.toolCalls.map((c) => ({ toolCallId: c.id, toolName: c.name })) }
        : {}),
      generationId: this.gen.id,
      timestamp: new Date().toISOString(),
    };
    await this.storeMessage(assistant);
    return { assistant, toolCalls: done.toolCalls, finishReason: done.finishReason, usage: done.usage };
  }

  /**
   * Store every proposed call. Calls that cannot run at all (unknown tool,
   * arguments that are not a JSON object) fail at once without asking.
   */
  private async storeToolCalls(calls: ProposedToolCall[], _assistant: MessageRecord): Promise<ToolCallRecord[]> {
    const records: ToolCallRecord[] = [];
    for (const call of calls) {
      const parsed = parseArguments(call.arguments);
      const tool = this.deps.tools.get(call.name);
      const failure = !tool
        ? `Unknown tool "${call.name}". Available tools: ${this.deps.tools.list().map((t) => t.name).join(", ") || "none"}.`
        : parsed.error;
      const record: ToolCallRecord = {
        type: "tool_call",
        id: newId("r"),
        toolCallId: call.id,
        toolName: call.name,
        arguments: parsed.value,
        result: failure ?? null,
        success: failure ? false : null,
        status: failure ? "failed" : "pending",
        generationId: this.gen.id,
        timestamp: new Date().toISOString(),
        ...(failure ? { completedAt: new Date().toISOString() } : {}),
      };
      const written = this.rt.handle.append(record);
      if (failure) this.rt.publish("tool_failed", { generationId: this.gen.id, record });
      await written;
      records.push(record);
    }
    return records;
  }

  /** Offer a stored pending call: announce it, auto-confirming it when a budget allows. */
  private offer(record: ToolCallRecord): PendingToolCall {
    const call = new PendingToolCall(record);
    this.gen.offered.set(record.toolCallId, call);
    const autoConfirmed = takeAutoConfirm(this.gen, this.rt);
    if (autoConfirmed) call.decide({ action: "confirm" });
    this.rt.publish("tool_pending", {
      generationId: this.gen.id,
      toolCallId: record.toolCallId,
      toolName: record.toolName,
      arguments: record.arguments,
      autoConfirmed,
    });
    return call;
  }

  /** Decide and run offered calls in order. */
  private async toolRound(calls: PendingToolCall[]): Promise<void> {
    try {
      for (const call of calls) {
        if (call.started) continue; // settled out of order (skipped by tool.confirm)
        if (!call.decided) this.gen.phase = "pending";
        const decision = await call.wait();
        if (this.gen.interrupted || decision.action === "interrupted") return;
        if (call.started) continue;
        call.started = true;
        if (decision.action === "skip") {
          await this.skip(call.record, "user", DECLINED);
          continue;
        }
        await this.execute(call, decision.action === "edit" ? decision.arguments : undefined);
        if (this.gen.interrupted) return;
      }
    } finally {
      if (!this.gen.interrupted) this.gen.offered.clear();
    }
  }

  private async execute(call: PendingToolCall, edited: Record<string, unknown> | undefined): Promise<void> {
    const tool = this.deps.tools.get(call.record.toolName);
    this.gen.phase = "executing";
    const executing: ToolCallRecord = {
      ...call.record,
      status: "executing",
      ...(edited ? { arguments: edited, originalArguments: call.record.arguments, edited: true } : {}),
    };
    // Durable before the tool starts: a crash must never leave a call that ran looking "pending",
    // or the next process would offer it again and it could run twice.
    await this.replace(call, executing, () =>
      this.rt.publish("tool_executing", {
        generationId: this.gen.id,
        toolCallId: executing.toolCallId,
        toolName: executing.toolName,
        arguments: executing.arguments,
        edited: executing.edited === true,
      }),
    );
    let success = false;
    let result: string;
    let exitCode: number | null | undefined;
    const checked = tool ? validateArguments(tool.parameters, executing.arguments) : undefined;
    if (!tool || !checked) {
      result = `Unknown tool "${executing.toolName}".`;
    } else if (!checked.ok) {
      result = `Invalid arguments:\n${formatArgumentIssues(checked.issues)}`;
    } else {
      try {
        const outcome = await tool.run(checked.value as Record<string, unknown>, {
          cwd: this.rt.handle.conversation.workspace ?? process.cwd(),
          signal: this.gen.signal,
          timeoutMs: this.rt.handle.conversation.settings.toolTimeoutMs,
          onOutput: (stream, chunk) =>
            this.rt.publish("tool_output", { generationId: this.gen.id, toolCallId: executing.toolCallId, stream, chunk }),
        });
        success = outcome.success && !this.gen.interrupted;
        result = outcome.output;
        exitCode = outcome.exitCode;
      } catch (error) {
        this.deps.log.error(`tool ${executing.toolName} threw`, error);
        result = `The tool failed: ${error instanceof Error ? error.message : String(error)}`;
      }
    }
    const finished: ToolCallRecord = {
      ...executing,
      status: success ? "completed" : "failed",
      success,
      result,
      ...(exitCode !== undefined ? { exitCode } : {}),
      completedAt: new Date().toISOString(),
    };
    await this.replace(call, finished, () =>
      this.rt.publish(success ? "tool_completed" : "tool_failed", { generationId: this.gen.id, record: finished }),
    );
  }

  /** Mark a not-yet-run call skipped (and announce it). */
  async skip(record: ToolCallRecord, reason: "user" | "interrupted" | "max_iterations", result: string): Promise<void> {
    const skipped: ToolCallRecord = {
      ...record,
      status: "skipped",
      success: false,
      result,
      completedAt: new Date().toISOString(),
    };
    const call = this.gen.offered.get(record.toolCallId);
    if (call) call.record = skipped;
    const written = this.rt.handle.replaceRecord(skipped);
    this.rt.publish("tool_skipped", { generationId: this.gen.id, record: skipped, reason });
    await written;
  }

  /** After an interrupt: skip every call that never ran, then announce `interrupted` exactly once. */
  async settleInterrupted(): Promise<void> {
    const phase = this.gen.phase;
    for (const call of this.gen.offered.values()) {
      if (call.started || this.gen.keepPending) continue;
      call.started = true;
      await this.skip(call.record, "interrupted", NOT_RUN_INTERRUPTED);
    }
    this.gen.offered.clear();
    this.rt.publish("interrupted", { generationId: this.gen.id, phase });
  }

  /** End the generation with one `error` event; the conversation stays usable. */
  fail(error: unknown): void {
    let code: number = ErrorCodes.INTERNAL_ERROR;
    let message = "Internal error";
    let status: number | undefined;
    if (error instanceof LlmError) {
      code = ErrorCodes.LLM_ERROR;
      message = error.message;
      status = error.status;
    } else if (error instanceof StoreFileError) {
      // The path stays in the server log; the client learns what kind of failure it was.
      this.deps.log.error(`generation ${this.gen.id} could not write its records`, error);
      code = ErrorCodes.STORAGE_ERROR;
      message = "Storage error: the conversation could not be written to disk";
    } else {
      this.deps.log.error(`generation ${this.gen.id} failed`, error);
    }
    const timestamp = new Date().toISOString();
    this.rt.lastError = { code, message, ...(status !== undefined ? { status } : {}), timestamp };
    this.rt.publish("error", { generationId: this.gen.id, code, message, ...(status !== undefined ? { status } : {}) });
  }

  private async storeMessage(record: MessageRecord): Promise<void> {
    const written = this.rt.handle.append(record);
    this.rt.publish("message_added", { record });
    await written;
  }

  private async replace(call: PendingToolCall, record: ToolCallRecord, announce: () => void): Promise<void> {
    call.record = record;
    const written = this.rt.handle.replaceRecord(record);
    announce();
    await written;
  }
}

/**
 * The first delta of a tick leaves at once (no added latency for a paced
 * stream); deltas that follow in the same tick are merged and leave as one
 * `generation_progress` frame right after it (setImmediate), so a burst costs
 * a few frames, not one per token.
 */
class ProgressCoalescer {
  private kind: "text" | "reasoning" = "text";
  private buffered = "";
  private holding = false;

  constructor(private readonly emit: (kind: "text" | "reasoning", delta: string) => void) {}

  add(kind: "text" | "reasoning", delta: string): void {
    if (!this.holding) {
      this.holding = true;
      setImmediate(() => {
        this.holding = false;
        this.flush();
      });
      this.emit(kind, delta);
      return;
    }
    if (kind !== this.kind) this.flush();
    this.kind = kind;
    this.buffered += delta;
  }

  flush(): void {
    if (!this.buffered) return;
    const delta = this.buffered;
    this.buffered = "";
    this.emit(this.kind, delta);
  }
}

/** Consume one unit of auto-confirm budget: the step's first, then the conversation's. */
export function takeAutoConfirm(generation: Generation, runtime: ConversationRuntime): boolean {
  if (generation.stepAutoConfirm > 0) {
    generation.stepAutoConfirm--;
    return true;
  }
  if (runtime.autoConfirmRemaining > 0) {
    runtime.autoConfirmRemaining--;
    return true;
  }
  return false;
}

function parseArguments(text: string): { value: Record<string, unknown>; error?: string } {
  if (text.trim() === "") return { value: {} };
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === "object" && value !== null && !Array.isArray(value)) return { value: value as Record<string, unknown> };
    return { value: {}, error: "The tool arguments must be a JSON object." };
  } catch {
    return { value: {}, error: `The tool arguments are not valid JSON: ${text.slice(0, 200)}` };
  }
}
