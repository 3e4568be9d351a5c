/**
 * The agent's entry points behind `step`, `interrupt`, `tool.confirm`,
 * `tools.list` and `models.list`. It owns the provider registry and the tool
 * registry; the loop itself lives in loop.ts.
 */
import { replyOf } from "../sessions/input-answer.js";
import { MAX_APPROVAL_RULES } from "../../protocol/settings-defaults.js";
import { type InputRespondParams, type InputRespondResult, type ApprovalRule, type ToolConfirmParams, type ToolConfirmResult } from "../../protocol/index.js";
import type { ModelsListResult, ToolSpec } from "../../protocol/tools.js";
import type { LimitsConfig } from "../../protocol/config.js";
import { CONFIG_DEFAULTS } from "../../protocol/config-defaults.js";
import { gatherPromptValues } from "../context/prompt-values.js";
import { compileSystemPrompt, type SystemPromptTemplate } from "../context/system-prompt.js";
import { newId } from "../ids.js";
import { LlmError } from "../llm/provider.js";
import { capabilityProblem } from "../llm/capability-gate.js";
import { UnknownModelError, type ModelRoute, type ProviderRegistry } from "../llm/provider-registry.js";
import type { Logger } from "../logging/logger.js";
import { RpcError } from "../rpc/rpc-error.js";
import type { ConversationRuntime } from "../sessions/conversation-runtime.js";
import { toolSpec } from "../tools/json-schema.js";
import type { Tool, ToolRegistry } from "../tools/tool.js";
import { ClientToolRegistry } from "../tools/client-tools.js";
import { argumentsNow, checkArguments } from "../tools/validate-arguments.js";
import { TurnGate } from "./turn-gate.js";
import { isDeniedByPolicy } from "./approval-policy.js";
import { ModeSet, modeOffers } from "./modes.js";
import { ruleFor, ruleMatches, sameRule } from "../tools/approval-rules.js";
import { addWorkspaceApproval, APPROVALS_FILE, readWorkspaceApprovals } from "./workspace-approvals.js";
import { Generation, type StepControls } from "./generation.js";
import { GenerationWaits } from "./generation-wait.js";
import { runGeneration } from "./loop.js";
import { runRuntimeGeneration } from "./runtime-turn.js";
import type { RuntimeTable } from "../runtimes/runtime-table.js";
import type { ConversationMcpServers } from "../mcp/conversation-mcp-servers.js";
import type { McpTool } from "../mcp/mcp-tool.js";
import { RuntimeUnavailableError, type AgentRuntime } from "../runtimes/runtime.js";

type StepParams = {
  autoConfirm?: boolean | number;
  model?: string;
  /** Not a wire field: a sub-agent's generation spends its parent's budget after its own (Generation.borrowAutoConfirm). */
  borrowAutoConfirm?: () => boolean;
} & StepControls;

/** True when a message of the conversation has an image attached (read a page at a time, stopping at the first). */
async function carriesImage(runtime: ConversationRuntime): Promise<boolean> {
  const { handle } = runtime;
  const count = handle.recordCount;
  for (let from = 0; from < count; from += 500) {
    for (const record of await handle.readRecords(from, Math.min(count, from + 500))) {
      if (record.type === "message" && record.attachments?.some((a) => a.type === "image")) return true;
    }
  }
  return false;
}

export interface AgentOptions {
  /** The default model (config `model`): what a step runs when neither it nor its conversation names one. */
  model?: string;
  /** The template for conversations without a system prompt of their own (config `conversations.systemPrompt`; "" for none). */
  systemPrompt: string;
  limits: Pick<LimitsConfig, "maxGenerations" | "maxContextBytes"> & Partial<Pick<LimitsConfig, "maxCheckpointBytes" | "clientToolGraceMs">>;
  tools: ToolRegistry;
  log: Logger;
  /** The model providers; each makes its LlmProvider on first use, so a server that never generates never loads the SDK. */
  providers: ProviderRegistry;
  /** The server's modes (config `modes` over the built-in ones); default: the built-in ones. */
  modes?: ModeSet;
  /** The agent runtimes (config `runtimes`): a step whose model is `<runtime>/<model>` runs through one. */
  runtimes?: RuntimeTable;
  /** MCP servers of single conversations (conversation.create mcpServers), offered to their conversation only. */
  conversationMcp?: ConversationMcpServers;
}

