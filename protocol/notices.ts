/**
 * Notices: something a client should show its user that is neither an error
 * nor the end of anything. One table of codes, like the error table
 * (protocol/errors.ts): each code says how loud it is, where it is
 * delivered, what it means and what its `data` holds.
 *
 * Three deliveries:
 * - "start": what the server left out when it started (a configuration file
 *   it did not trust, or did not read); listed in `initialize` and
 *   `server.status` (`notices`), never pushed.
 * - "conversation": pushed as a `notice` notification to the conversation's
 *   subscribers, with its conversationId and seq (replayed like any event).
 * - "server": about the server as a whole (an MCP server it uses went down):
 *   pushed as a `notice` notification to every initialized connection of the
 *   instance it happened on, subscribed or not, without conversationId or
 *   seq (not replayed: a client that was away asks mcp.list).
 *
 * A notice never ends a generation.
 */
import * as z from "zod";
import { ConversationId, Timestamp } from "./records.js";

export type NoticeLevel = "info" | "warning";
export type NoticeDelivery = "start" | "conversation" | "server";

/** One code of the notice table. */
interface NoticeEntry {
  readonly level: NoticeLevel;
  readonly delivery: NoticeDelivery;
  /** What the notice means; the generated docs show it. */
  readonly doc: string;
  /** What its `data` holds, in words (`data` is {} when nothing is listed). */
  readonly data?: string;
}

/** Every notice code, with what it means. One table: NoticeCode is its keys. */
export const NoticeTable = {
  config_untrusted: {
    level: "warning",
    delivery: "start",
    doc: "A project agentwire.json sets keys that run commands or send credentials (MCP servers, custom tools, endpoints, key names, approval settings…), and the user has not trusted it as it is now: the server started without those keys. `agentwire trust DIR` applies them; a later change to the file asks again.",
  },
  config_ignored: {
    level: "warning",
    delivery: "start",
    doc: "An agentwire.json was not read at all: its directory or the file itself is not owned by the user running the server, or is writable by its group or by others.",
  },
  data_dir_not_used: {
    level: "warning",
    delivery: "start",
    doc: "The working directory holds a `.agentwire` data dir (where older versions kept conversations) that is not the data dir in use: its conversations are not shown. `--data-dir .agentwire` uses it; nothing is moved.",
  },
  config_fallback: {
    level: "info",
    delivery: "start",
    doc: "Reserved: a configured setting the server could not honour and replaced by its default. Nothing sends it today: a setting that cannot be honoured stops the start with a configuration error instead of falling back, and a model not declared under its provider's `models` is not a fallback (its capabilities are unknown, so nothing is refused; its context window and cost are reported as null).",
  },
  model_retry: {
    level: "info",
    delivery: "conversation",
    doc: "A model request failed before its answer began (HTTP 429 or 5xx, or a broken connection) and will be sent again after a pause; the generation goes on. Retries follow the endpoint's Retry-After when it sends one (up to 60 s), else an exponential backoff.",
    data: "{ attempt: the retry about to be made (1 for the first), maxRetries, delayMs: the pause before it, status: the HTTP status or null for a connection failure, error: what failed }",
  },
  rate_limited: {
    level: "warning",
    delivery: "conversation",
    doc: "The endpoint answered 429 with rate-limit headers: what they said. Sent before the model_retry of that failure (or before the error, when no attempt is left).",
    data: "{ status: 429, retryAfterMs: from retry-after-ms / retry-after, or null; limits: the x-ratelimit-* headers, by name without the prefix (e.g. remaining-requests: \"0\", reset-requests: \"1s\", remaining-tokens, reset-tokens, limit-requests …) }",
  },
  context_nearly_full: {
    level: "warning",
    delivery: "conversation",
    doc: "The conversation fills at least 80 % of the model's declared context window (its last request's prompt plus output). Sent once per crossing: again only after a call that dropped below 80 % (a smaller model context, another model) and a later one back above it. Never sent for a model without a declared contextWindow.",
    data: "{ usedTokens, windowTokens, ratio: usedTokens / windowTokens, model }",
  },
  checkpoint_dropped: {
    level: "warning",
    delivery: "conversation",
    doc: "The conversation's file checkpoints (the content write_file / edit_file calls replaced, kept for conversation.rewind) passed limits.maxCheckpointBytes, so the oldest were dropped: a rewind to before them can no longer restore those files.",
    data: "{ dropped: how many checkpoints were dropped, paths: the files they were of, toolCallIds: the calls they were kept for, maxCheckpointBytes }",
  },
  approvals_file_invalid: {
    level: "warning",
    delivery: "conversation",
    doc: "The workspace's remembered approvals file (.agentwire/approvals.json, see docs/tools.md) could not be used: it is not valid JSON, does not have the documented shape, holds too many rules, is too large, or is not as agentwire last wrote it (edited by hand, or brought by someone else, as a cloned repository could: only content agentwire wrote, recorded in the user's trust list, is honoured). Its rules are ignored (every call they would approve asks again) until it is fixed; nothing else changes. Sent at most once per generation.",
    data: "{ path: the file, relative to the workspace; problem: what is wrong }",
  },
  mcp_server_down: {
    level: "warning",
    delivery: "server",
    doc: "An MCP server this agentwire server uses failed or went away (its process exited, its link broke, or it could not be started): its tools are gone until it returns. agentwire retries it with backoff.",
    data: "{ server: its name, error: why, nextRetryMs: when agentwire tries again }",
  },
  mcp_server_up: {
    level: "info",
    delivery: "server",
    doc: "An MCP server that was down (see mcp_server_down) is connected again and its tools are back.",
    data: "{ server: its name, tools: how many tools it offers }",
  },
} as const satisfies Record<string, NoticeEntry>;

