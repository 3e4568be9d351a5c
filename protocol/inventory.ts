/**
 * The method inventory: every request a client may send and every
 * notification the server may push, each in exactly one entry. The
 * dispatcher, the OpenRPC document, the JSON Schema and the generated
 * client are all derived from these two tables; nothing else lists method
 * names by hand.
 */
import type { z } from "zod";
import type { ErrorCodeName } from "./errors.js";
import * as C from "./conversation.js";
import * as E from "./events.js";
import * as G from "./generation.js";
import * as M from "./messages.js";
import * as S from "./session.js";
import * as T from "./tools.js";

export interface RequestEntry {
  params: z.ZodType;
  result: z.ZodType;
  /** One paragraph for the API docs. */
  description: string;
  /** Application errors this method can answer with (standard JSON-RPC ones apply to all). */
  errors: readonly ErrorCodeName[];
  /** Type names used in generated schema and client. */
  names: { params: string; result: string };
}

const NOT_FOUND = ["NOT_INITIALIZED", "CONVERSATION_NOT_FOUND"] as const;

export const requests = {
  initialize: {
    params: S.InitializeParams,
    result: S.InitializeResult,
    description:
      "Must be the first request on a connection. Agrees on the protocol version and announces capabilities; the server then sends `connected`.",
    errors: ["ALREADY_INITIALIZED", "UNSUPPORTED_PROTOCOL_VERSION"],
    names: { params: "InitializeParams", result: "InitializeResult" },
  },
  "server.status": {
    params: S.ServerStatusParams,
    result: S.ServerStatusResult,
    description: "Server health and load: connections, subscriptions, loaded conversations, generations, uptime, memory.",
    errors: ["NOT_INITIALIZED"],
    names: { params: "ServerStatusParams", result: "ServerStatusResult" },
  },
  "conversation.create": {
    params: C.ConversationCreateParams,
    result: C.ConversationCreateResult,
    description: "Create an empty conversation. A `system` prompt is kept on the conversation and sent first in every model request.",
    errors: ["NOT_INITIALIZED", "STORAGE_ERROR"],
    names: { params: "ConversationCreateParams", result: "ConversationCreateResult" },
  },
  "conversation.list": {
    params: C.ConversationListParams,
    result: C.ConversationListResult,
    description: "List conversations, newest first, a page at a time: pass `nextCursor` back as `cursor`.",
    errors: ["NOT_INITIALIZED"],
    names: { params: "ConversationListParams", result: "ConversationListResult" },
  },
  "conversation.get": {
    params: C.ConversationGetParams,
    result: C.ConversationGetResult,
    description: "A conversation with its live state and, with includeRecords, every record.",
    errors: NOT_FOUND,
    names: { params: "ConversationGetParams", result: "ConversationGetResult" },
  },
  "conversation.update": {
    params: C.ConversationUpdateParams,
    result: C.ConversationUpdateResult,
    description: "Change title, model, system prompt, workspace or settings. Subscribers get `conversation_updated`.",
    errors: [...NOT_FOUND, "STORAGE_ERROR"],
    names: { params: "ConversationUpdateParams", result: "ConversationUpdateResult" },
  },
  "conversation.delete": {
    params: C.ConversationDeleteParams,
    result: C.ConversationDeleteResult,
    description:
      "Delete a conversation and its records. A running generation is interrupted first; subscribers get `conversation_updated` with deleted: true and are unsubscribed.",
    errors: [...NOT_FOUND, "STORAGE_ERROR"],
    names: { params: "ConversationDeleteParams", result: "ConversationDeleteResult" },
  },
  "conversation.subscribe": {
    params: C.ConversationSubscribeParams,
    result: C.ConversationSubscribeResult,
    description:
      "Receive the conversation's notifications on this connection. With afterSeq, the missed events are sent first, in order, before this response and before any new event; if they are no longer held, the result says resync: true.",
    errors: NOT_FOUND,
    names: { params: "ConversationSubscribeParams", result: "ConversationSubscribeResult" },
  },
  "conversation.unsubscribe": {
    params: C.ConversationUnsubscribeParams,
    result: C.ConversationUnsubscribeResult,
    description: "Stop receiving the conversation's notifications on this connection. Harmless when not subscribed.",
    errors: NOT_FOUND,
    names: { params: "ConversationUnsubscribeParams", result: "ConversationUnsubscribeResult" },
  },
  "message.append": {
    params: M.MessageAppendParams,
    result: M.MessageAppendResult,
    description: "Append a user or system message. Answered once it is stored; subscribers get `message_added`.",
    errors: [...NOT_FOUND, "STORAGE_ERROR"],
    names: { params: "MessageAppendParams", result: "MessageAppendResult" },
  },
  step: {
    params: G.StepParams,
    result: G.StepResult,
    description:
      "Run the agent: call the model with the conversation, offer its tool calls for confirmation, run them, and repeat until the model answers without tools or maxIterations is reached. Answered at once with the generation id; progress comes as notifications to subscribers.",
    errors: [...NOT_FOUND, "GENERATION_IN_PROGRESS", "MODEL_NOT_CONFIGURED"],
    names: { params: "StepParams", result: "StepResult" },
  },
  interrupt: {
    params: G.InterruptParams,
    result: G.InterruptResult,
    description:
      "Stop the running generation at once, whatever it is doing: the model stream is aborted (partial text kept), pending tools are skipped, a running tool's process group is killed. Idempotent.",
    errors: NOT_FOUND,
    names: { params: "InterruptParams", result: "InterruptResult" },
  },
  "tool.confirm": {
    params: G.ToolConfirmParams,
    result: G.ToolConfirmResult,
    description:
      "Decide on a pending tool call: confirm, edit (run with new arguments), skip, or auto (run this one and the next `count` without asking). When two clients answer the same call, the first wins and the other gets TOOL_CALL_NOT_PENDING.",
    errors: [...NOT_FOUND, "TOOL_CALL_NOT_FOUND", "TOOL_CALL_NOT_PENDING"],
    names: { params: "ToolConfirmParams", result: "ToolConfirmResult" },
  },
  "tools.list": {
    params: T.ToolsListParams,
    result: T.ToolsListResult,
    description: "The tools offered to the model, with their parameter schemas.",
    errors: ["NOT_INITIALIZED"],
    names: { params: "ToolsListParams", result: "ToolsListResult" },
  },
  "models.list": {
    params: T.ModelsListParams,
    result: T.ModelsListResult,
    description: "Models served by the configured OpenAI-compatible endpoint (its /models route).",
    errors: ["NOT_INITIALIZED", "MODELS_UNAVAILABLE", "LLM_ERROR"],
    names: { params: "ModelsListParams", result: "ModelsListResult" },
  },
} as const satisfies Record<string, RequestEntry>;

