import type { ConversationRecord, MessageRecord, ToolCallRecord } from "../../protocol/index.js";
import { textWithFiles } from "../attachments/file-block.js";
import type { ChatMessage, ChatToolCall, ChatUserPart } from "../llm/chat-message.js";

export interface LlmContextOptions {
  /** How many of the most recent tool calls reach the model in full. */
  toolHistoryRounds: number;
  /** The conversation's system prompt; null, undefined or "" for none. */
  system?: string | null;
  /**
   * Data URLs of the images attached to messages, by asset id (see
   * loadContextImages). An attached image missing here reaches the model as
   * a note in the text instead.
   */
  images?: ReadonlyMap<string, string>;
}

/** Output of a call whose record is missing or still pending (e.g. interrupted before it ran). */
export const NOT_RUN_TEXT = "[not run: interrupted]";
/** Output of a call interrupted while it was running. */
export const INTERRUPTED_WHILE_RUNNING_TEXT = "[interrupted while running: no result]";
/** Output of a skipped call whose record gives no reason. */
export const DECLINED_TEXT = "The user declined to run this tool.";

/** The skipped call's result: the declining words, then the user's reason when tool.confirm "skip" gave one (`message`). */
export function declinedText(message?: string): string {
  const reason = message?.trim();
  return reason ? `${DECLINED_TEXT} Their reason: ${reason}` : DECLINED_TEXT;
}
/** Output of a finished call that produced no text. */
export const NO_OUTPUT_TEXT = "[no output]";

/**
 * How a compaction's summary reaches the model: a user message starting the
 * context (a system message mid-conversation is refused by some endpoints;
 * a user message is valid everywhere, also first after the system prompt).
 */
export function compactionSummaryText(summary: string): string {
  return `[The earlier part of this conversation was compacted. Summary of it:]\n\n${summary}`;
}

export function omittedOutputText(toolName: string, kept: number): string {
  return `[output omitted: ${toolName} — older than the last ${kept} tool calls]`;
}

interface PairedCall {
  toolCallId: string;
  toolName: string;
  record?: ToolCallRecord;
}

/**
 * Turns stored records into the messages of a chat completions request.
 *
 * - `system` (the conversation's prompt) comes first; system-role records stay
 *   where they are.
 * - Notice records (`notice` set, e.g. "max_iterations") are written for
 *   humans and are left out. So is `binaryContent` (legacy; attachments replace it).
 * - A user message's attachments: its files as tagged blocks after the text
 *   (`<file path="…" lines="…">`), its images as image_url parts after the
 *   text part. Attachments belong to messages, never to tool calls, so tool
 *   history truncation never removes them.
 * - Thinking: a reasoning record rides on the assistant message right after
 *   it (`reasoning`), and the provider registry keeps it only for models
 *   that declare reasoningContent; the chat wire sends it as
 *   `reasoning_content`. Not for the others: Chat Completions has no field
 *   for an assistant's earlier reasoning, `reasoning_content` on an input
 *   message is a server extension a strict endpoint may refuse, and most
 *   servers drop earlier reasoning anyway — but DeepSeek's thinking mode
 *   wants the reasoning of tool-calling turns echoed (400 without it). A
 *   message's own legacy `reasoning` field is never sent.
 * - Provider items: an assistant record's `providerItems` (the Responses
 *   API's encrypted reasoning, the Messages API's thinking blocks) ride on
 *   its message, for the wire that made them to re-send; the chat wire leaves them out. A message that is left out
 *   (no text, no calls) takes its items with it: they cannot stand alone.
 * - An assistant message's tool calls are answered, right after it, by one
 *   `tool` message each, whatever happened to them: the request must be valid
 *   for the OpenAI API even when a call was interrupted, never stored, or its
 *   record is older than the truncation horizon.
 * - Truncation: the last `toolHistoryRounds` tool calls go in full; older ones
 *   keep their name, with arguments `{}` and a fixed marker as output.
 *
 * - Compaction: only the records after the last compaction record count; it
 *   goes first (after the system prompt) as a user message carrying its
 *   summary (compactionSummaryText), followed by the user messages that
 *   were waiting, unanswered, when it ran (trailingUserMessages: the
 *   summary left them out). A tool call record after it whose
 *   assistant message lies before it is an answer nobody asked for: dropped,
 *   like any other.
 *
 * Pairing: a ToolCallRecord answers the most recent assistant message listing
 * its toolCallId (it follows that message). A record nobody asked for, or a
 * second record for an already answered call, is dropped.
 */
