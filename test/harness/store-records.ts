/** Conversations and records for the store suites, with exact, predictable values. */
import type { CompactionRecord, Conversation, MessageRecord, ToolCallRecord } from "../../protocol/index.js";

export function conversation(id: string, createdAt = "2026-01-01T00:00:00.000Z"): Conversation {
  return {
    id,
    title: `title ${id}`,
    createdAt,
    updatedAt: createdAt,
    model: null,
    system: null,
    workspace: null,
    settings: { toolHistoryRounds: 8, maxIterations: 20, toolTimeoutMs: 120_000 },
    recordCount: 0,
  };
}

function at(n: number): string {
  return new Date(Date.UTC(2026, 0, 1, 0, 0, 0, 0) + n * 1000).toISOString();
}

/** Odd n: assistant; even n: user (so a run of messages alternates rounds). */
export function message(n: number, content = `message ${n}`): MessageRecord {
  return { type: "message", id: `m${n}`, role: n % 2 ? "assistant" : "user", content, timestamp: at(n) };
}

export function userMessage(n: number, content = `user ${n}`): MessageRecord {
  return { type: "message", id: `m${n}`, role: "user", content, timestamp: at(n) };
}

export function assistantMessage(n: number, content = `assistant ${n}`): MessageRecord {
  return { type: "message", id: `m${n}`, role: "assistant", content, timestamp: at(n) };
}

export function toolCall(n: number, status: ToolCallRecord["status"], result: string | null, toolCallId = `call_${n}`): ToolCallRecord {
  return {
    type: "tool_call",
    id: `t${n}`,
    toolCallId,
    toolName: "shell",
    arguments: { command: `echo ${n}` },
    result,
    success: status === "completed" ? true : null,
    status,
    timestamp: at(n),
  };
}

export function range(n: number, from = 0): number[] {
  return Array.from({ length: n }, (_, i) => from + i);
}

/** A compaction record (conversation.compact's summary). */
export function compaction(n: number, summary = `summary up to ${n}`): CompactionRecord {
  return { type: "compaction", id: `k${n}`, summary, trigger: "manual", model: "m1", tokensBefore: 1000 + n, tokensAfter: 10 + n, generationId: `g${n}`, timestamp: at(n) };
}
