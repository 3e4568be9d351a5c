import type { ConversationRecord, ToolCallRecord } from "../../protocol/index.js";
import type { ConversationHandle } from "../store/conversation-store.js";

/**
 * Repairs a conversation loaded from disk. No generation survives a process,
 * so a call stored as "executing" was running when the previous process
 * died: its process is gone and its result unknown — it is marked failed
 * (never re-run). Calls stored as "pending" are left alone: the next `step`
 * or `tool.confirm` offers them again.
 */
export async function recoverAfterRestart(handle: ConversationHandle): Promise<void> {
  const stale = handle.records.filter((r): r is ToolCallRecord => r.type === "tool_call" && r.status === "executing");
  for (const record of stale) {
    await handle.replaceRecord({
      ...record,
      status: "failed",
      success: false,
      result: "[failed: the server stopped while this tool was running, and the command was stopped with the server. It may have done some or all of its work before that; its output was lost.]",
      completedAt: new Date().toISOString(),
    });
  }
}

/** Calls still pending after the last assistant message: offered again by the next step. */
export function storedPendingCalls(records: readonly ConversationRecord[]): ToolCallRecord[] {
  const pending: ToolCallRecord[] = [];
  for (let i = records.length - 1; i >= 0; i--) {
    const r = records[i]!;
    if (r.type === "message") {
      if (r.role === "assistant") break;
      continue;
    }
    if (r.status === "pending") pending.unshift(r);
  }
  return pending;
}