export interface NotificationEntry {
  params: z.ZodType;
  description: string;
  name: string;
}

export const notifications = {
  connected: { params: E.ConnectedNotification, description: "Sent once after initialize.", name: "ConnectedNotification" },
  message_added: { params: E.MessageAddedNotification, description: "A message was stored.", name: "MessageAddedNotification" },
  conversation_updated: {
    params: E.ConversationUpdatedNotification,
    description: "Conversation metadata changed or the conversation was deleted.",
    name: "ConversationUpdatedNotification",
  },
  generation_started: { params: E.GenerationStartedNotification, description: "A model call began.", name: "GenerationStartedNotification" },
  generation_progress: {
    params: E.GenerationProgressNotification,
    description: "Streamed text or reasoning tokens.",
    name: "GenerationProgressNotification",
  },
  generation_complete: {
    params: E.GenerationCompleteNotification,
    description: "A model call ended; `final` tells whether the step ended too.",
    name: "GenerationCompleteNotification",
  },
  tool_pending: { params: E.ToolPendingNotification, description: "A tool call awaits a decision.", name: "ToolPendingNotification" },
  tool_executing: { params: E.ToolExecutingNotification, description: "A tool call started running.", name: "ToolExecutingNotification" },
  tool_output: { params: E.ToolOutputNotification, description: "Output of a running tool.", name: "ToolOutputNotification" },
  tool_completed: { params: E.ToolCompletedNotification, description: "A tool call succeeded.", name: "ToolCompletedNotification" },
  tool_failed: { params: E.ToolFailedNotification, description: "A tool call failed.", name: "ToolFailedNotification" },
  tool_skipped: { params: E.ToolSkippedNotification, description: "A tool call will not run.", name: "ToolSkippedNotification" },
  interrupted: { params: E.InterruptedNotification, description: "The generation was interrupted.", name: "InterruptedNotification" },
  error: { params: E.ErrorNotification, description: "The generation failed.", name: "ErrorNotification" },
} as const satisfies Record<string, NotificationEntry>;

export type Requests = typeof requests;
export type RequestMethod = keyof Requests;
export type RequestParams<M extends RequestMethod> = z.input<Requests[M]["params"]>;
export type RequestResult<M extends RequestMethod> = z.output<Requests[M]["result"]>;

export type Notifications = typeof notifications;
export type NotificationMethod = keyof Notifications;
export type NotificationParams<N extends NotificationMethod> = z.output<Notifications[N]["params"]>;
