/**
 * A conversation runtime without a store: its handle makes seq reservations
 * durable only when the test says so, and its one subscriber hands each
 * frame to the test.
 */
import type { Conversation, ConversationRecord, ToolCallRecord } from "../../protocol/index.js";
import { createLogger } from "../../src/logging/logger.js";
import { createConnection } from "../../src/sessions/connection.js";
import { ConversationRuntime } from "../../src/sessions/conversation-runtime.js";
import { ReplayBudget } from "../../src/sessions/event-log.js";
import type { ConversationHandle } from "../../src/store/conversation-store.js";

/** A handle whose seq reservations become durable only when the test calls `release()`. */
export function gatedHandle(): ConversationHandle & { release(): void; reservations: number[] } {
  let durable = 0;
  const waiting: { upTo: number; resolve: () => void }[] = [];
  const conversation = { id: "c_gated", recordCount: 0 } as Conversation;
  return {
    conversation,
    get seqReserved() {
      return durable;
    },
    recordCount: 0,
    openToolCalls: [] as ToolCallRecord[],
    reservations: [] as number[],
    readRecords: async () => [] as ConversationRecord[],
    findToolCall: async () => undefined,
    append: async () => {},
    replaceRecord: async () => {},
    truncateRecords: async () => {},
    readDocument: async () => undefined,
    writeDocument: async () => {},
    update: async () => {},
    runState: null,
    updateRunState: async () => {},
    putAsset: async () => {},
    assetInfo: async () => undefined,
    readAsset: async () => undefined,
    reserveSeq(upTo: number) {
      this.reservations.push(upTo);
      return new Promise<void>((resolve) => waiting.push({ upTo, resolve }));
    },
    release() {
      for (const w of waiting.splice(0)) {
        durable = Math.max(durable, w.upTo);
        w.resolve();
      }
    },
  };
}

/** A runtime on `handle` with one subscriber that hands every frame it gets to `receive`. */
export function runtimeOn(handle: ConversationHandle, receive: (frame: string) => void): ConversationRuntime {
  const connection = createConnection("k_1", receive);
  const limits = { eventLogSize: 4096, eventLogBytes: 1 << 20 };
  return new ConversationRuntime(handle, new Set([connection]), limits, new ReplayBudget(1 << 30), createLogger("silent"));
}
