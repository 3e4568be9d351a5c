/**
 * The seam between agentwire and an agent runtime: a whole agent (Codex;
 * later Claude, or a CLI such as Gemini CLI or cursor-agent) that runs its
 * own loop and tools. src/generation/runtime-turn.ts drives one step through
 * it and carries its events as agentwire's; nothing there knows which
 * runtime it is. The shape follows CloudCLI's provider interface (launch /
 * resume / stop / wait, set model, set thinking, capabilities), cut to what
 * one conversation needs: a session per conversation, a turn per step.
 *
 * A CLI runtime (a child process printing JSON lines) implements the same
 * two interfaces with json-lines-process.ts, and slots in through
 * runtime-table.ts without touching the loop.
 */
import type { ReasoningLevel } from "../llm/provider.js";
import type { PlanEntry } from "../../protocol/plan.js";
import type { TokenUsage } from "../../protocol/usage.js";

/** What a runtime can do; what it cannot is refused with CAPABILITY_UNSUPPORTED (capability "runtime") before anything starts. */
export interface RuntimeCapabilities {
  /** It asks before running some calls (approval requests become tool_pending). */
  approvals: boolean;
  /** An approval may be answered with changed input (tool.confirm edit). */
  editApproval: boolean;
  /** It stops a running turn on request (interrupt); without it, interrupt kills its process. */
  interrupt: boolean;
  /** A session can be resumed by its id (Conversation.runtimeSession). */
  resume: boolean;
  /** The model can change between turns of one session. */
  setModel: boolean;
  /** It takes a reasoning effort per turn. */
  reasoning: boolean;
  /** It takes images in a prompt. */
  images: boolean;
  /** It takes a sampling temperature / an output token cap (agent runtimes mostly do not). */
  temperature: boolean;
  maxTokens: boolean;
}

/** How a session is opened (a new one, or `resumeId` to go on with one the runtime stored). */
export interface RuntimeSessionOptions {
  /** The working directory the runtime's tools run in. */
  cwd: string;
  model: string;
  /** Instructions added to the runtime's own (the conversation's system prompt). */
  instructions?: string;
  resumeId?: string;
}

/** A question the runtime asks before it runs a call; answered once. */
export interface RuntimeApproval {
  /** The call it is about (the id of its `tool_started`, when one came first). */
  callId: string;
  toolName: string;
  arguments: Record<string, unknown>;
  /** Why it asks, when it says. */
  reason?: string;
  /** `answer.arguments`: the input as the user edited it (accept; only where capabilities.editApproval); `answer.message`: the user's reason (decline). */
  respond(decision: "accept" | "decline" | "cancel", answer?: RuntimeApprovalAnswer): void;
}

/**
 * Questions the runtime's agent puts to the user (Codex's request_user_input,
 * Claude's AskUserQuestion), asked one after the other as agentwire's
 * input_requested; answered once.
 */
export interface RuntimeQuestion {
  /** The runtime's call that asks. */
  callId: string;
  questions: RuntimeQuestionItem[];
  /** The answers by question id, each a list (the choice or choices picked, or the text typed); null: the user declined or it was cancelled. */
  respond(answers: Record<string, string[]> | null): void;
}

export interface RuntimeQuestionItem {
  id: string;
  question: string;
  /** Answers to pick from (the user picks one, or several with `multiple`). */
  choices?: string[];
  multiple?: boolean;
  secret?: boolean;
}

/** What comes with a decision besides yes or no. */
export interface RuntimeApprovalAnswer {
  arguments?: Record<string, unknown>;
  message?: string;
}

/**
 * What a turn reports, in order. A tool call is announced by `tool_started`
 * (running: no question) or `approval` (waiting for an answer), then ends with
 * `tool_finished`. `message` closes a piece of assistant text the deltas
 * streamed; `done` is always last.
 */
export type RuntimeEvent =
  | { type: "text"; delta: string }
  | { type: "reasoning"; delta: string }
  | { type: "message"; text: string; reasoning?: string }
  | { type: "tool_started"; callId: string; toolName: string; arguments: Record<string, unknown> }
  | { type: "tool_output"; callId: string; chunk: string }
  | { type: "tool_finished"; callId: string; success: boolean; result: string; exitCode?: number | null }
  | { type: "approval"; approval: RuntimeApproval }
  | { type: "question"; question: RuntimeQuestion }
  /** One model call's tokens (one per call the runtime reports; agentwire's usage_updated). */
  | { type: "usage"; usage: TokenUsage }
  /** The runtime's own plan or to-do list, whole (agentwire's plan_updated); entries as the runtime wrote them (runtime-turn.ts bounds them). */
  | { type: "plan"; entries: PlanEntry[] }
  | { type: "done"; outcome: "completed" | "interrupted" | "failed"; error?: string };

export interface RuntimeTurnOptions {
  /** The user's text for this turn. */
  prompt: string;
  model: string;
  reasoning?: ReasoningLevel;
}

/** One conversation's session in a runtime. */
export interface RuntimeSession {
  /** The runtime's own id, stored on the conversation (runtimeSession) so a later step resumes it. */
  readonly sessionId: string;
  /** Run one turn; the iteration ends after its `done` event. One turn at a time. */
  turn(options: RuntimeTurnOptions): AsyncIterable<RuntimeEvent>;
  /** Ask the running turn to stop (its `done` then says interrupted); no-op when none runs. */
  interrupt(): Promise<void>;
  /** Resolves when no turn runs. */
  wait(): Promise<void>;
}

/** One configured runtime (one entry of config `runtimes`): its process(es) and its sessions. */
export interface AgentRuntime {
  readonly name: string;
  readonly capabilities: RuntimeCapabilities;
  /** Throws RuntimeUnavailableError (naming what to install) when it cannot start here; cheap: `step` asks before starting. */
  checkAvailable(): void;
  /** Launch (or, with resumeId, resume) a session. Throws RuntimeUnavailableError when its package is missing. */
  open(options: RuntimeSessionOptions): Promise<RuntimeSession>;
  /** Stop its process(es); sessions end. */
  close(): Promise<void>;
}

/** The runtime cannot start: its package is not installed, or its program would not run. The message says how to fix it. */
export class RuntimeUnavailableError extends Error {
  override name = "RuntimeUnavailableError";
}

/** The runtime failed while running (its process died, it answered a protocol error). */
export class RuntimeError extends Error {
  override name = "RuntimeError";
}
