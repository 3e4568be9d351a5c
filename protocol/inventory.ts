/**
 * The method inventory: every request a client may send and every
 * notification the server may push, each in exactly one entry. The
 * dispatcher, the OpenRPC document, the JSON Schema and the generated
 * client are all derived from these two tables; nothing else lists method
 * names by hand.
 */
import type * as z from "zod";
import type { ErrorCodeName } from "./errors.js";
import * as A from "./assets.js";
import * as C from "./conversation.js";
import * as Cp from "./compaction.js";
import * as E from "./events.js";
import * as G from "./generation.js";
import * as M from "./messages.js";
import * as R from "./run-control.js";
import * as Mcp from "./mcp.js";
import * as S from "./session.js";
import * as K from "./skills.js";
import * as Cmd from "./commands.js";
import * as Md from "./modes.js";
import * as T from "./tools.js";
import * as N from "./notices.js";
import * as U from "./usage-events.js";
import * as Rw from "./rewind.js";
import * as Ct from "./client-tools.js";
import * as Sa from "./subagents.js";
import * as In from "./input.js";
import * as P from "./presence.js";
import * as H from "./history.js";

/**
 * What a method acts on, which decides where it runs (as Codex's
 * `serialization:` does for its requests):
 *
 * - "conversation": one conversation, named by `params.conversationId`. It
 *   runs where that conversation's live state is — on its owning instance in
 *   cluster mode, forwarded there when another instance owns it — and its
 *   handler is handed the loaded conversation. Every method whose params
 *   carry conversationId has this scope (test/handlers/method-scope.test.ts holds it).
 * - "connection": the calling connection's own state (initialize).
 * - "server": the server as a whole, or no one existing conversation
 *   (status, lists, tools, models, MCP servers, create).
 */
export type MethodScope = "conversation" | "connection" | "server";

export interface RequestEntry {
  params: z.ZodType;
  result: z.ZodType;
  /** One paragraph for the API docs. */
  description: string;
  /** Application errors this method can answer with (standard JSON-RPC ones apply to all). */
  errors: readonly ErrorCodeName[];
  /** What the method acts on (see MethodScope). */
  scope: MethodScope;
  /**
   * Conversation scope only. "caller": the method changes the calling
   * connection's view of the conversation (subscribe, unsubscribe), which
   * lives where the connection is, so it runs on the instance the client is
   * connected to; what it needs of the conversation — that it exists, its
   * state, its events — comes from the owner (a snapshot forwarded to it)
   * and the event bus. Default "owner": the method runs on the owner.
   */
  runsOn?: "owner" | "caller";
  /**
   * Conversation scope only: the method may hold its answer back on purpose
   * for up to `params[param]` milliseconds (`defaultMs` when absent), so a
   * request forwarded to the owner waits that much longer (generation.wait).
   */
  holdsAnswer?: { param: string; defaultMs: number };
  /**
   * Set while the method's shape may still change: the reason, in words. Such
   * a method is refused (EXPERIMENTAL_API_REQUIRED) unless the client sent
   * `capabilities.experimentalApi: true` in `initialize`, and it is marked
   * `x-experimental` in OpenRPC and in the generated client's docs.
   */
  experimental?: string;
}

const NOT_FOUND = ["NOT_INITIALIZED", "CONVERSATION_NOT_FOUND"] as const;

