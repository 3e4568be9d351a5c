import type { ConversationRecord, ToolCallRecord } from "../../protocol/index.js";
import { trailingUserMessages } from "./build-llm-context.js";

/** Records are read this many at a time: what a model request needs is gathered without holding the whole history. */
const CHUNK = 500;

/** The model request would pass maxContextBytes. */
export class ContextTooLargeError extends Error {
  constructor(
    readonly bytes: number,
    readonly max: number,
  ) {
    super(`the model request would carry over ${bytes} bytes of conversation text, over the limit of ${max} (maxContextBytes)`);
    this.name = "ContextTooLargeError";
  }
}

interface CallRef {
  ordinal: number;
  /** Index in the output of the record that answers it, once seen. */
  at?: number;
}

/**
 * The records a model request is built from, read page by page, with the
 * outputs of tool calls older than the last `toolHistoryRounds` dropped as
 * they fall out of that window — so a conversation with thousands of tool
 * outputs costs the memory of its messages and its last few outputs, not of
 * its history. buildLlmContext reduces exactly those calls to their name, so
 * what it builds is the same as from the full records.
 *
 * Which calls are "the last N" is counted as buildLlmContext counts them: by
 * the tool calls listed on assistant messages, in order, each answered by the
 * next record carrying its id. Throws ContextTooLargeError once the text kept
 * passes `maxBytes`.
 *
 * A compaction record starts the context afresh: what came before it is let
 * go (the model sees the summary instead), so the byte limit and the tool
 * window count from the last compaction on.
 */
export async function readContextRecords(
  read: (from: number, to: number) => Promise<ConversationRecord[]>,
  recordCount: number,
  toolHistoryRounds: number,
  maxBytes: number,
): Promise<ConversationRecord[]> {
  let out: ConversationRecord[] = [];
  let window: CallRef[] = [];
  const awaiting = new Map<string, CallRef>();
  const keep = Number.isFinite(toolHistoryRounds) ? Math.max(0, Math.floor(toolHistoryRounds)) : Infinity;
  let ordinal = 0;
  let bytes = 0;

  const slim = (ref: CallRef) => {
    if (ref.at === undefined) return;
    const full = out[ref.at] as ToolCallRecord;
    bytes -= toolSize(full);
    out[ref.at] = { ...full, arguments: {}, result: null, originalArguments: undefined };
  };

  for (let from = 0; from < recordCount; from += CHUNK) {
    for (const record of await read(from, Math.min(recordCount, from + CHUNK))) {
      if (record.type === "compaction") {
        // The user's waiting messages stay (buildLlmContext puts them after the summary).
        out = [...out.slice(out.length - trailingUserMessages(out)), record];
        window = [];
        awaiting.clear();
        bytes = out.reduce((sum, kept) => sum + (kept.type === "message" ? kept.content.length : kept.type === "compaction" ? kept.summary.length : 0), 0);
        continue;
      }
      if (record.type === "tool_call") {
        const ref = awaiting.get(record.toolCallId);
        awaiting.delete(record.toolCallId);
        if (ref && (keep === Infinity || ref.ordinal >= ordinal - keep)) {
          ref.at = out.length;
          bytes += toolSize(record);
          out.push(record);
        } else {
          out.push({ ...record, arguments: {}, result: null, originalArguments: undefined });
        }
        continue;
      }
      bytes += record.content.length;
      // Thinking counts: a model that declares reasoningContent is sent it back.
      if (record.type === "reasoning") {
        out.push(record);
        continue;
      }
      // Attached files reach the model as text; images are counted when they are loaded (loadContextImages).
      for (const attachment of record.attachments ?? []) if (attachment.type === "file") bytes += attachment.content.length;
      out.push(record);
      if (record.role !== "assistant" || record.notice !== undefined || !record.toolCalls?.length) continue;
      const seen = new Set<string>();
      for (const call of record.toolCalls) {
        if (seen.has(call.toolCallId)) continue;
        seen.add(call.toolCallId);
        const ref: CallRef = { ordinal: ordinal++ };
        awaiting.set(call.toolCallId, ref);
        window.push(ref);
        if (window.length > keep) slim(window.shift()!);
      }
    }
    if (bytes > maxBytes) throw new ContextTooLargeError(bytes, maxBytes);
  }
  return out;
}

function toolSize(record: ToolCallRecord): number {
  return (record.result?.length ?? 0) + JSON.stringify(record.arguments).length;
}