/** Model calls that start in one turn of the event loop, at most (turn-gate.ts: why, and what 8 and 2 measured). */
const MODEL_CALL_STARTS_PER_TURN = 2;

export class Agent {
  private specs: { revision: number; list: ToolSpec[] } | undefined;
  /** Spreads the starts of model calls asked for together over event-loop turns, across conversations. */
  private readonly modelCallStarts = new TurnGate(MODEL_CALL_STARTS_PER_TURN);
  /** Generations running now, across conversations. */
  private running = 0;
  /** The template for conversations without their own system prompt, compiled once (startServer has refused unknown placeholders). */
  private readonly systemTemplate: SystemPromptTemplate;
  /** generation.wait calls in progress. */
  readonly waits = new GenerationWaits();
  /**
   * Cluster mode: told when a generation starts (its failover mark; the mark goes when the generation's ending is
   * published on the bus, so there is no hook for the end); null for a single instance.
   */
  generationHooks: { started(conversationId: string, generationId: string): void } | null = null;

  /** The modes a conversation can be in (settings.mode): modes.list, and checked by conversation.create / .update. */
  readonly modes: ModeSet;

  /** Tools clients registered on conversations (tools.register), offered to those conversations only. */
  readonly clientTools: ClientToolRegistry;

  constructor(private readonly options: AgentOptions) {
    this.systemTemplate = compileSystemPrompt(options.systemPrompt);
    this.modes = options.modes ?? new ModeSet();
    this.clientTools = new ClientToolRegistry(options.limits.clientToolGraceMs ?? CONFIG_DEFAULTS.limits.clientToolGraceMs);
  }

  /**
   * What one conversation's model is offered: the server's tools, then the
   * conversation's own MCP servers' tools, then its client tools. A
   * conversation MCP server hides the server-wide one of the same name (their
   * tools would share the mcp__<name>__ names) for this conversation only.
   */
  private conversationTools(conversationId: string): ToolRegistry {
    const server = this.options.tools;
    const clients = this.clientTools;
    const mcp = this.options.conversationMcp;
    const own = () => mcp?.tools(conversationId) ?? [];
    const shadowed = (tool: Tool | undefined) => tool !== undefined && tool.source === "mcp" && (mcp?.names(conversationId).has((tool as McpTool).mcpServer) ?? false);
    return {
      list: () => [...server.list().filter((t) => !shadowed(t)), ...own(), ...clients.tools(conversationId)],
      get: (name) => {
        const mine = own().find((t) => t.name === name);
        if (mine) return mine;
        const shared = server.get(name);
        return shared && !shadowed(shared) ? shared : clients.tool(conversationId, name);
      },
    };
  }

  /** The tool specs offered to one conversation's model: the server's (cached), then its own MCP servers', then its client tools. */
  private conversationToolSpecs(conversationId: string): ToolSpec[] {
    const clientTools = this.clientTools.tools(conversationId);
    const mcp = this.options.conversationMcp;
    const names = mcp?.names(conversationId);
    if (!mcp || !names || names.size === 0) return clientTools.length === 0 ? this.toolSpecs : [...this.toolSpecs, ...clientTools.map((t) => toolSpec(t))];
    const server = this.toolSpecs.filter((spec) => {
      const tool = this.options.tools.get(spec.name);
      return !(tool?.source === "mcp" && names.has((tool as McpTool).mcpServer));
    });
    return [...server, ...mcp.tools(conversationId).map((t) => toolSpec(t)), ...clientTools.map((t) => toolSpec(t))];
  }

