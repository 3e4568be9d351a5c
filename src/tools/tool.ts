import type { ToolParameters } from "./tool-parameters.js";
import type { FileChange, InputAnswer, InputRequest, PlanEntry, ToolKind, ToolLocation } from "../../protocol/index.js";

/** A question a tool puts to the user (ask_user, an MCP server's elicitation); the loop adds the ids. */
export type InputQuestion = Omit<InputRequest, "requestId" | "toolCallId" | "generationId">;

/** How the user answered (input.respond), or that the question was cancelled (interrupt, the call ended). */
export type InputReply = { outcome: "answered"; answer: InputAnswer } | { outcome: "declined" } | { outcome: "cancelled" };

export interface ToolRunContext {
  /** Working directory: the conversation's workspace (absolute). File tools confine every path to it. */
  cwd: string;
  /** The conversation the call belongs to. */
  conversationId: string;
  /** The call's toolCallId (absent where a tool is run outside a generation's loop; a client tool names it in client_tool_call). */
  toolCallId?: string;
  /** Aborted by interrupt: the tool must stop at once (kill its process group, cancel its request). */
  signal: AbortSignal;
  /** Time limit; on expiry the tool stops and fails. */
  timeoutMs: number;
  /** The generation it belongs to. */
  generationId?: string;
  /** Streamed output, in order. */
  onOutput(stream: "stdout" | "stderr", chunk: string): void;
  /**
   * Ask the user (input_requested) and wait for the answer; an interrupt
   * cancels the question. Rejects when the conversation has too many open.
   * Absent where nobody can answer.
   */
  requestInput?(question: InputQuestion): Promise<InputReply>;
}

export interface ToolResult {
  success: boolean;
  /** Text for the model (capped by the tool, with a marker saying how much was cut). */
  output: string;
  exitCode?: number | null;
  /** For tools that change a file: a unified diff of the change (capped), stored on the tool call record for clients to show. */
  diff?: string;
  /**
   * For tools that changed a file: the file (workspace-relative) and its
   * content before and after, so the loop can add the change up over the
   * generation (generation-diff.ts). `before` null: the file was created;
   * undefined: its old content is not known (binary or too large). `after`
   * null: the file was deleted. Held in memory only, never stored.
   */
  change?: { path: string; before: string | null | undefined; after: string | null };
  /**
   * What the model reads instead of `output`, in the model calls of this
   * generation only; never stored (`output` is: a secret answer is stored
   * redacted while the model still sees it).
   */
  modelOutput?: string;
  /** update_plan: the whole plan the call set; the loop stores it and announces plan_updated. */
  plan?: PlanEntry[];
  /** spawn_agent: the sub-agent's conversation; the loop keeps it on the call's record. */
  childConversationId?: string;
}

/** What a tool's preview is given: the run context without output or a time limit. */
export interface ToolPreviewContext {
  cwd: string;
  conversationId: string;
  /** Aborted by interrupt: the preview is then of no interest. */
  signal: AbortSignal;
}

/** What one call looks like to a human: a title and the workspace files it touches (see describeCall). */
export interface ToolCallDescription {
  /** "Edit src/app.ts"; cut to a bounded single line by the caller. */
  title?: string;
  /** Workspace paths as the arguments give them (relative or absolute); the caller makes them workspace-relative. */
  locations?: { path: string; line?: number }[];
}

export type { ToolKind, ToolLocation };

/**
 * What a tool is known to do, as MCP's `readOnlyHint` / `destructiveHint`.
 * The approval policy reads them: `auto-read-only` runs read-only tools
 * without asking.
 */
export interface ToolAnnotations {
  /** The tool does not change its environment. */
  readOnlyHint?: boolean;
  /** The tool may destroy or overwrite data (meaningful when not read-only). */
  destructiveHint?: boolean;
}

/** Where a tool comes from: built into the server, a configured command, the web tools, an MCP server, or a client connection (tools.register). */
export type ToolSource = "builtin" | "custom" | "web" | "mcp" | "client";

/**
 * A tool the model may call. Arguments are validated with `parameters`
 * (zod, or for the built-in tools their schema as data with zod imported when
 * the data cannot decide: tool-parameters.ts) before `run`; the JSON Schema
 * offered to the model is derived from it unless `inputSchema` gives one
 * (tools declared in JSON Schema: custom commands, MCP servers). Make
 * `parameters` a `z.strictObject`: an unknown key is then an
 * `unrecognized_keys` issue, and the schema says `additionalProperties: false`.
 */
export interface Tool<A extends Record<string, unknown> = Record<string, unknown>> {
  name: string;
  description: string;
  parameters: ToolParameters<A>;
  /** JSON Schema offered to the model, when the tool was declared in JSON Schema rather than zod. */
  inputSchema?: Record<string, unknown>;
  annotations?: ToolAnnotations;
  /** Default "builtin". */
  source?: ToolSource;
  /**
   * Runs without tool.confirm whatever settings.approval says (update_plan:
   * it changes nothing outside the conversation); settings.toolPolicy still
   * decides first, so a client can make it ask, or turn it off.
   */
  runsWithoutAsking?: boolean;
  /** What kind of thing it does, for clients to render (ACP's tool kinds). Default "other". */
  kind?: ToolKind;
  /** A short human name ("Edit file"). Default: the name. */
  title?: string;
  /**
   * Title and locations of one call, from its arguments as the model
   * proposed them — NOT yet validated (the call is described while it waits
   * for approval), so read every field defensively. Absent: the tool's title
   * and no locations. `cwd` is the workspace (absolute), for titles that name
   * a path as the user knows it. src/tools/tool-display.ts applies the bounds.
   */
  describeCall?(args: Readonly<Record<string, unknown>>, cwd: string): ToolCallDescription;
  run(args: A, context: ToolRunContext): Promise<ToolResult>;
  /**
   * What `run` with these arguments would change, computed without changing
   * anything: the loop calls it before it asks for approval (tool_pending's
   * `changes`) and again when tool.confirm edited the arguments. Optional:
   * a tool without it (or whose preview throws) is offered without changes.
   * An entry's `problem` says the call would fail as proposed.
   */
  preview?(args: A, context: ToolPreviewContext): Promise<FileChange[]>;
  /**
   * Get ready to run a call that waits for the user's approval — the shell
   * tool starts its process, held before the command — so that what the
   * approval costs is the run alone. Nothing of the call may happen before
   * `run`. Returns what undoes it; the loop calls that when the call's round
   * is over, whether `run` used the preparation (then it does nothing) or
   * not (skipped, interrupted, other arguments). Optional.
   */
  prepare?(args: A, context: ToolPrepareContext): () => void;
}

export interface ToolPrepareContext {
  cwd: string;
  /** The call `run` will name in its context. */
  toolCallId: string;
}

export interface ToolRegistry {
  list(): Tool[];
  get(name: string): Tool | undefined;
  /**
   * Changes whenever the set of tools does (an MCP server connected or went
   * away), so callers that derive something from `list()` know to redo it.
   * A fixed registry may omit it.
   */
  revision?(): number;
}

/** A provider of tools whose set may change at run time (an MCP server, a reloaded config). */
export interface ToolProvider {
  list(): Tool[];
  /** As ToolRegistry.revision. */
  revision?(): number;
}
