import type { ToolCallRecord } from "../../protocol/index.js";
import type { ConversationHandle } from "../store/conversation-store.js";

/**
 * Repairs a conversation loaded from disk. No generation survives a process,
 * so a call stored as "executing" was running when the previous process
 * died: its process is gone and its result unknown — it is marked failed
 * (never re-run). Calls stored as "pending" are left alone: the next `step`
 * or `tool.confirm` offers them again. Both can only be in the open round.
 */
export async function recoverAfterRestart(handle: ConversationHandle): Promise<void> {
  // An ask_user call waiting for its answer is not running anything: its question is stored and offered again.
  const asking = new Set((handle.runState?.pendingInputs ?? []).map((q) => q.toolCallId));
  const stale = handle.openToolCalls.filter((r): r is ToolCallRecord => r.status === "executing" && !asking.has(r.toolCallId));
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