export const requests = {
  initialize: {
    params: S.InitializeParams,
    result: S.InitializeResult,
    description:
      "Must be the first request on a connection. Agrees on the protocol version and announces capabilities; the server then sends `connected`.",
    errors: ["ALREADY_INITIALIZED", "UNSUPPORTED_PROTOCOL_VERSION"],
    scope: "connection",
  },
  "server.status": {
    params: S.ServerStatusParams,
    result: S.ServerStatusResult,
    description:
      "Server health and load: the instance id, connections, subscriptions, loaded and active conversations, generations and pending tool calls now, totals since start (generations and tool calls by outcome, model calls, tokens, frames sent, slow consumers dropped), MCP servers, uptime, memory. GET /metrics serves the same counters for Prometheus.",
    errors: ["NOT_INITIALIZED"],
    scope: "server",
  },
  "conversation.create": {
    params: C.ConversationCreateParams,
    result: C.ConversationCreateResult,
    description:
      "Create a conversation, empty or starting from imported `records`. The history is checked whole before anything is stored: an invalid one is refused naming the record. A `system` prompt is kept on the conversation and sent first in every model request.",
    errors: ["NOT_INITIALIZED", "CONVERSATION_EXISTS", "STORAGE_ERROR", "LIMIT_EXCEEDED"],
    scope: "server",
  },
  "conversation.list": {
    params: C.ConversationListParams,
    result: C.ConversationListResult,
    description:
      "List conversations, newest first, a page at a time: pass `nextCursor` back as `cursor`. With parentConversationId, only that conversation's sub-agents (the children its spawn_agent calls created).",
    errors: ["NOT_INITIALIZED"],
    scope: "server",
  },
  "conversation.get": {
    params: C.ConversationGetParams,
    result: C.ConversationGetResult,
    description: "A conversation with its live state and, with includeRecords, every record.",
    errors: NOT_FOUND,
    scope: "conversation",
  },
  "conversation.diff": {
    params: C.ConversationDiffParams,
    result: C.ConversationDiffResult,
    description:
      "The net change of a generation's files (the most recent generation by default): for each file its write_file / edit_file calls changed, the unified diff from its content before the generation to its content after the last change — what generation_diff_updated last said. Read from the stored tool call records, so it survives a restart. An unknown generationId answers with no changes.",
    errors: NOT_FOUND,
    scope: "conversation",
  },
  "conversation.update": {
    params: C.ConversationUpdateParams,
    result: C.ConversationUpdateResult,
    description:
      "Change title, model, system prompt, workspace or settings. Subscribers get `conversation_updated`. A change made while a generation runs applies from its next model call (model, settings.reasoning, temperature, maxTokens, toolHistoryRounds), unless its step named its own model or control.",
    errors: [...NOT_FOUND, "STORAGE_ERROR"],
    scope: "conversation",
  },
  "conversation.fork": {
    params: C.ConversationForkParams,
    result: C.ConversationForkResult,
    description:
      "Copy a conversation's records (all, or the first `atRecord`) into a new conversation with the same model, system prompt, workspace and settings, titled \"<title> (fork)\" unless `title` is given. Records get new ids (toolCallIds are kept). Only settled records are copied: a running generation's open tool round is left out. The fork starts with the plan as it was at the fork point (state.plan: the one set by the last completed update_plan call among the copied records, none when there is none), not the original's current one, which may come from records left out; it is not announced (plan_updated). Usage totals, lastError, lastGeneration and the auto-confirm budget start afresh. The two conversations are independent afterwards.",
    errors: [...NOT_FOUND, "STORAGE_ERROR"],
    scope: "conversation",
  },
  "conversation.rewind": {
    params: Rw.ConversationRewindParams,
    result: Rw.ConversationRewindResult,
    description:
      "Take back the end of a conversation: the record beforeRecordId and every record after it leave the conversation (the model never sees them again), kept aside for conversation.unrewind. With restoreFiles, every file write_file / edit_file changed in those records is put back from the checkpoints the file tools kept (a created file is removed); a file changed on disk since the tool wrote it is reported and left alone unless force. Shell, custom and MCP tool calls among them are listed: their effects cannot be undone. Refused while a generation runs. Subscribers get `conversation_rewound`.",
    errors: [...NOT_FOUND, "GENERATION_IN_PROGRESS", "STORAGE_ERROR"],
    scope: "conversation",
  },
  "conversation.unrewind": {
    params: Rw.ConversationUnrewindParams,
    result: Rw.ConversationUnrewindResult,
    description:
      "Put the last rewind back: its records return to the end of the conversation and the files it restored get the content they had right before it (a file changed on disk since the rewind is left alone unless force). Only while nothing was appended since the rewind (else NOTHING_TO_UNREWIND). Refused while a generation runs. Subscribers get `conversation_rewound` with action unrewind.",
    errors: [...NOT_FOUND, "GENERATION_IN_PROGRESS", "NOTHING_TO_UNREWIND", "STORAGE_ERROR"],
    scope: "conversation",
  },
  "conversation.compact": {
    params: Cp.ConversationCompactParams,
    result: Cp.ConversationCompactResult,
    description:
      "Compact the conversation: the model writes a summary of it (a fixed prompt, quoted in docs/clients.md, plus `instructions`), stored as a compaction record; from then on the model sees that summary followed by the records after it. Nothing is deleted: conversation.get still returns every record. Runs as the conversation's generation, answered at once with its id (interrupt cancels it, and it is refused while another generation runs or tool calls wait for tool.confirm, and with -32602 when there is nothing to compact: no records, or none since the last compaction). The summary's tokens count in the conversation's usage.",
    errors: [...NOT_FOUND, "GENERATION_IN_PROGRESS", "MODEL_NOT_CONFIGURED"],
    scope: "conversation",
  },
  "conversation.delete": {
    params: C.ConversationDeleteParams,
    result: C.ConversationDeleteResult,
    description:
      "Delete a conversation and its records. A running generation is interrupted first; subscribers get `conversation_updated` with deleted: true and are unsubscribed.",
    errors: [...NOT_FOUND, "STORAGE_ERROR"],
    scope: "conversation",
  },
  "conversation.subscribe": {
    params: C.ConversationSubscribeParams,
    result: C.ConversationSubscribeResult,
    description:
      "Receive the conversation's notifications on this connection. With afterSeq, the missed events are sent first, in order, before this response and before any new event; if they are no longer held, the result says resync: true.",
    errors: NOT_FOUND,
    scope: "conversation",
    runsOn: "caller",
  },
  "conversation.unsubscribe": {
    params: C.ConversationUnsubscribeParams,
    result: C.ConversationUnsubscribeResult,
    description: "Stop receiving the conversation's notifications on this connection. Harmless when not subscribed.",
    errors: NOT_FOUND,
    scope: "conversation",
    runsOn: "caller",
  },
  "message.append": {
    params: M.MessageAppendParams,
    result: M.MessageAppendResult,
    description:
      "Append a user, system or assistant message; a user message may carry attachments (workspace text files, whole or a line range, and images uploaded with asset.upload). Answered once it is stored (or held); subscribers get `message_added`. While a generation runs, a user or system message is steered into it at its next model call (delivery steer, the default) or queued to start a generation of its own when it completes (delivery queue); both are held by the server, stored, until then (queue_changed). An assistant message may not be appended while a generation runs (GENERATION_IN_PROGRESS), nor while stored tool calls are pending: it would close their round. expectedGenerationId guards against a generation that changed meanwhile (GENERATION_CHANGED); clientMessageId makes a retry safe.",
    errors: [...NOT_FOUND, "STORAGE_ERROR", "LIMIT_EXCEEDED", "GENERATION_IN_PROGRESS", "GENERATION_CHANGED"],
    scope: "conversation",
  },
  "queue.list": {
    params: M.QueueListParams,
    result: M.QueueListResult,
    description: "The messages the conversation holds for later (message.append delivery steer or queue), oldest first; the same list as state.queue.",
    errors: NOT_FOUND,
    scope: "conversation",
  },
  "queue.remove": {
    params: M.QueueRemoveParams,
    result: M.QueueRemoveResult,
    description: "Drop one held message by its id before it is taken; subscribers get queue_changed. removed: false when it was already taken or is unknown.",
    errors: [...NOT_FOUND, "STORAGE_ERROR"],
    scope: "conversation",
  },
  "queue.clear": {
    params: M.QueueClearParams,
    result: M.QueueClearResult,
    description: "Drop every held message; subscribers get queue_changed (when there was any).",
    errors: [...NOT_FOUND, "STORAGE_ERROR"],
    scope: "conversation",
  },
  "asset.upload": {
    params: A.AssetUploadParams,
    result: A.AssetUploadResult,
    description:
      "Store an image (PNG, JPEG, GIF or WebP, recognised from its bytes) with a conversation, to attach to messages by its id. Assets are deleted with their conversation, which frees their bytes. The bytes a conversation keeps and those the whole server keeps are bounded (limits.maxConversationAssetBytes, 256 MiB, and limits.maxTotalAssetBytes, 2 GiB, by default): an upload that would pass one is refused with LIMIT_EXCEEDED naming it, and nothing is stored.",
    errors: [...NOT_FOUND, "STORAGE_ERROR", "LIMIT_EXCEEDED"],
    scope: "conversation",
  },
  step: {
    params: G.StepParams,
    result: G.StepResult,
    description:
      "Run the agent: call the model with the conversation, offer its tool calls for confirmation, run them, and repeat until the model answers without tools or maxIterations is reached. Answered at once with the generation id; progress comes as notifications to subscribers. The model (`model`, else the conversation's, else the server's) is provider/model or a bare name for the default provider; one naming no provider is refused on `model` (-32602), and a step the model declares it cannot take (an image, a reasoning effort, a temperature, tools) is refused with CAPABILITY_UNSUPPORTED before anything is sent.",
    errors: [...NOT_FOUND, "GENERATION_IN_PROGRESS", "MODEL_NOT_CONFIGURED", "CAPABILITY_UNSUPPORTED"],
    scope: "conversation",
  },
  interrupt: {
    params: G.InterruptParams,
    result: G.InterruptResult,
    description:
      "Stop the running generation at once, whatever it is doing: the model stream is aborted (partial text kept), pending tools are skipped (kept pending with keepPending: true, offered again by the next step), a running tool's process group is killed, open questions (state.pendingInputs) are cancelled — also one left by an earlier server process. Idempotent.",
    errors: NOT_FOUND,
    scope: "conversation",
  },
  "generation.wait": {
    params: R.GenerationWaitParams,
    result: R.GenerationWaitResult,
    description:
      "Wait until a generation ends (default: the running one, or else the most recent), then answer with its outcome (completed, interrupted, or error with code and message), its last assistant message and its token usage summed over its model calls. When timeoutMs (default 60000, at most 600000) passes first, the answer is { done: false } — not an error: wait again. For scripted clients: step, then generation.wait, instead of counting notifications. A wait ends with its connection.",
    errors: NOT_FOUND,
    scope: "conversation",
    holdsAnswer: { param: "timeoutMs", defaultMs: R.DEFAULT_WAIT_MS },
  },
  "tool.confirm": {
    params: G.ToolConfirmParams,
    result: G.ToolConfirmResult,
    description:
      "Decide on a pending tool call: confirm, edit (run with new arguments), skip, or auto (run this one and the next `count` without asking). confirm with `remember` also approves calls of the same kind from now on, for the conversation or the workspace (the rule is the call's tool_pending `rememberAs`); skip with `message` tells the model why. When two clients answer the same call, the first wins and the other gets TOOL_CALL_NOT_PENDING.",
    errors: [...NOT_FOUND, "TOOL_CALL_NOT_FOUND", "TOOL_CALL_NOT_PENDING"],
    scope: "conversation",
  },
  "input.respond": {
    params: In.InputRespondParams,
    result: In.InputRespondResult,
    description:
      "Answer, decline or cancel a question input_requested announced (the model's ask_user call, or an MCP server's elicitation). The answer must fit the question: one of its `choices` (a list of them with `multiple`), or an object filling its `schema`; a mismatch is INVALID_PARAMS naming the field. When two clients answer the same question, the first wins and the other gets INPUT_NOT_PENDING. After a server restart an ask_user question is answered the same way: a generation starts and goes on with the answer.",
    errors: [...NOT_FOUND, "INPUT_NOT_PENDING"],
    scope: "conversation",
  },
  "tools.list": {
    params: T.ToolsListParams,
    result: T.ToolsListResult,
    description: "The tools offered to the model, with their parameter schemas.",
    errors: ["NOT_INITIALIZED"],
    scope: "server",
  },
  "tools.register": {
    params: Ct.ToolsRegisterParams,
    result: Ct.ToolsRegisterResult,
    description:
      "Offer tools of this connection to the conversation's model (client-provided tools, docs/client-tools.md). They join the tools of its next model call; their calls are approved like any other (tool_pending, tool.confirm, settings.approval, settings.toolPolicy by name; readOnly counts for auto-read-only). When an approved call runs, this connection alone gets client_tool_call and answers with tool.result. A registration replaces the connection's earlier one on the conversation; [] unregisters; it ends when the connection closes (a call in flight then waits limits.clientToolGraceMs for the same client to register the tool again). A name that clashes with tools.list or another connection's client tool is refused with INVALID_PARAMS naming it.",
    errors: NOT_FOUND,
    scope: "conversation",
  },
  "tool.result": {
    params: Ct.ToolResultParams,
    result: Ct.ToolResultResult,
    description:
      "Answer a client_tool_call: `output` becomes the call's result (tool_completed, or tool_failed with isError). Only the connection the call was sent to may answer (else INVALID_PARAMS); an answer to a call already answered, interrupted or given up gets TOOL_CALL_NOT_PENDING.",
    errors: [...NOT_FOUND, "TOOL_CALL_NOT_FOUND", "TOOL_CALL_NOT_PENDING"],
    scope: "conversation",
  },
  "models.list": {
    params: T.ModelsListParams,
    result: T.ModelsListResult,
    description:
      "Every provider's models with their capabilities: what each endpoint's /models route reports, merged with the models the configuration declares; and each provider's status (an endpoint that is down is reported, not hidden).",
    errors: ["NOT_INITIALIZED"],
    scope: "server",
  },
  "mcp.list": {
    params: Mcp.McpListParams,
    result: Mcp.McpListResult,
    description:
      "The MCP servers (from the configuration file and from mcp.add; with conversationId, also that conversation's own), each with its transport, state (connecting, connected, failed with the error, disabled) and tools. A failed server is retried with backoff; the agent keeps working without it.",
    errors: ["NOT_INITIALIZED", "CONVERSATION_NOT_FOUND"],
    scope: "conversation",
  },
  "mcp.add": {
    params: Mcp.McpAddParams,
    result: Mcp.McpAddResult,
    description:
      "Add an MCP server: saved in the data dir (kept across restarts), started, and answered after its first connection attempt. A server that fails stays saved and is retried; its tools join tools.list as mcp__<name>__<tool> once connected. A name already in use is refused with INVALID_PARAMS naming `name`.",
    errors: ["NOT_INITIALIZED", "STORAGE_ERROR"],
    scope: "server",
  },
  "mcp.remove": {
    params: Mcp.McpRemoveParams,
    result: Mcp.McpRemoveResult,
    description:
      "Stop and forget a server added with mcp.add; its tools leave tools.list. Servers from the configuration file cannot be removed here (INVALID_PARAMS says so): change the file.",
    errors: ["NOT_INITIALIZED", "STORAGE_ERROR"],
    scope: "server",
  },
  "mcp.probe": {
    params: Mcp.McpProbeParams,
    result: Mcp.McpProbeResult,
    description:
      "Try a server definition without keeping it: connect, list its tools, disconnect. Nothing is saved or offered to the model. A server that cannot be started or reached answers MCP_ERROR with the reason.",
    errors: ["NOT_INITIALIZED", "MCP_ERROR"],
    scope: "server",
  },
  "skills.list": {
    params: K.SkillsListParams,
    result: K.SkillsListResult,
    description:
      "Skills found for a conversation's workspace (or the server's working directory) and the user's config dir: folders with a SKILL.md whose front matter gives a name and a description. The model sees them in its system prompt ({{skills}}) and reads one with the load_skill tool. Skills that cannot be used are listed in `problems`.",
    errors: NOT_FOUND,
    scope: "conversation",
  },
  "commands.list": {
    params: Cmd.CommandsListParams,
    result: Cmd.CommandsListResult,
    description:
      "Prompt templates (\"slash commands\") found for a conversation's workspace (or a given workspace, or the server's working directory) and the user's config dir: `.agentwire/commands/<name>.md` files with optional front matter (description, argument-hint, mode, model). A workspace command hides a user one of the same name. message.append { command, arguments } sends one. Files that cannot be used are listed in `problems`.",
    errors: NOT_FOUND,
    scope: "conversation",
  },
  "modes.list": {
    params: Md.ModesListParams,
    result: Md.ModesListResult,
    description:
      "The modes a conversation can be in (settings.mode, or conversation.update { mode }): the built-in ask, plan, code and auto, as the configuration's `modes` changed them, and the configuration's own. Each is a preset of tools offered, approval policy, system prompt addendum and optionally model and reasoning effort. Shaped for ACP's session modes: id, name, description; `default` is the mode of a conversation that names none.",
    errors: ["NOT_INITIALIZED"],
    scope: "server",
  },
  "history.sources": {
    params: H.HistorySourcesParams,
    result: H.HistorySourcesResult,
    description:
      "Where the histories of other agent runtimes are read from — Codex rollouts ($CODEX_HOME/sessions/**/*.jsonl) and Claude Code transcripts (~/.claude/projects/*/*.jsonl), as the configuration's `history` section sets — with how many sessions each holds and what could not be read (damaged or unknown lines, files too large). The index is built at the first history.* call and kept current by a file watcher.",
    errors: ["NOT_INITIALIZED"],
    scope: "server",
  },
  "history.list": {
    params: H.HistoryListParams,
    result: H.HistoryListResult,
    description:
      "A page of the indexed sessions of other runtimes, most recently updated first: id, source, title (the first user message), cwd, model, times and message count.",
    errors: ["NOT_INITIALIZED"],
    scope: "server",
  },
  "history.importSession": {
    params: H.HistoryImportSessionParams,
    result: H.HistoryImportSessionResult,
    description:
      "Turns one indexed session into a new agentwire conversation: user and assistant messages, reasoning, and tool calls each followed by its result, checked as conversation.create { records } checks an import, so the records always make a valid model context. What has no record (images, system messages, injected context, damaged lines) is left out and counted in `skipped`. An id the index does not hold is refused (-32602 naming `id`).",
    errors: ["NOT_INITIALIZED", "LIMIT_EXCEEDED", "STORAGE_ERROR"],
    scope: "server",
  },
} as const satisfies Record<string, RequestEntry>;