  /** The tool of that name as the registry holds it now (undefined: none), e.g. to read its annotations. */
  tool(name: string): Tool | undefined {
    return this.options.tools.get(name);
  }

  /** Tool specs offered to the model, derived on first use (keeps start-up short) and again when the registry changes. */
  get toolSpecs(): ToolSpec[] {
    const revision = this.options.tools.revision?.() ?? 0;
    if (this.specs?.revision !== revision) this.specs = { revision, list: this.options.tools.list().map((t) => toolSpec(t)) };
    return this.specs.list;
  }

  /**
   * The `step` method: the context's images are checked against the model
   * first (that needs the records, so it is asynchronous), then start()
   * checks everything else and starts the generation synchronously.
   */
  async step(runtime: ConversationRuntime, params: StepParams): Promise<{ generationId: string }> {
    // Refused before any record is read; start() checks again, as the runtime does when the generation begins.
    runtime.assertCanBegin();
    const model = this.modelOf(runtime, params);
    const route = model === undefined ? undefined : this.route(model);
    if (route?.runtime && !this.agentRuntime(route).capabilities.images && (await carriesImage(runtime))) {
      throw RpcError.capabilityUnsupported(`${route.qualified}: the runtime is not handed images; remove the attachment or use another model`, route.qualified, "runtime");
    }
    // Only a model declared without image input needs the records read.
    if (route?.capabilities && !route.capabilities.imageInput && (await carriesImage(runtime))) {
      const problem = capabilityProblem(route.qualified, route.capabilities, { toolCount: 0, images: true })!;
      throw RpcError.capabilityUnsupported(problem.message, route.qualified, problem.capability);
    }
    return this.start(runtime, params);
  }

  /**
   * Go on with tool calls a stopped generation left pending. No generation
   * survives its process (nor an instance that lost the conversation), so
   * such calls wait on disk with nothing running that could offer, decide
   * or run them: a new generation starts and offers them first. Used when
   * tool.confirm names one of them (after a restart) and by a cluster
   * takeover (at once).
   */
  resume(runtime: ConversationRuntime): { generationId: string } {
    return this.start(runtime, {});
  }

  /**
   * conversation.compact: a generation that only compacts. It is the
   * conversation's generation while it runs, so interrupt cancels it and
   * step waits, and nothing else can append model output meanwhile. Refused
   * while tool calls wait for tool.confirm: their results would land before
   * the summary and never reach the model.
   */
  async compact(runtime: ConversationRuntime, params: { instructions?: string }): Promise<{ generationId: string }> {
    runtime.assertCanBegin();
    const count = runtime.handle.recordCount;
    const last = count === 0 ? undefined : (await runtime.handle.readRecords(count - 1, count))[0];
    if (!last) throw RpcError.invalidParam("conversationId", "the conversation has no records: there is nothing to compact");
    if (last.type === "compaction") throw RpcError.invalidParam("conversationId", "nothing was added since the last compaction");
    if (runtime.inputs.size > 0) {
      throw RpcError.invalidParam("conversationId", "a question waits for the user (state.pendingInputs): answer it (input.respond) or interrupt before compacting");
    }
    const waiting = runtime.storedPendingCalls();
    if (waiting.length > 0) {
      throw RpcError.invalidParam(
        "conversationId",
        `tool calls wait for tool.confirm (${waiting.map((r) => `"${r.toolCallId}"`).join(", ")}): confirm or skip them before compacting`,
      );
    }
    return this.start(runtime, {}, { instructions: params.instructions });
  }

