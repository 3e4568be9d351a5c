/**
 * `spawn_agent`: the model hands a task to a sub-agent. The call creates a
 * child conversation — an ordinary one, stored like any other, whose
 * metadata names its parent (parentConversationId, parentToolCallId,
 * agentDepth) — with the parent's workspace, system prompt, settings
 * (approval policy, tool policy, remembered rules) and model, stores the
 * prompt as its first user message and runs it with Agent.step, the path a
 * client's `step` takes. The call waits for the child's generation to end and
 * returns its last assistant message. The child's tool calls are offered on
 * the child conversation (clients follow it after subagent_started); an
 * interrupt of the parent interrupts the child.
 *
 * The tool is built before the hub and the agent exist (the agent holds the
 * tool registry), so they are handed over with `attach` once the server has
 * made them.
 */
import { SPAWN_AGENT_TOOL, type Conversation, type MessageRecord } from "../../protocol/index.js";
import type { LimitsConfig } from "../../protocol/config.js";
import { newId } from "../ids.js";
import type { ConversationHub } from "../sessions/conversation-hub.js";
import type { ConversationRuntime } from "../sessions/conversation-runtime.js";
import type { GenerationSummary } from "../store/conversation-store.js";
import { OutputBudget } from "../tools/output-budget.js";
import type { Tool, ToolResult, ToolRunContext } from "../tools/tool.js";
import { builtinParameters } from "../tools/tool-parameters.js";
import type { Agent } from "./agent.js";
import { Generation } from "./generation.js";
import { findMessage } from "./generation-wait.js";
import type { SpawnAgentArguments } from "./spawn-agent-arguments.js";
import { approvalSettingsIn } from "./modes.js";


/** Most of the child's answer handed back to the model (start and end kept), as the shell tool's output budget. */
const MAX_ANSWER_BYTES = 64 * 1024;
/** Longest title a child gets from its prompt. */
const TITLE_CHARS = 80;

export type SubAgentLimits = Pick<LimitsConfig, "maxAgentDepth" | "maxChildAgents" | "maxMessageBytes">;

/** What the tool needs of the server, handed over once the server has made it. */
export interface SubAgentHost {
  hub: ConversationHub;
  agent: Agent;
}

export class SubAgents {
  private host: SubAgentHost | undefined;
  readonly tool: Tool<SpawnAgentArguments>;

  constructor(private readonly limits: SubAgentLimits) {
    this.tool = {
      name: SPAWN_AGENT_TOOL,
      description:
        "Hand a self-contained task to a sub-agent: a new conversation with the same workspace, tools and approval rules that works on the prompt alone, then answers. Returns its final answer. Use it for a side task whose details would clutter this conversation (research, a focused change, a review).",
      parameters: builtinParameters(SPAWN_AGENT_TOOL, async () => (await import("./spawn-agent-arguments.js")).SpawnAgentArguments),
      source: "builtin",
      kind: "other",
      title: "Sub-agent",
      describeCall: (args) => (typeof args.prompt === "string" ? { title: `Sub-agent: ${firstLine(args.prompt, TITLE_CHARS)}` } : {}),
      run: (args, context) => this.run(args, context),
    };
  }

  attach(host: SubAgentHost): void {
    this.host = host;
  }

