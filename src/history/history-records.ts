/**
 * A session's items as an imported history (conversation.create's
 * `records`): rounds of one assistant message announcing its tool calls,
 * each call answered right after it. Runtimes write calls and results
 * interleaved (Codex: call, output, call, output) or grouped (parallel
 * calls); a call after a result opens a new assistant message, so the
 * model's order is kept. A call the file never answers is stored as skipped
 * (the model's context stays valid); a result with no call before it has
 * nowhere to go and is counted as skipped.
 */
import type * as z from "zod";
import { MAX_IMPORTED_RECORDS, type ImportedRecord } from "../../protocol/index.js";
import type { HistoryItem } from "./history-items.js";

type Imported = z.output<typeof ImportedRecord>;

/** A compaction of the runtime, stored as a compaction record before `records[before]`. */
export interface AssembledCompaction {
  before: number;
  summary: string;
  timestamp?: string;
}

export interface AssembledHistory {
  records: Imported[];
  /**
   * Imported records cannot be compactions (conversation.create takes messages
   * and tool calls): these go in between them once the records are checked,
   * always at a round's end, so the checked shape is kept.
   */
  compactions: AssembledCompaction[];
  skipped: number;
  truncated: boolean;
}

interface Round {
  content: string;
  reasoning: string[];
  messageId?: string;
  timestamp?: string;
  calls: { callId: string; name: string; arguments: Record<string, unknown>; timestamp?: string }[];
  results: Map<string, Extract<HistoryItem, { kind: "result" }>>;
  answered: boolean;
}

const NO_RESULT = "(the runtime's transcript holds no result for this call)";

/** `maxTextBytes`: each text is cut to it (the server's maxMessageBytes), so an import is never refused for one long output. */
export function assembleRecords(items: readonly HistoryItem[], maxTextBytes: number): AssembledHistory {
  const records: Imported[] = [];
  const compactions: AssembledCompaction[] = [];
  let skipped = 0;
  let truncated = false;
  let round: Round | null = null;
  let reasoning: string[] = [];
  const cut = (text: string) => {
    const c = cutText(text, maxTextBytes);
    if (c !== text) truncated = true;
    return c;
  };

  const open = (content: string, at: { timestamp?: string; messageId?: string }): Round => {
    const opened: Round = { content, reasoning, calls: [], results: new Map(), answered: false, ...at };
    reasoning = [];
    return opened;
  };
  const flush = () => {
    if (!round) return;
    const r = round;
    round = null;
    if (r.content.trim() === "" && r.calls.length === 0) {
      skipped += r.reasoning.length; // reasoning that led to nothing said
      return;
    }
    records.push({
      type: "message",
      role: "assistant",
      content: cut(r.content),
      ...(r.reasoning.length > 0 ? { reasoning: cut(r.reasoning.join("\n\n")) } : {}),
      ...(r.calls.length > 0 ? { toolCalls: r.calls.map(({ callId, name }) => ({ toolCallId: callId, toolName: name })) } : {}),
      ...(r.timestamp ? { timestamp: r.timestamp } : {}),
    });
    for (const call of r.calls) {
      const result = r.results.get(call.callId);
      records.push({
        type: "tool_call",
        toolCallId: call.callId,
        toolName: call.name,
        arguments: boundedArguments(call.arguments, maxTextBytes),
        status: result ? (result.failed ? "failed" : "completed") : "skipped",
        result: result ? cut(result.output) : NO_RESULT,
        ...(result?.exitCode !== undefined ? { exitCode: result.exitCode } : {}),
        ...(call.timestamp ? { timestamp: call.timestamp } : {}),
        ...(result?.timestamp ? { completedAt: result.timestamp } : call.timestamp ? { completedAt: call.timestamp } : {}),
      });
    }
  };

  for (const item of items) {
    const at = item.timestamp ? { timestamp: item.timestamp } : {};
    switch (item.kind) {
      case "user":
        flush();
        records.push({ type: "message", role: "user", content: cut(item.text), ...at });
        break;
      case "reasoning":
        reasoning.push(item.text);
        break;
      case "compaction":
        flush();
        compactions.push({ before: records.length, summary: cut(item.summary), ...at });
        break;
      case "assistant": {
        const current = round as Round | null;
        if (current && current.calls.length === 0 && item.messageId !== undefined && current.messageId === item.messageId) {
          current.content = current.content === "" ? item.text : `${current.content}\n\n${item.text}`;
        } else {
          flush();
          round = open(item.text, { ...at, ...(item.messageId ? { messageId: item.messageId } : {}) });
        }
        break;
      }
      case "call": {
        let current = round as Round | null;
        if (!current || current.answered) {
          flush();
          current = round = open("", at);
        }
        if (current.calls.some((c) => c.callId === item.callId) || item.callId.length > 256 || item.name.length > 256) {
          skipped++;
          break;
        }
        current.calls.push({ callId: item.callId, name: item.name, arguments: item.arguments, ...at });
        break;
      }
      case "result": {
        const current = round as Round | null;
        if (!current || !current.calls.some((c) => c.callId === item.callId) || current.results.has(item.callId)) {
          skipped++;
          break;
        }
        current.results.set(item.callId, item);
        current.answered = true;
        break;
      }
    }
  }
  flush();
  skipped += reasoning.length;

  if (records.length > MAX_IMPORTED_RECORDS) {
    // Cut before a message: every round before it is whole.
    let end = MAX_IMPORTED_RECORDS;
    while (end > 0 && records[end]!.type !== "message") end--;
    records.length = end;
    truncated = true;
  }
  return { records, compactions: compactions.filter((c) => c.before < records.length || !truncated), skipped, truncated };
}

/** `text` within `maxBytes` UTF-8 bytes, with a note of what was cut. */
export function cutText(text: string, maxBytes: number): string {
  if (text.length * 3 <= maxBytes || Buffer.byteLength(text) <= maxBytes) return text;
  const note = `\n[… cut on import: longer than ${maxBytes} bytes]`;
  const kept = Buffer.from(text).subarray(0, Math.max(0, maxBytes - Buffer.byteLength(note))).toString("utf8");
  // A character split by the cut decodes as U+FFFD: drop it.
  return `${kept.replace(/\uFFFD$/, "")}${note}`;
}

function boundedArguments(args: Record<string, unknown>, maxBytes: number): Record<string, unknown> {
  const json = JSON.stringify(args);
  return Buffer.byteLength(json) <= maxBytes ? args : { truncated: cutText(json, Math.floor(maxBytes / 2)) };
}