  /**
   * The one place a generation starts (step, resume and compact come here): every
   * check, then the runtime makes it its running generation, then the loop
   * runs — offering the stored pending calls first, if any.
   */
  private start(runtime: ConversationRuntime, params: StepParams, compactOnly?: { instructions?: string }): { generationId: string } {
    runtime.assertCanBegin();
    const model = this.modelOf(runtime, params);
    if (!model) throw RpcError.modelNotConfigured();
    const route = this.route(model);
    const max = this.options.limits.maxGenerations;
    if (this.running >= max) {
      throw RpcError.limitExceeded(`${this.running} generations are running, the most this server runs at once; try again when one ends`, "maxGenerations", max);
    }
    const { temperature, maxTokens, reasoning } = params;
    const generation = new Generation(newId("g"), model, params.autoConfirm, runtime, { temperature, maxTokens, reasoning }, params.model);
    if (route.runtime) return this.startOnRuntime(runtime, generation, route, compactOnly);
    // The controls and tools the first model call would send, refused before anything starts. Only a model with
    // declared capabilities can refuse any: for the others (most steps) the offered tools are not counted at all.
    if (route.capabilities) {
      const settings = runtime.handle.conversation.settings;
      const mode = this.modes.of(settings);
      const tools = this.conversationTools(runtime.id);
      const problem = capabilityProblem(route.qualified, route.capabilities, {
        ...generation.modelControls(settings, mode),
        toolCount: this.conversationToolSpecs(runtime.id).filter((spec) => !isDeniedByPolicy(spec.name, settings) && modeOffers(mode, tools.get(spec.name), spec.name)).length,
        images: false,
      });
      if (problem) throw RpcError.capabilityUnsupported(problem.message, route.qualified, problem.capability);
    }
    generation.compactOnly = compactOnly;
    generation.borrowAutoConfirm = params.borrowAutoConfirm;
    runtime.beginGeneration(generation);
    this.running++;
    this.generationHooks?.started(runtime.id, generation.id);
    const resumed = compactOnly ? [] : runtime.storedPendingCalls();
    // ask_user questions an earlier process left open: this generation waits for their answers first.
    const asked = compactOnly ? [] : runtime.inputs.takeDetached();
    void runGeneration(generation, runtime, this.deps(runtime.id, generation.id), resumed, asked).finally(() => {
      this.running--;
      // Only a generation that completed takes the next queued message; after an interrupt or an error the queue waits.
      if (generation.outcome?.outcome === "completed" && runtime.queue.length > 0) void this.startQueued(runtime);
    });
    return { generationId: generation.id };
  }

  /**
   * A step on an agent runtime: refused up front for what the runtime cannot
   * do (CAPABILITY_UNSUPPORTED, capability "runtime"), its package missing
   * included, then run by runtime-turn.ts instead of the loop.
   */
  private startOnRuntime(runtime: ConversationRuntime, generation: Generation, route: ModelRoute, compactOnly: { instructions?: string } | undefined): { generationId: string } {
    const agentRuntime = this.agentRuntime(route);
    const refuse = (what: string) => RpcError.capabilityUnsupported(`${route.qualified}: ${what}`, route.qualified, "runtime");
    try {
      agentRuntime.checkAvailable();
    } catch (error) {
      if (error instanceof RuntimeUnavailableError) throw refuse(error.message);
      throw error;
    }
    if (compactOnly) throw refuse("the runtime keeps its own context; conversation.compact does not apply to it");
    // A runtime's own pending calls left by a process that died are closed by the turn (runtime-turn.ts); agentwire's are not its to run.
    if (runtime.storedPendingCalls().some((r) => r.runBy !== "runtime")) throw refuse("the conversation has tool calls pending from another model: confirm or skip them first");
    const controls = generation.modelControls(runtime.handle.conversation.settings, this.modes.of(runtime.handle.conversation.settings));
    const { capabilities } = agentRuntime;
    if (controls.temperature !== undefined && !capabilities.temperature) throw refuse("the runtime takes no temperature (unset settings.temperature or step's temperature)");
    if (controls.maxTokens !== undefined && !capabilities.maxTokens) throw refuse("the runtime takes no maxTokens (unset settings.maxTokens or step's maxTokens)");
    if (controls.reasoning !== undefined && controls.reasoning !== "off" && !capabilities.reasoning) throw refuse("the runtime takes no reasoning effort");
    runtime.beginGeneration(generation);
    this.running++;
    this.generationHooks?.started(runtime.id, generation.id);
    const deps = {
      runtime: agentRuntime,
      modelId: route.modelId,
      tools: this.conversationTools(runtime.id),
      log: this.options.log.child({ conversationId: runtime.id, generationId: generation.id }),
      modes: this.modes,
      modelInfo: (model: string) => {
        try {
          return this.options.providers.resolve(model).capabilities;
        } catch {
          return null; // runtime models are not a provider's: no declared window or price
        }
      },
    };
    void runRuntimeGeneration(generation, runtime, deps).finally(() => {
      this.running--;
      if (generation.outcome?.outcome === "completed" && runtime.queue.length > 0) void this.startQueued(runtime);
    });
    return { generationId: generation.id };
  }

