/**
 * Checks a history a client imports with conversation.create and turns it
 * into stored records.
 *
 * The rule is the one the model API enforces, stated on records: every tool
 * call an assistant message announces is answered, right after it, by one
 * settled tool_call record carrying its id. Stored histories written by the
 * loop always have that shape; an imported one must have it too, so that the
 * context builder never has to invent answers for a history nobody ran here.
 * Refusing (rather than storing a missing answer as "skipped") keeps an
 * import exact: what the client sent is what the model will see.
 */
import type * as z from "zod";
import type { ConversationRecord, ImportedRecord, ParamIssue } from "../../protocol/index.js";
import { newId } from "../ids.js";
import { RpcError } from "../rpc/rpc-error.js";
import { checkTextSize } from "./text-size.js";

export type ImportedHistory = readonly z.output<typeof ImportedRecord>[];

/** More issues than this add noise, not information: the first ones name the mistake. */
const MAX_ISSUES = 20;

interface OpenRound {
  /** Position of the announcing assistant message. */
  at: number;
  /** toolCallId → where it is in the message's toolCalls, its tool, and the record answering it once seen. */
  calls: Map<string, { index: number; toolName: string; answeredAt?: number }>;
  unanswered: number;
}

/**
 * Every structural problem of the history, each naming its record
 * (`records[3].toolCallId`). Empty when the history is valid. Pure: sizes are
 * checked by checkImportedHistory.
 */
export function findHistoryIssues(records: ImportedHistory): ParamIssue[] {
  const issues: ParamIssue[] = [];
  const issue = (path: string, message: string) => issues.push({ path, message, code: "custom" });
  let round: OpenRound | null = null;

  const closeRound = (before: number | null) => {
    if (!round || round.unanswered === 0) return;
    for (const [toolCallId, call] of round.calls) {
      if (call.answeredAt !== undefined) continue;
      issue(
        `records[${round.at}].toolCalls[${call.index}].toolCallId`,
        `tool call "${toolCallId}" is never answered: a tool_call record (completed, failed or skipped) with this id must follow the message${before === null ? "" : `, before records[${before}]`} (only tool_call records may come between)`,
      );
    }
  };

  records.forEach((record, i) => {
    if (record.type === "reasoning") {
      // Stored as the loop stores it: the thinking of the reply that follows, after the previous round's answers.
      closeRound(i);
      round = null;
      const next = records[i + 1];
      if (next && !(next.type === "message" && next.role === "assistant")) {
        issue(`records[${i}].type`, `a reasoning record must be followed by the assistant message it is the thinking of (or be the last record); records[${i + 1}] is not one`);
      }
      return;
    }
    if (record.type === "message") {
      closeRound(i);
      round = null;
      if (!record.toolCalls) return;
      if (record.role !== "assistant") {
        issue(`records[${i}].toolCalls`, `only assistant messages make tool calls (this one is ${record.role})`);
        return;
      }
      const opened: OpenRound = { at: i, calls: new Map(), unanswered: 0 };
      record.toolCalls.forEach((call, k) => {
        if (opened.calls.has(call.toolCallId)) {
          issue(`records[${i}].toolCalls[${k}].toolCallId`, `"${call.toolCallId}" is listed twice in this message; each call needs its own id`);
          return;
        }
        opened.calls.set(call.toolCallId, { index: k, toolName: call.toolName });
        opened.unanswered++;
      });
      round = opened;
      return;
    }
    const call = round?.calls.get(record.toolCallId);
    if (!round || !call) {
      issue(
        `records[${i}].toolCallId`,
        `no assistant message announces tool call "${record.toolCallId}" before this record (a tool_call record must follow the assistant message whose toolCalls list its id, with only tool_call records between)`,
      );
      return;
    }
    if (call.answeredAt !== undefined) {
      issue(`records[${i}].toolCallId`, `tool call "${record.toolCallId}" is already answered by records[${call.answeredAt}]`);
      return;
    }
    // It answers the call either way: a wrong name is its one problem, not also a missing answer.
    call.answeredAt = i;
    round.unanswered--;
    if (call.toolName !== record.toolName) {
      issue(`records[${i}].toolName`, `records[${round.at}] announced call "${record.toolCallId}" as tool "${call.toolName}", not "${record.toolName}"`);
    }
  });
  closeRound(null);
  return issues.slice(0, MAX_ISSUES);
}

/**
 * Refuses an oversized text with LIMIT_EXCEEDED naming the field, then a
 * malformed history with -32602 naming each problem. Sizes go first: they
 * are the cheaper mistake to report and nothing else is looked at twice.
 */
export function checkImportedHistory(records: ImportedHistory, maxMessageBytes: number): void {
  records.forEach((record, i) => {
    if (record.type === "message") {
      checkTextSize(`records[${i}].content`, record.content, maxMessageBytes);
      if (record.reasoning !== undefined) checkTextSize(`records[${i}].reasoning`, record.reasoning, maxMessageBytes);
    } else if (record.type === "reasoning") {
      checkTextSize(`records[${i}].content`, record.content, maxMessageBytes);
    } else {
      if (record.result !== undefined) checkTextSize(`records[${i}].result`, record.result, maxMessageBytes);
      checkTextSize(`records[${i}].arguments`, JSON.stringify(record.arguments), maxMessageBytes);
    }
  });
  const issues = findHistoryIssues(records);
  if (issues.length > 0) throw RpcError.invalidParams(issues);
}

/**
 * The records to store: new record ids (record ids are unique within the
 * server, so a client's cannot be trusted to be), the client's toolCallIds,
 * and `now` where the client gave no timestamp.
 */
export function toStoredRecords(records: ImportedHistory, now: string): ConversationRecord[] {
  return records.map((record): ConversationRecord => {
    const timestamp = record.timestamp ?? now;
    if (record.type === "reasoning") return { type: "reasoning", id: newId("r"), content: record.content, timestamp };
    if (record.type === "message") {
      return {
        type: "message",
        id: newId("r"),
        role: record.role,
        content: record.content,
        ...(record.reasoning !== undefined ? { reasoning: record.reasoning } : {}),
        ...(record.toolCalls ? { toolCalls: record.toolCalls.map(({ toolCallId, toolName }) => ({ toolCallId, toolName })) } : {}),
        timestamp,
      };
    }
    return {
      type: "tool_call",
      id: newId("r"),
      toolCallId: record.toolCallId,
      toolName: record.toolName,
      arguments: record.arguments,
      result: record.result ?? "",
      success: record.status === "completed",
      status: record.status,
      ...(record.exitCode !== undefined ? { exitCode: record.exitCode } : {}),
      timestamp,
      completedAt: record.completedAt ?? timestamp,
    };
  });
}