export interface NotificationEntry {
  params: z.ZodType;
  description: string;
}

export const notifications = {
  connected: { params: E.ConnectedNotification, description: "Sent once after initialize." },
  message_added: { params: E.MessageAddedNotification, description: "A message was stored." },
  reasoning_added: {
    params: E.ReasoningAddedNotification,
    description: "The model's thinking for a reply was stored as a reasoning record (before the reply's message_added).",
  },
  queue_changed: {
    params: E.QueueChangedNotification,
    description: "The messages held for later (message.append delivery steer or queue) changed: one was held, taken, removed, or all were cleared.",
  },
  conversation_updated: {
    params: E.ConversationUpdatedNotification,
    description:
      "Conversation metadata changed or the conversation was deleted. While a generation runs, a changed model or setting applies from its next model call (see conversation.update).",
  },
  generation_started: { params: E.GenerationStartedNotification, description: "A model call began." },
  generation_progress: {
    params: E.GenerationProgressNotification,
    description: "Streamed text or reasoning tokens.",
  },
  generation_complete: {
    params: E.GenerationCompleteNotification,
    description: "A model call ended; `final` tells whether the step ended too.",
  },
  tool_pending: { params: E.ToolPendingNotification, description: "A tool call awaits a decision." },
  tool_executing: { params: E.ToolExecutingNotification, description: "A tool call started running." },
  tool_output: { params: E.ToolOutputNotification, description: "Output of a running tool." },
  tool_completed: { params: E.ToolCompletedNotification, description: "A tool call succeeded." },
  tool_failed: { params: E.ToolFailedNotification, description: "A tool call failed." },
  tool_skipped: { params: E.ToolSkippedNotification, description: "A tool call will not run." },
  generation_diff_updated: {
    params: E.GenerationDiffUpdatedNotification,
    description: "The net change of the generation's files, after each file change.",
  },
  conversation_rewound: {
    params: Rw.ConversationRewoundNotification,
    description: "conversation.rewind took records back (and maybe restored files), or conversation.unrewind put them back.",
  },
  plan_updated: {
    params: E.PlanUpdatedNotification,
    description: "The agent's plan changed: the model called update_plan (it follows that call's tool_executing and comes before its tool_completed).",
  },
  subagent_started: {
    params: Sa.SubagentStartedNotification,
    description: "A spawn_agent call started a sub-agent: its child conversation, to subscribe to (its tool calls are confirmed there).",
  },
  input_requested: {
    params: In.InputRequestedNotification,
    description: "A question waits for the user's answer (input.respond): the model called ask_user, or an MCP server asked during its tool call.",
  },
  input_resolved: {
    params: In.InputResolvedNotification,
    description: "A question was answered, declined or cancelled (an interrupt cancels it): close its card.",
  },
  interrupted: { params: E.InterruptedNotification, description: "The generation was interrupted." },
  error: { params: E.ErrorNotification, description: "The generation failed." },
  compaction_started: {
    params: Cp.CompactionStartedNotification,
    description: "A compaction began: conversation.compact, or automatically before a model call (settings.autoCompact, or after the endpoint refused a request as too long).",
  },
  compaction_completed: {
    params: Cp.CompactionCompletedNotification,
    description: "A compaction record was stored: the model now sees its summary instead of the records before it.",
  },
  usage_updated: {
    params: U.UsageUpdatedNotification,
    description:
      "A model call finished: its tokens (cached and reasoning ones included), the generation's and the conversation's totals, how full the context window is, and its cost when the model's pricing is configured (else null).",
  },
  client_tool_call: {
    params: Ct.ClientToolCallNotification,
    description:
      "Run a client-provided tool (tools.register): sent to the registering connection only, without seq; answer with tool.result.",
  },
  subscribers_changed: {
    params: P.SubscribersChangedNotification,
    description:
      "Who watches the conversation changed: its subscriber count and connections. Opt-in (initialize capabilities.subscriberPresence); live only, without seq, never replayed.",
  },
  notice: {
    params: N.NoticeNotification,
    description:
      "Something to show the user that ends nothing (a retried model call, a rate limit, the context nearly full, an MCP server down or back). Conversation notices carry conversationId and seq; server-wide ones go to every initialized connection without them.",
  },
} as const satisfies Record<string, NotificationEntry>;

