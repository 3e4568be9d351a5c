/**
 * The agent's entry points behind `step`, `interrupt`, `tool.confirm`,
 * `tools.list` and `models.list`. It owns the model provider and the tool
 * registry; the loop itself lives in loop.ts.
 */
import type { ToolConfirmParams, ToolConfirmResult } from "../../protocol/index.js";
import type { ToolSpec } from "../../protocol/tools.js";
import type { ServerConfig } from "../config/server-config.js";
import { gatherPromptValues } from "../context/prompt-values.js";
import { compileSystemPrompt, DEFAULT_SYSTEM_PROMPT_TEMPLATE, type SystemPromptTemplate } from "../context/system-prompt.js";
import { newId } from "../ids.js";
import type { LlmProvider } from "../llm/provider.js";
import { LlmError } from "../llm/provider.js";
import type { Logger } from "../logging/logger.js";
import { RpcError } from "../rpc/rpc-error.js";
import type { ConversationRuntime } from "../sessions/conversation-runtime.js";
import { toolSpec } from "../tools/json-schema.js";
import type { ToolRegistry } from "../tools/tool.js";
import { validateArguments } from "../tools/validate-arguments.js";
import { Generation, type StepControls } from "./generation.js";
import { GenerationWaits } from "./generation-wait.js";
import { runGeneration } from "./loop.js";

export interface AgentOptions {
  config: ServerConfig;
  tools: ToolRegistry;
  log: Logger;
  /** Supplies the model provider; created on first use so a server that never generates never loads the SDK. */
  provider: () => Promise<LlmProvider>;
}

export class Agent {
  private specs: { revision: number; list: ToolSpec[] } | undefined;
  private providerPromise: Promise<LlmProvider> | undefined;
  /** Generations running now, across conversations. */
  private running = 0;
  /** The template for conversations without their own system prompt, compiled once (startServer has refused unknown placeholders). */
  private readonly systemTemplate: SystemPromptTemplate;
  /** generation.wait calls in progress. */
  readonly waits = new GenerationWaits();

  constructor(private readonly options: AgentOptions) {
    this.systemTemplate = compileSystemPrompt(options.config.systemPrompt ?? DEFAULT_SYSTEM_PROMPT_TEMPLATE);
  }

  /** Tool specs offered to the model, derived on first use (keeps start-up short) and again when the registry changes. */
  get toolSpecs(): ToolSpec[] {
    const revision = this.options.tools.revision?.() ?? 0;
    if (this.specs?.revision !== revision) this.specs = { revision, list: this.options.tools.list().map((t) => toolSpec(t)) };
    return this.specs.list;
  }

  provider(): Promise<LlmProvider> {
    this.providerPromise ??= this.options.provider();
    return this.providerPromise;
  }

  step(runtime: ConversationRuntime, params: { autoConfirm?: boolean | number; model?: string } & StepControls): { generationId: string } {
    runtime.assertLive();
    if (runtime.generation) throw RpcError.generationInProgress(runtime.generation.id);
    const model = params.model ?? runtime.handle.conversation.model ?? this.options.config.model;
    if (!model) throw RpcError.modelNotConfigured();
    const max = this.options.config.maxGenerations;
    if (this.running >= max) {
      throw RpcError.limitExceeded(`${this.running} generations are running, the most this server runs at once; try again when one ends`, "maxGenerations", max);
    }
    const { temperature, maxTokens, reasoning } = params;
    const generation = new Generation(newId("g"), model, params.autoConfirm, runtime, { temperature, maxTokens, reasoning }, params.model);
    runtime.generation = generation;
    this.running++;
    void runGeneration(generation, runtime, this.deps(runtime.id, generation.id), runtime.storedPendingCalls()).finally(() => this.running--);
    return { generationId: generation.id };
  }

  async interrupt(runtime: ConversationRuntime): Promise<{ interrupted: boolean }> {
    const generation = runtime.generation;
    if (!generation) return { interrupted: false };
    await generation.interrupt();
    return { interrupted: true };
  }

  /**
   * Settle one pending call. Everything from the lookup to the decision is
   * synchronous, so of two clients answering the same call exactly one wins.
   */
  async confirm(runtime: ConversationRuntime, params: ToolConfirmParams): Promise<ToolConfirmResult> {
    runtime.assertLive();
    const { toolCallId } = params;
    if (!runtime.generation?.offered(toolCallId)) {
      const storedPending = runtime.storedPendingCalls().some((r) => r.toolCallId === toolCallId);
      if (storedPending && !runtime.generation) {
        // A pending call left by an earlier server process: resume the loop to offer it again.
        this.step(runtime, {});
      } else {
        const stored = await runtime.handle.findToolCall(toolCallId);
        if (!stored) throw RpcError.toolCallNotFound(toolCallId);
        throw RpcError.toolCallNotPending(toolCallId, stored.status);
      }
    }
    const generation = runtime.generation!;
    const offered = generation.offered(toolCallId);
    if (!offered) throw RpcError.toolCallNotPending(toolCallId, "pending in another round");
    if (offered.stage !== "undecided") throw RpcError.toolCallNotPending(toolCallId, offered.status);

    switch (params.action) {
      case "skip":
        generation.decide(toolCallId, { action: "skip" });
        break;
      case "edit": {
        const tool = this.options.tools.get(offered.toolName);
        const checked = tool ? validateArguments(tool.parameters, params.arguments) : undefined;
        if (checked && !checked.ok) {
          throw RpcError.invalidParams(
            checked.issues.map((i) => ({ path: i.path ? `arguments.${i.path}` : "arguments", message: i.message, code: i.code })),
          );
        }
        generation.decide(toolCallId, { action: "edit", arguments: params.arguments! });
        break;
      }
      case "auto":
        generation.decide(toolCallId, { action: "confirm" });
        runtime.autoConfirmRemaining = params.count ?? 0;
        // Calls offered together with this one and still waiting fall under the same budget.
        generation.autoConfirmWaiting();
        break;
      default:
        generation.decide(toolCallId, { action: "confirm" });
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
      if (models.length === 0) throw RpcError.modelsUnavailable("the endpoint lists no models");
      return { models, defaultModel: this.options.config.model ?? null };
    } catch (error) {
      if (error instanceof LlmError) {
        if (error.status === 404) throw RpcError.modelsUnavailable(error.message, 404);
        throw RpcError.llmError(error.message, error.status);
      }
      throw error;
    }
  }

  /** The loop's dependencies; its log lines carry the conversation and generation (fields in --log-format json). */
  private deps(conversationId: string, generationId: string) {
    return {
      provider: () => this.provider(),
      tools: this.options.tools,
      toolSpecs: () => this.toolSpecs,
      log: this.options.log.child({ conversationId, generationId }),
      maxContextBytes: this.options.config.maxContextBytes,
      defaultSystemPrompt: async (workspace: string, tools: readonly string[], signal: AbortSignal) =>
        this.systemTemplate.render(await gatherPromptValues(this.systemTemplate, workspace, tools, signal)),
    };
  }
}