/** Every notice code with its meaning (the table's doc column). */
export const NOTICE_CODES: { readonly [C in Code]: string } = Object.fromEntries(
  Object.entries(NoticeTable).map(([code, entry]) => [code, entry.doc]),
) as { [C in Code]: string };

type Code = keyof typeof NoticeTable;

/** An enum of the table's codes delivered in one of `deliveries`, described by the table's rows. */
function codesOf<D extends NoticeDelivery>(deliveries: readonly D[], what: string) {
  const rows = Object.entries(NoticeTable).filter(([, entry]) => (deliveries as readonly NoticeDelivery[]).includes(entry.delivery));
  const codes = rows.map(([code]) => code) as [DeliveredAs<D>, ...DeliveredAs<D>[]];
  return z
    .enum(codes)
    .describe(`${what}: ${rows.map(([code, entry]) => `${code} (${entry.level}): ${entry.doc}${"data" in entry ? ` data: ${entry.data}` : ""}`).join(" ")}`);
}
type DeliveredAs<D extends NoticeDelivery> = { [C in Code]: (typeof NoticeTable)[C]["delivery"] extends D ? C : never }[Code];

/** Codes of the start-up notices listed by initialize and server.status. */
export const StartNoticeCode = codesOf(["start"], "What the notice is about");

/** Codes a `notice` notification carries. */
export const NoticeCode = codesOf(["conversation", "server"], "What the notice is about (see protocol/notices.ts for whom each goes to)");

export const NoticeLevel = z
  .enum(["info", "warning"])
  .describe("How loud: info (something happened, nothing to do) or warning (the user may want to act or wait).");

export const Notice = z
  .object({
    code: StartNoticeCode,
    message: z.string().describe("One or two sentences for the user: what happened and what to do about it."),
  })
  .describe("A notice to show the user; it ends nothing.");

export const NoticeNotification = z
  .object({
    conversationId: ConversationId.optional().describe("The conversation concerned; absent for a server-wide notice (mcp_server_down, mcp_server_up)."),
    seq: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe("The conversation's event seq (see ConversationEventBase); absent for a server-wide notice, which is not replayed."),
    timestamp: Timestamp.describe("When the server emitted it."),
    generationId: z
      .string()
      .nullable()
      .describe("The generation it concerns (model_retry, rate_limited, context_nearly_full); null when none."),
    level: NoticeLevel,
    code: NoticeCode,
    message: z.string().describe("One sentence for the user: what happened."),
    data: z
      .record(z.string(), z.unknown())
      .describe("Details for a client to render, by code (see NoticeCode: each code lists its fields); {} when there are none."),
  })
  .describe(
    "Something to show the user that ends nothing: a generation goes on after it. Conversation notices (model_retry, rate_limited, context_nearly_full) go to the conversation's subscribers with its seq; server-wide ones (mcp_server_down, mcp_server_up) go to every initialized connection of the instance, without conversationId or seq.",
  );

export type NoticeCode = z.infer<typeof NoticeCode>;
export type StartNoticeCode = z.infer<typeof StartNoticeCode>;
export type Notice = z.infer<typeof Notice>;
export type NoticeNotification = z.infer<typeof NoticeNotification>;
/** The notices a conversation's runtime publishes (delivery "conversation"). */
export type ConversationNoticeCode = DeliveredAs<"conversation">;
/** The notices sent to every connection (delivery "server"). */
export type ServerNoticeCode = DeliveredAs<"server">;