  /** Whether the model runs on an agent runtime that takes a call's changed input with its approval. */
  private runtimeTakesEdits(model: string): boolean {
    const route = this.route(model);
    return route.runtime === true && this.agentRuntime(route).capabilities.editApproval;
  }

  /** The agent runtime a runtime route names. */
  private agentRuntime(route: ModelRoute): AgentRuntime {
    if (!this.options.runtimes) throw new Error(`no runtimes configured for ${route.qualified}`);
    return this.options.runtimes.get(route.provider);
  }

  /**
   * Take the oldest queued message (message.append delivery queue) into the
   * conversation and start a generation for it, with the conversation's own
   * model and settings. Nothing is taken when a generation cannot start now
   * (a client's step came first: its completion takes the message instead).
   */
  private async startQueued(runtime: ConversationRuntime): Promise<void> {
    try {
      runtime.assertCanBegin();
      const taken = await runtime.takeHeld((_held, index) => index === 0, "queued");
      if (taken.length === 0) return;
      // A client's step may have begun while the message was stored: that generation sees it.
      if (!runtime.generation) this.start(runtime, {});
    } catch (error) {
      this.options.log.warn(`conversation ${runtime.id}: the next queued message did not start a generation`, error);
    }
  }

  /** The step's model, else its mode's, else the conversation's, else the server's. */
  private modelOf(runtime: ConversationRuntime, params: StepParams): string | undefined {
    const conversation = runtime.handle.conversation;
    return params.model ?? this.modes.of(conversation.settings).model ?? conversation.model ?? this.options.model;
  }

  /** Throws what step would for a model no provider serves (-32602 on `model`), before anything is created for it. */
  checkModel(model: string): void {
    this.route(model);
  }

  /** The model's route; a name that resolves to no provider is a -32602 on `model`. */
  private route(model: string): ModelRoute {
    try {
      return this.options.providers.resolve(model);
    } catch (error) {
      if (error instanceof UnknownModelError) throw RpcError.invalidParam("model", error.message);
      throw error;
    }
  }

  /**
   * End the running generation. keepPending pauses rather than stops: its
   * calls not run stay pending on disk, as a server shutdown leaves them, so
   * the next start (step, or tool.confirm naming one) offers them again —
   * the path a restart takes (recovery.ts).
   */
  async interrupt(runtime: ConversationRuntime, keepPending = false): Promise<{ interrupted: boolean }> {
    // A question an earlier process left open: a generation takes it so that its call ends as cancelled.
    if (!runtime.generation && runtime.inputs.size > 0) {
      try {
        this.resume(runtime);
      } catch (error) {
        this.options.log.warn(`conversation ${runtime.id}: could not start a generation to cancel its open questions`, error);
      }
    }
    const generation = runtime.generation;
    if (!generation) return { interrupted: false };
    await (keepPending ? generation.shutdown() : generation.interrupt());
    return { interrupted: true };
  }

