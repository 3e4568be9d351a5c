import type { Conversation, ConversationRecord, ToolCallRecord } from "../../protocol/index.js";
import type { RunState } from "./conversation-store.js";

/**
 * How conversations and records map to rows of the PostgreSQL store (schema
 * in postgres-migrations.ts).
 */

/** A row of agentwire_conversations. bigint columns arrive as strings (pg keeps them exact). */
export interface ConversationRow {
  id: string;
  created_at: string;
  metadata: Omit<Conversation, "recordCount">;
  record_count: number;
  seq_reserved: string;
  run_state: RunState | null;
  fence: string;
}

export const CONVERSATION_COLUMNS = "id, created_at, metadata, record_count, seq_reserved, run_state, fence";

export function conversationOf(row: ConversationRow): Conversation {
  return { ...row.metadata, id: row.id, createdAt: row.created_at, recordCount: row.record_count };
}

/** The metadata column's JSON: the conversation less recordCount, which has a column of its own. */
export function metadataJson(conversation: Conversation): string {
  const { recordCount: _count, ...metadata } = conversation;
  return JSON.stringify(metadata);
}

/**
 * A string as a text key. PostgreSQL text cannot hold U+0000 and ids are
 * plain strings in the protocol, so keys are the string's JSON escaping
 * without the quotes: one-to-one, free of NUL, and the string itself for
 * every ordinary id.
 */
export function keyOf(value: string): string {
  return JSON.stringify(value).slice(1, -1);
}

export function isAssistantMessage(record: ConversationRecord): boolean {
  return record.type === "message" && record.role === "assistant";
}

/** The columns of one record's row, besides conversation_id and position. */
export interface RecordColumns {
  key: string;
  body: string;
  assistant: boolean;
  toolCallKey: string | null;
}

export function recordColumns(record: ConversationRecord): RecordColumns {
  return {
    key: keyOf(record.id),
    body: JSON.stringify(record),
    assistant: isAssistantMessage(record),
    toolCallKey: record.type === "tool_call" ? keyOf(record.toolCallId) : null,
  };
}

/** The tool calls after the last assistant message, oldest first (the open round), as one statement. */
export const OPEN_ROUND_SQL = `
  SELECT body FROM agentwire_records
  WHERE conversation_id = $1 AND tool_call_id IS NOT NULL
    AND position > COALESCE((SELECT max(position) FROM agentwire_records WHERE conversation_id = $1 AND assistant), -1)
  ORDER BY position`;

export type OpenRoundRow = { body: ToolCallRecord };