/** "conversation.create" → "ConversationCreate", "message_added" → "MessageAdded". */
function pascal(method: string): string {
  return method
    .split(/[._]/)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join("");
}

/** Names of a request's params and result types in the generated schema and client: `ConversationCreateParams`, `ConversationCreateResult`. */
export function requestTypeNames(method: string): { params: string; result: string } {
  const base = pascal(method);
  return { params: `${base}Params`, result: `${base}Result` };
}

/** Name of a notification's params type: `message_added` → `MessageAddedNotification`. */
export function notificationTypeName(method: string): string {
  return `${pascal(method)}Notification`;
}

/** The experimental reason of a method, if it is experimental. */
export function experimentalReason(method: string): string | undefined {
  return (requests as Record<string, RequestEntry>)[method]?.experimental;
}

/**
 * A method's payload types, by the method's name: `RequestParams<"step">`,
 * `NotificationParams<"tool_pending">`. The schema files give a payload no
 * alias of its own unless server code needs one; the generated client names
 * every one (StepParams, ToolPendingNotification, …).
 */
export type Requests = typeof requests;
export type RequestMethod = keyof Requests;
export type RequestParams<M extends RequestMethod> = z.input<Requests[M]["params"]>;
export type RequestResult<M extends RequestMethod> = z.output<Requests[M]["result"]>;

export type Notifications = typeof notifications;
export type NotificationMethod = keyof Notifications;
export type NotificationParams<N extends NotificationMethod> = z.output<Notifications[N]["params"]>;
