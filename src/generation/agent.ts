/**
 * The agent's entry points behind `step`, `interrupt`, `tool.confirm`,
 * `tools.list` and `models.list`. It owns the model provider and the tool
 * registry; the loop itself lives in loop.ts.
 */
import { ErrorCodes, type ToolCallRecord, type ToolConfirmParams, type ToolConfirmResult } from "../../protocol/index.js";
import type { ServerConfig } from "../config.js";
import { newId } from "../ids.js";
import type { LlmProvider, LlmToolSpec } from "../llm/provider.js";
import { LlmError } from "../llm/provider.js";
import type { Logger } from "../logging/logger.js";
import { RpcError } from "../rpc/rpc-error.js";
import type { ConversationRuntime } from "../sessions/conversation-runtime.js";
import { toolSpec } from "../tools/json-schema.js";
import type { ToolRegistry } from "../tools/tool.js";
import { formatArgumentIssues, validateArguments } from "../tools/validate-arguments.js";
import { Generation } from "./generation.js";
import { runGeneration, takeAutoConfirm } from "./loop.js";
import { storedPendingCalls } from "./recovery.js";

export interface AgentOptions {
  config: ServerConfig;
  tools: ToolRegistry;
  log: Logger;
  /** Supplies the model provider; created on first use so a server that never generates never loads the SDK. */
  provider: () => Promise<LlmProvider>;
}

export class Agent {
  private specs: LlmToolSpec[] | undefined;
  private providerPromise: Promise<LlmProvider> | undefined;

  constructor(private readonly options: AgentOptions) {}

  /** Tool specs offered to the model, derived once, on first use (keeps start-up short). */
  get toolSpecs(): LlmToolSpec[] {
    this.specs ??= this.options.tools.list().map((t) => toolSpec(t));
    return this.specs;
  }

  provider(): Promise<LlmProvider> {
    this.providerPromise ??= this.options.provider();
    return this.providerPromise;
  }

  step(runtime: ConversationRuntime, params: { autoConfirm?: boolean | number; model?: string }): { generationId: string } {
    runtime.assertLive();
    if (runtime.generation) {
      throw RpcError.of("GENERATION_IN_PROGRESS", `generation ${runtime.generation.id} is running; interrupt it or wait`, {
        generationId: runtime.generation.id,
      });
    }
    const model = params.model ?? runtime.handle.conversation.model ?? this.options.config.model;
    if (!model) {
      throw RpcError.of(
        "MODEL_NOT_CONFIGURED",
        "set AGENTWIRE_MODEL or --model, the conversation's model, or step's model",
      );
    }
    const generation = new Generation(newId("g"), model, params.autoConfirm);
    runtime.generation = generation;
    const resumed = storedPendingCalls(runtime.handle.records);
    void runGeneration(generation, runtime, this.deps(), resumed);
    return { generationId: generation.id };
  }

  async interrupt(runtime: ConversationRuntime): Promise<{ interrupted: boolean }> {
    const generation = runtime.generation;
    if (!generation) return { interrupted: false };
    await generation.interrupt();
    return { interrupted: true };
  }

  /**
   * Settle one pending call. Everything before the decision is synchronous,
   * so of two clients answering the same call exactly one wins.
   */
  confirm(runtime: ConversationRuntime, params: ToolConfirmParams): ToolConfirmResult {
    runtime.assertLive();
    let generation = runtime.generation instanceof Generation ? runtime.generation : undefined;
    if (!generation?.offered.has(params.toolCallId)) {
      const stored = findToolRecord(runtime, params.toolCallId);
      if (!stored) {
        throw RpcError.of("TOOL_CALL_NOT_FOUND", `no tool call "${params.toolCallId}" in this conversation`, {
          toolCallId: params.toolCallId,
        });
      }
      if (stored.status !== "pending" || runtime.generation) {
        throw notPending(stored.toolCallId, stored.status);
      }
      // A pending call left by an earlier server process: resume the loop to offer it again.
      this.step(runtime, {});
      generation = runtime.generation as Generation | null ?? undefined;
      if (!generation?.offered.has(params.toolCallId)) throw notPending(stored.toolCallId, stored.status);
    }
    const call = generation.offered.get(params.toolCallId)!;
    if (call.decided || call.started) throw notPending(call.record.toolCallId, call.current?.action ?? call.record.status);

    switch (params.action) {
      case "skip":
        call.decide({ action: "skip" });
        break;
      case "edit": {
        const tool = this.options.tools.get(call.record.toolName);
        const checked = tool ? validateArguments(tool.parameters, params.arguments) : undefined;
        if (checked && !checked.ok) {
          const issues = checked.issues.map((i) => ({ path: i.path ? `arguments.${i.path}` : "arguments", message: i.message }));
          throw new RpcError(
            ErrorCodes.INVALID_PARAMS,
            `Invalid params: arguments do not fit the ${call.record.toolName} tool: ${formatArgumentIssues(checked.issues).replace(/\n/g, "; ")}`,
            { issues },
          );
        }
        call.decide({ action: "edit", arguments: params.arguments! });
        break;
      }
      case "auto":
        call.decide({ action: "confirm" });
        runtime.autoConfirmRemaining = params.count ?? 0;
        // Calls offered together with this one and still waiting fall under the same budget.
        for (const other of generation.offered.values()) {
          if (!other.decided && takeAutoConfirm(generation, runtime)) other.decide({ action: "confirm" });
        }
        break;
      default:
        call.decide({ action: "confirm" });
    }
    return {
      status: params.action === "skip" ? "skipped" : "executing",
      autoConfirmRemaining: runtime.autoConfirmRemaining,
    };
  }

  listTools() {
    return { tools: this.toolSpecs };
  }

  async listModels() {
    try {
      const provider = await this.provider();
      const models = await provider.listModels(AbortSignal.timeout(15_000));
      if (models.length === 0) throw RpcError.of("MODELS_UNAVAILABLE", "the endpoint lists no models");
      return { models, defaultModel: this.options.config.model ?? null };
    } catch (error) {
      if (error instanceof LlmError) {
        if (error.status === 404) throw RpcError.of("MODELS_UNAVAILABLE", error.message, { status: 404 });
        throw RpcError.of("LLM_ERROR", error.message, error.status !== undefined ? { status: error.status } : undefined);
      }
      throw error;
    }
  }

  private deps() {
    return { provider: () => this.provider(), tools: this.options.tools, toolSpecs: this.toolSpecs, log: this.options.log };
  }
}

function notPending(toolCallId: string, status: string): RpcError {
  return RpcError.of("TOOL_CALL_NOT_PENDING", `tool call "${toolCallId}" was already decided (${status})`, {
    toolCallId,
    status,
  });
}

function findToolRecord(runtime: ConversationRuntime, toolCallId: string): ToolCallRecord | undefined {
  const records = runtime.handle.records;
  for (let i = records.length - 1; i >= 0; i--) {
    const r = records[i]!;
    if (r.type === "tool_call" && r.toolCallId === toolCallId) return r;
  }
  return undefined;
}