  private async run(args: SpawnAgentArguments, context: ToolRunContext): Promise<ToolResult> {
    const host = this.host;
    // The parent's generation runs here, so its runtime is loaded here (cluster mode: this instance owns it).
    const parent = host?.hub.loaded(context.conversationId);
    const parentGeneration = parent?.generation;
    if (!host || !parent || !(parentGeneration instanceof Generation) || context.toolCallId === undefined) {
      return failure("spawn_agent runs only as a tool call of a running generation.");
    }
    const bytes = Buffer.byteLength(args.prompt, "utf8");
    if (bytes > this.limits.maxMessageBytes) {
      return failure(`Not started: the prompt is ${bytes} bytes, over the ${this.limits.maxMessageBytes} a message may hold (limits.maxMessageBytes).`);
    }
    const refused = await this.refusal(host, parent.handle.conversation);
    if (refused) return failure(refused);
    try {
      if (args.model !== undefined) host.agent.checkModel(args.model);
      host.agent.modes.check(args.mode, "mode");
    } catch (error) {
      return failure(`The sub-agent was not started: ${messageOf(error)}`);
    }
    // A sub-agent may not run with less approval than its parent: a model told to ask first cannot
    // hand the work to a child in a mode whose calls run unasked.
    const requested = args.mode === undefined ? undefined : host.agent.modes.get(args.mode);
    const parentSettings = parent.handle.conversation.settings;
    if (requested?.approval === "auto" && approvalSettingsIn(parentSettings, host.agent.modes.of(parentSettings)).approval !== "auto") {
      return failure(`The sub-agent was not started: mode "${requested.id}" runs tool calls without asking, and this conversation asks first. Leave mode out, or choose one that asks.`);
    }
    if (context.signal.aborted) return failure("Interrupted before the sub-agent started.");

    const child = await host.hub.create(childConversation(parent.handle.conversation, parentGeneration, context.toolCallId, args));
    const childId = child.id;
    const record: MessageRecord = { type: "message", id: newId("r"), role: "user", content: args.prompt, timestamp: new Date().toISOString() };
    try {
      await child.commit(child.handle.append(record), () => child.publish("message_added", { record }));
    } catch (error) {
      return { ...failure(`The sub-agent's prompt was not stored: ${messageOf(error)}`), childConversationId: childId };
    }
    // Endings are collected from before the start: a generation that ends at once is not missed.
    const endings: GenerationSummary[] = [];
    let wake: (() => void) | undefined;
    const stopListening = child.onGenerationEnd((summary) => {
      endings.push(summary);
      wake?.();
    });
    // A parent stopped for a shutdown (or abandoned by a lost lease) keeps its calls pending: so does the child.
    const interruptChild = () => void (parentGeneration.keepPending ? child.generation?.shutdown() : child.generation?.interrupt());
    try {
      let generationId: string;
      try {
        // The parent's step may have let calls run without asking: the child may spend what is left of that.
        ({ generationId } = await host.agent.step(child, { borrowAutoConfirm: () => parentGeneration.takeAutoConfirm() }));
      } catch (error) {
        return { ...failure(`The sub-agent (conversation ${childId}) did not start: ${messageOf(error)}`), childConversationId: childId };
      }
      context.signal.addEventListener("abort", interruptChild, { once: true });
      // Aborted between the check above and the listener: the listener would never fire.
      if (context.signal.aborted) interruptChild();
      parent.publish("subagent_started", {
        generationId: parentGeneration.id,
        toolCallId: context.toolCallId,
        childConversationId: childId,
        childGenerationId: generationId,
        agentDepth: child.handle.conversation.agentDepth ?? 1,
      });
      let ended: GenerationSummary | undefined;
      while (!(ended = endings.find((s) => s.generationId === generationId))) {
        await new Promise<void>((resolve) => (wake = resolve));
      }
      return { ...(await answerOf(child, ended)), childConversationId: childId };
    } finally {
      context.signal.removeEventListener("abort", interruptChild);
      stopListening();
    }
  }

  /** Why this conversation may not spawn another sub-agent now (limits.maxAgentDepth, limits.maxChildAgents); undefined when it may. */
  private async refusal(host: SubAgentHost, parent: Conversation): Promise<string | undefined> {
    const { maxAgentDepth, maxChildAgents } = this.limits;
    const depth = (parent.agentDepth ?? 0) + 1;
    if (maxAgentDepth === 0) return "Sub-agents are turned off on this server (limits.maxAgentDepth is 0): do the task yourself.";
    if (depth > maxAgentDepth) {
      return `Not started: this conversation is a sub-agent ${depth - 1} level${depth - 1 === 1 ? "" : "s"} deep, and sub-agents may nest at most ${maxAgentDepth} deep (limits.maxAgentDepth). Do the task yourself.`;
    }
    const page = await host.hub.store.list({ limit: maxChildAgents, parentConversationId: parent.id });
    const children = page.data.length + (page.damaged?.length ?? 0);
    if (children >= maxChildAgents) {
      return `Not started: this conversation already created ${children} sub-agents, the most one conversation may (limits.maxChildAgents). Do the task yourself.`;
    }
    return undefined;
  }
}

/** The child: the parent's workspace, system prompt, settings and model (unless the call names one), and who its parent is. */
function childConversation(parent: Conversation, parentGeneration: Generation, toolCallId: string, args: SpawnAgentArguments): Conversation {
  const now = new Date().toISOString();
  const settings = { ...parent.settings };
  if (args.mode !== undefined) settings.mode = args.mode;
  return {
    id: newId("c"),
    title: `Sub-agent: ${firstLine(args.prompt, TITLE_CHARS)}`,
    createdAt: now,
    updatedAt: now,
    model: args.model ?? parentGeneration.modelFor(parent),
    system: parent.system,
    workspace: parent.workspace,
    settings,
    recordCount: 0,
    parentConversationId: parent.id,
    parentToolCallId: toolCallId,
    agentDepth: (parent.agentDepth ?? 0) + 1,
  };
}

/** The tool's result from how the child's generation ended: its last assistant text, bounded. */
async function answerOf(child: ConversationRuntime, ended: GenerationSummary): Promise<ToolResult> {
  const final = ended.finalRecordId ? await findMessage(child.handle, ended.finalRecordId) : null;
  const text = final?.role === "assistant" ? final.content : "";
  const budget = new OutputBudget(MAX_ANSWER_BYTES);
  switch (ended.outcome) {
    case "completed":
      budget.append(text || "(the sub-agent answered with no text)");
      return { success: true, output: budget.toString() };
    case "interrupted":
      budget.append(`The sub-agent (conversation ${child.id}) was interrupted before it finished.${text ? `\nIts last text:\n${text}` : ""}`);
      return { success: false, output: budget.toString() };
    default:
      budget.append(`The sub-agent (conversation ${child.id}) failed: ${ended.error?.message ?? "unknown error"}.${text ? `\nIts last text:\n${text}` : ""}`);
      return { success: false, output: budget.toString() };
  }
}

function firstLine(text: string, max: number): string {
  const line = text.trim().split("\n", 1)[0] ?? "";
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

function failure(output: string): ToolResult {
  return { success: false, output };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
