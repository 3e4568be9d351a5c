/**
 * agentwire's other events and records as ACP `session/update`s: streamed
 * text and reasoning, the plan, usage, the commands, and the stored history
 * session/load replays. Pure functions: no connection here.
 */
import type * as acp from "@agentclientprotocol/sdk";
import type { CommandsListResult, ConversationRecord, NoticeNotification, PlanUpdatedNotification, UsageUpdatedNotification } from "../../clients/typescript/index.js";
import { replayedToolCall } from "./tool-call-updates.js";

export function chunk(kind: "text" | "reasoning", text: string): acp.SessionUpdate {
  return { sessionUpdate: kind === "text" ? "agent_message_chunk" : "agent_thought_chunk", content: { type: "text", text } };
}

/** ACP requires a priority; agentwire's model may leave it out. */
export function planUpdate(entries: PlanUpdatedNotification["entries"]): acp.SessionUpdate {
  return { sessionUpdate: "plan", entries: entries.map((e) => ({ content: e.content, status: e.status, priority: e.priority ?? "medium" })) };
}

/**
 * Context occupancy and the conversation's cost. ACP requires the window's
 * size: a model without a declared contextWindow gets no update (agentwire
 * never guesses one).
 */
export function usageUpdate(event: UsageUpdatedNotification): acp.SessionUpdate | undefined {
  if (event.context.windowTokens === null) return undefined;
  const cost = event.conversation.cost;
  return { sessionUpdate: "usage_update", used: event.context.usedTokens, size: event.context.windowTokens, ...(cost ? { cost: { amount: cost.amount, currency: cost.currency } } : {}) };
}

/**
 * An agentwire notice (a retried model call, a rate limit, the context nearly full…): ACP's
 * `notice` for an editor that advertised clientCapabilities.session.notices; the spec forbids it
 * otherwise, so the others are shown it as a thought (not in the answer's text).
 */
export function noticeUpdate(notice: Pick<NoticeNotification, "level" | "code" | "message">, asNotice: boolean): acp.SessionUpdate {
  if (asNotice) return { sessionUpdate: "notice", severity: notice.level, title: notice.message, _meta: { agentwire: { code: notice.code } } };
  return { sessionUpdate: "agent_thought_chunk", content: { type: "text", text: `\n[${notice.level}: ${notice.message}]\n` } };
}

/**
 * A compaction's start and end: ACP's `compaction_update` (one id, patched from in_progress to its
 * end, the summary when completed) for an editor that advertised clientCapabilities.session.compaction;
 * the others are shown thoughts (the summary when it completed, as session/load shows it).
 */
export function compactionUpdate(
  compaction: { compactionId: string; status: "in_progress" | "completed" | "cancelled" | "failed"; summary?: string; error?: string },
  asCompaction: boolean,
): acp.SessionUpdate {
  const { compactionId, status, summary, error } = compaction;
  if (asCompaction) {
    return {
      sessionUpdate: "compaction_update",
      compactionId,
      status,
      ...(summary !== undefined ? { summary: [{ type: "text", text: summary }] } : {}),
      ...(error !== undefined ? { error } : {}),
    };
  }
  const text =
    status === "in_progress"
      ? "[compacting the conversation…]\n"
      : status === "completed"
        ? `[earlier conversation compacted]\n${summary ?? ""}\n`
        : `[compaction ${status}${error ? `: ${error}` : ""}]\n`;
  return { sessionUpdate: "agent_thought_chunk", content: { type: "text", text } };
}

export function commandsUpdate(list: CommandsListResult): acp.SessionUpdate {
  return {
    sessionUpdate: "available_commands_update",
    availableCommands: list.commands.map((c) => ({ name: c.name, description: c.description || c.name, ...(c.argumentHint ? { input: { hint: c.argumentHint } } : {}) })),
  };
}

/** One stored record as the updates that show it again (session/load), oldest first. */
export function replayRecord(record: ConversationRecord, workspace: string, asCompaction = false): acp.SessionUpdate[] {
  if (record.type === "tool_call") return [{ sessionUpdate: "tool_call", ...replayedToolCall(record, workspace) }];
  if (record.type === "compaction") {
    if (asCompaction) return [compactionUpdate({ compactionId: record.id, status: "completed", summary: record.summary }, true)];
    return [{ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: `[earlier conversation compacted]\n${record.summary}` } }];
  }
  if (record.type === "reasoning") return record.content ? [{ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: record.content }, messageId: record.id }] : [];
  if (record.role === "system") return [];
  const updates: acp.SessionUpdate[] = [];
  if (record.role === "user") {
    const text = record.command ? `/${record.command.name}${record.command.arguments ? ` ${record.command.arguments}` : ""}` : record.content;
    if (text) updates.push({ sessionUpdate: "user_message_chunk", content: { type: "text", text }, messageId: record.id });
    for (const a of record.attachments ?? []) {
      const shown = a.type === "file" ? `[attached ${a.path}${a.lines ? `:${a.lines.start}-${a.lines.end}` : ""}]` : `[image ${a.name ?? a.assetId}]`;
      updates.push({ sessionUpdate: "user_message_chunk", content: { type: "text", text: `\n${shown}` }, messageId: record.id });
    }
    return updates;
  }
  if (record.reasoning) updates.push({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: record.reasoning }, messageId: record.id });
  if (record.content) updates.push({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: record.content }, messageId: record.id });
  return updates;
}