export function buildLlmContext(all: readonly ConversationRecord[], options: LlmContextOptions): ChatMessage[] {
  const start = all.findLastIndex((record) => record.type === "compaction");
  const carried = start < 0 ? 0 : trailingUserMessages(all.slice(0, start));
  // The user's messages waiting when the compaction ran follow its summary (it did not cover them).
  const records = start < 0 ? all : [all[start]!, ...all.slice(start - carried, start), ...all.slice(start + 1)];
  const callsByMessage = pairToolCalls(records);
  let total = 0;
  for (const calls of callsByMessage.values()) total += calls.length;
  const kept = Number.isFinite(options.toolHistoryRounds)
    ? Math.max(0, Math.floor(options.toolHistoryRounds))
    : options.toolHistoryRounds > 0
      ? Infinity
      : 0;
  const firstFull = total - kept;

  const messages: ChatMessage[] = [];
  if (options.system) messages.push({ role: "system", content: options.system });
  let ordinal = 0;
  let thinking: string | undefined;
  for (const record of records) {
    // Thinking belongs to the reply right after it; anything else in between ends it.
    const reasoning = thinking;
    thinking = record.type === "reasoning" ? record.content : undefined;
    if (record.type === "compaction") {
      messages.push({ role: "user", content: compactionSummaryText(record.summary) });
      continue;
    }
    if (record.type !== "message" || record.notice !== undefined) continue;
    if (record.role === "user") {
      messages.push(userMessage(record, options.images));
      continue;
    }
    if (record.role !== "assistant") {
      messages.push({ role: record.role, content: record.content });
      continue;
    }
    const calls = callsByMessage.get(record) ?? [];
    if (calls.length === 0) {
      // Nothing to say (e.g. interrupted before the first token).
      if (record.content !== "") messages.push({ role: "assistant", content: record.content, ...reasoningOf(reasoning), ...providerItemsOf(record) });
      continue;
    }
    const toolCalls: ChatToolCall[] = [];
    const answers: ChatMessage[] = [];
    for (const call of calls) {
      const full = ordinal++ >= firstFull;
      toolCalls.push({
        id: call.toolCallId,
        type: "function",
        function: {
          name: call.toolName,
          arguments: full && call.record ? JSON.stringify(call.record.arguments) : "{}",
        },
      });
      answers.push({
        role: "tool",
        tool_call_id: call.toolCallId,
        content: full ? outcomeText(call.record) : omittedOutputText(call.toolName, kept),
      });
    }
    messages.push({
      role: "assistant",
      content: record.content === "" ? null : record.content,
      tool_calls: toolCalls,
      ...reasoningOf(reasoning),
      ...providerItemsOf(record),
    });
    messages.push(...answers);
  }
  return messages;
}

function reasoningOf(text: string | undefined): { reasoning?: string } {
  return text ? { reasoning: text } : {};
}

/**
 * How many user messages end `records` with nothing after them: the input a
 * compaction made then leaves out of its summary and keeps verbatim after it
 * (the question it ran before answering).
 */
export function trailingUserMessages(records: readonly ConversationRecord[]): number {
  let count = 0;
  for (let i = records.length - 1; i >= 0; i--) {
    const record = records[i]!;
    if (record.type !== "message" || record.role !== "user" || record.notice !== undefined) break;
    count++;
  }
  return count;
}

/** The endpoint's opaque items for this turn, passed through for the wire that wants them back. */
function providerItemsOf(record: MessageRecord): { providerItems?: unknown[] } {
  return record.providerItems?.length ? { providerItems: record.providerItems } : {};
}

/** Text with its file blocks; a content array when images are attached. */
function userMessage(record: MessageRecord, images: ReadonlyMap<string, string> | undefined): ChatMessage {
  const attachments = record.attachments ?? [];
  if (attachments.length === 0) return { role: "user", content: record.content };
  const files = attachments.filter((a) => a.type === "file");
  let text = textWithFiles(record.content, files);
  const parts: ChatUserPart[] = [];
  for (const attachment of attachments) {
    if (attachment.type !== "image") continue;
    const url = images?.get(attachment.assetId);
    if (url) parts.push({ type: "image_url", image_url: { url } });
    else text += `${text === "" ? "" : "\n\n"}[image ${attachment.name ?? attachment.assetId} is no longer available]`;
  }
  if (parts.length === 0) return { role: "user", content: text };
  return { role: "user", content: text === "" ? parts : [{ type: "text", text }, ...parts] };
}

/** For each assistant message with tool calls: its calls (duplicates removed), each with its record if any. */
function pairToolCalls(records: readonly ConversationRecord[]): Map<MessageRecord, PairedCall[]> {
  const byMessage = new Map<MessageRecord, PairedCall[]>();
  const awaiting = new Map<string, PairedCall>();
  for (const record of records) {
    if (record.type === "tool_call") {
      const call = awaiting.get(record.toolCallId);
      if (call) {
        call.record = record;
        awaiting.delete(record.toolCallId);
      }
      continue;
    }
    if (record.type !== "message" || record.role !== "assistant" || record.notice !== undefined || !record.toolCalls?.length) continue;
    const calls: PairedCall[] = [];
    for (const ref of record.toolCalls) {
      if (calls.some((call) => call.toolCallId === ref.toolCallId)) continue;
      const call: PairedCall = { toolCallId: ref.toolCallId, toolName: ref.toolName };
      calls.push(call);
      // A reused id (some servers number calls per response) now belongs to this message.
      awaiting.set(ref.toolCallId, call);
    }
    byMessage.set(record, calls);
  }
  return byMessage;
}

function outcomeText(record: ToolCallRecord | undefined): string {
  switch (record?.status) {
    case undefined:
    case "pending":
      return NOT_RUN_TEXT;
    case "executing":
      return INTERRUPTED_WHILE_RUNNING_TEXT;
    case "skipped":
      return record.result || DECLINED_TEXT;
    case "completed":
    case "failed":
      return record.result || NO_OUTPUT_TEXT;
  }
}
