/**
 * generation.wait: answer when a generation ends, or after a time limit,
 * whichever comes first. A wait holds one listener on the conversation, one
 * timer and one listener on its connection; all three are released however
 * it ends (the generation ends, the time passes, the connection closes), so
 * a bot that waits and goes away leaves nothing behind.
 */
import { DEFAULT_WAIT_MS, type GenerationWaitParams, type GenerationWaitResult, type MessageRecord } from "../../protocol/index.js";
import { RpcError } from "../rpc/rpc-error.js";
import type { Connection } from "../sessions/connection.js";
import { RECENT_GENERATIONS, type ConversationRuntime } from "../sessions/conversation-runtime.js";
import type { ConversationHandle, GenerationSummary } from "../store/conversation-store.js";

/** Records read per look when searching back for a final record. */
const FIND_CHUNK = 64;
/** How far back a final record is searched for (it is normally among the last few). */
const FIND_LIMIT = 4096;

export class GenerationWaits {
  private waiting = 0;

  /** Waits in progress, across conversations (a test checks that none leaks). */
  get open(): number {
    return this.waiting;
  }

  async wait(runtime: ConversationRuntime, params: GenerationWaitParams, connection: Connection): Promise<GenerationWaitResult> {
    const running = runtime.generation;
    const generationId = params.generationId ?? running?.id ?? runtime.lastGeneration?.generationId;
    if (generationId === undefined) {
      throw RpcError.invalidParam("generationId", "this conversation has no generation to wait for (none has run since it was loaded): send step first");
    }
    if (running?.id !== generationId) {
      const ended = runtime.recentGenerations.find((g) => g.generationId === generationId);
      if (!ended) {
        throw RpcError.invalidParam(
          "generationId",
          `no generation ${generationId} is running or among the last ${RECENT_GENERATIONS} of this conversation`,
        );
      }
      return answer(runtime.handle, ended);
    }
    const ended = await this.untilEnd(runtime, generationId, params.timeoutMs ?? DEFAULT_WAIT_MS, connection.closeSignal);
    return ended ? answer(runtime.handle, ended) : { done: false, generationId };
  }

  /** The generation's ending, or undefined when the time passed or the connection closed first. */
  private untilEnd(
    runtime: ConversationRuntime,
    generationId: string,
    timeoutMs: number,
    closed: AbortSignal,
  ): Promise<GenerationSummary | undefined> {
    if (closed.aborted || timeoutMs === 0) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      this.waiting++;
      let settled = false;
      const finish = (summary: GenerationSummary | undefined) => {
        if (settled) return;
        settled = true;
        this.waiting--;
        clearTimeout(timer);
        stopListening();
        closed.removeEventListener("abort", onClose);
        resolve(summary);
      };
      const onClose = () => finish(undefined);
      const stopListening = runtime.onGenerationEnd((summary) => {
        if (summary.generationId === generationId) finish(summary);
      });
      const timer = setTimeout(() => finish(undefined), timeoutMs);
      closed.addEventListener("abort", onClose, { once: true });
    });
  }
}

async function answer(handle: ConversationHandle, ended: GenerationSummary): Promise<GenerationWaitResult> {
  return {
    done: true,
    generationId: ended.generationId,
    outcome: ended.outcome,
    ...(ended.error ? { error: ended.error } : {}),
    finalRecord: ended.finalRecordId ? await findMessage(handle, ended.finalRecordId) : null,
    // A summary stored before the details were kept lacks them: not reported, so null.
    usage: ended.usage ? { ...ended.usage, cachedPromptTokens: ended.usage.cachedPromptTokens ?? null, reasoningTokens: ended.usage.reasoningTokens ?? null } : null,
    modelCalls: ended.modelCalls,
    endedAt: ended.endedAt,
  };
}

/**
 * The message with this id, searched from the end: the runtime keeps only
 * the id of a generation's last message, not its text, so ended
 * generations cost little memory. Null when it is not found (or the
 * conversation went away meanwhile).
 */
export async function findMessage(handle: ConversationHandle, recordId: string): Promise<MessageRecord | null> {
  try {
    const end = handle.recordCount;
    for (let to = end; to > 0 && end - to < FIND_LIMIT; to -= FIND_CHUNK) {
      const records = await handle.readRecords(Math.max(0, to - FIND_CHUNK), to);
      for (let i = records.length - 1; i >= 0; i--) {
        const record = records[i];
        if (record.id === recordId) return record.type === "message" ? record : null;
      }
    }
  } catch {
    // A conversation deleted while we read: the answer stands without its text.
  }
  return null;
}