  /**
   * Settle one pending call. Everything from the lookup to the decision is
   * synchronous, so of two clients answering the same call exactly one wins.
   */
  async confirm(runtime: ConversationRuntime, params: ToolConfirmParams): Promise<ToolConfirmResult> {
    runtime.assertLive();
    const { toolCallId } = params;
    const workspace = runtime.handle.conversation.workspace;
    if (params.remember === "workspace") {
      if (!workspace) throw RpcError.invalidParam("remember", "the conversation has no workspace to remember the approval in; use \"conversation\"");
      // Before the decision: a file the user broke is reported, not overwritten, and the call stays undecided.
      const { problem } = await readWorkspaceApprovals(workspace);
      if (problem) throw RpcError.invalidParam("remember", `the workspace's ${APPROVALS_FILE} is not usable (${problem}); fix or remove it, or use "conversation"`);
    }
    if (!runtime.generation?.offered(toolCallId)) {
      const storedPending = runtime.storedPendingCalls().some((r) => r.toolCallId === toolCallId);
      if (storedPending && !runtime.generation) {
        // A pending call left by an earlier server process (or a lost owner): a new generation offers it again.
        this.resume(runtime);
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

    const rule = params.remember ? ruleFor(offered.toolName, offered.arguments) : undefined;
    if (params.remember && !rule) {
      throw RpcError.invalidParam(
        "remember",
        "this call cannot be remembered (its tool_pending has no rememberAs): only a shell command that is one simple command, not run through a wrapper such as sudo or bash, has a prefix to remember",
      );
    }

    switch (params.action) {
      case "skip":
        generation.decide(toolCallId, { action: "skip", ...(params.message !== undefined ? { message: params.message } : {}) });
        break;
      case "edit": {
        if (offered.runBy === "runtime") {
          // Codex answers yes or no only (accept / decline / cancel); Claude takes changed input (capabilities.editApproval).
          if (generation instanceof Generation && this.runtimeTakesEdits(generation.model)) {
            generation.decide(toolCallId, { action: "edit", arguments: params.arguments! });
            break;
          }
          throw RpcError.capabilityUnsupported(
            `the call "${toolCallId}" is the agent runtime's own: it takes confirm or skip, not changed arguments`,
            runtime.handle.conversation.model ?? "",
            "runtime",
          );
        }
        const tool = this.conversationTools(runtime.id).get(offered.toolName);
        const checked = tool ? (argumentsNow(tool.parameters, params.arguments) ?? (await checkArguments(tool.parameters, params.arguments))) : undefined;
        // Waiting for the tool's zod schema (arguments its data refuses): the call may have been decided or interrupted meanwhile.
        const now = generation.offered(toolCallId);
        if (runtime.generation !== generation || !now || now.stage !== "undecided") throw RpcError.toolCallNotPending(toolCallId, now?.status ?? "no longer offered");
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
        runtime.grantAutoConfirm(params.count ?? 0);
        // Calls offered together with this one and still waiting fall under the same budget.
        generation.autoConfirmWaiting();
        break;
      default:
        generation.decide(toolCallId, { action: "confirm" });
        if (rule) await this.remember(runtime, rule, params.remember!);
    }
    return {
      status: params.action === "skip" ? "skipped" : "executing",
      autoConfirmRemaining: runtime.autoConfirmRemaining,
    };
  }

  /**
   * input.respond: end an open question. Validation and the taking-off are
   * synchronous, so of two clients answering the same question exactly one
   * wins. A question left by an earlier process has no generation waiting:
   * one starts (as tool.confirm does for a stored pending call) and goes on
   * with the answer.
   */
  async respondInput(runtime: ConversationRuntime, params: InputRespondParams): Promise<InputRespondResult> {
    runtime.assertLive();
    const entry = runtime.inputs.get(params.requestId);
    if (!entry) throw RpcError.inputNotPending(params.requestId, runtime.inputs.endedAs(params.requestId));
    const reply = replyOf(entry.request, params);
    if (!entry.attached && !runtime.generation) this.resume(runtime);
    await runtime.resolveInput(params.requestId, reply);
    return { outcome: reply.outcome };
  }

  /**
   * Store a remembered approval (after the call it came with was confirmed),
   * then confirm the calls of the same round still waiting that it matches.
   */
  private async remember(runtime: ConversationRuntime, rule: ApprovalRule, scope: "conversation" | "workspace"): Promise<void> {
    try {
      if (scope === "workspace") {
        await addWorkspaceApproval(runtime.handle.conversation.workspace!, rule);
      } else {
        await runtime.updateConversation(
          (current) => {
            const rules = current.settings.approvalRules ?? [];
            if (rules.some((r) => sameRule(r, rule))) return current;
            if (rules.length >= MAX_APPROVAL_RULES) {
              throw RpcError.invalidParam("remember", `the conversation already holds ${MAX_APPROVAL_RULES} approval rules, the most it may (conversation.update settings.approvalRules to remove some)`);
            }
            return { ...current, settings: { ...current.settings, approvalRules: [...rules, rule] }, updatedAt: new Date().toISOString() };
          },
          () => runtime.publish("conversation_updated", { conversation: runtime.handle.conversation, deleted: false }),
        );
      }
    } catch (error) {
      // The call was confirmed all the same (decisions are first-wins and cannot wait for a write): say so.
      const why = error instanceof RpcError || error instanceof Error ? error.message : String(error);
      throw RpcError.invalidParam("remember", `the call was confirmed, but the rule was not stored: ${why}`);
    }
    runtime.generation?.confirmWaiting((toolName, args) => ruleMatches(rule, toolName, args));
  }

  listTools() {
    return { tools: this.toolSpecs };
  }

  /** Every provider's models and status; an endpoint that fails is reported in the result, never as an error. */
  async listModels(): Promise<ModelsListResult> {
    const listed = await this.options.providers.listModels();
    return { ...listed, runtimes: this.options.runtimes?.statuses() ?? [], defaultModel: this.options.model ?? null };
  }

  /**
   * What the loop of one generation needs. Its provider is resolved per model
   * call (the conversation's model may change mid-step) and gated by that
   * model's capabilities; its log lines carry the conversation and generation
   * (fields in --log-format json).
   */
  private deps(conversationId: string, generationId: string) {
    const providers = this.options.providers;
    const provider = async (model: string) => {
      try {
        return providers.providerFor(providers.resolve(model));
      } catch (error) {
        // A model changed mid-step to one no provider serves ends the generation like an endpoint refusal.
        if (error instanceof UnknownModelError) throw new LlmError(`model "${model}": ${error.message}`, "http");
        throw error;
      }
    };
    const modelInfo = (model: string) => {
      try {
        return providers.resolve(model).capabilities;
      } catch {
        return null; // a model no provider serves fails its model call; it has no window or price
      }
    };
    return {
      provider,
      modelInfo,
      tools: this.conversationTools(conversationId),
      toolSpecs: () => this.conversationToolSpecs(conversationId),
      // The conversation's own MCP servers finish their first connection attempt before a model call is offered tools.
      toolsReady: (signal: AbortSignal) => this.options.conversationMcp?.ready(conversationId, signal) ?? Promise.resolve(),
      modes: this.modes,
      log: this.options.log.child({ conversationId, generationId }),
      maxContextBytes: this.options.limits.maxContextBytes,
      maxCheckpointBytes: this.options.limits.maxCheckpointBytes ?? CONFIG_DEFAULTS.limits.maxCheckpointBytes,
      defaultSystemPrompt: async (workspace: string, tools: readonly string[], signal: AbortSignal) =>
        this.systemTemplate.render(await gatherPromptValues(this.systemTemplate, workspace, tools, signal)),
      modelCallTurn: () => this.modelCallStarts.pass(),
    };
  }
}
