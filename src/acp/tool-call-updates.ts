/**
 * agentwire's tool calls as ACP tool calls: the `tool_call` an editor shows
 * when the model proposes one (tool_pending), the `tool_call_update`s as it
 * runs and ends, and the same shapes for a stored record replayed by
 * session/load. Pure functions: no connection here.
 */
import { isAbsolute, join } from "node:path";
import type * as acp from "@agentclientprotocol/sdk";
import type { ToolCallRecord, ToolExecutingNotification, ToolPendingNotification } from "../../clients/typescript/index.js";

type FileChange = NonNullable<ToolPendingNotification["changes"]>[number];
type ToolLocation = ToolPendingNotification["locations"][number];

/** Most characters of a tool's output or result an update carries (the tail: where a failure usually says why). */
export const MAX_TOOL_TEXT_CHARS = 16 * 1024;

/** ACP locations are absolute; agentwire's are relative to the conversation's workspace. */
export function acpLocations(locations: readonly ToolLocation[] | undefined, workspace: string): acp.ToolCallLocation[] {
  return (locations ?? []).map((l) => ({ path: absolute(l.path, workspace), ...(l.line !== undefined ? { line: l.line } : {}) }));
}

function absolute(path: string, workspace: string): string {
  return isAbsolute(path) ? path : join(workspace, path);
}

/**
 * ACP's diff is old text / new text; agentwire's is a unified diff. The
 * hunks give both sides of the changed region with its context lines, which
 * is what an editor renders (as agents that send an edit's old_string /
 * new_string do); a whole new file has no old side.
 */
export function diffContent(change: FileChange, workspace: string): acp.ToolCallContent {
  const oldLines: string[] = [];
  const newLines: string[] = [];
  let inHunk = false;
  for (const line of change.diff.split("\n")) {
    if (line.startsWith("@@")) {
      if (inHunk) {
        oldLines.push("…");
        newLines.push("…");
      }
      inHunk = true;
      continue;
    }
    if (!inHunk || line.startsWith("\\")) continue;
    if (line.startsWith(" ")) {
      oldLines.push(line.slice(1));
      newLines.push(line.slice(1));
    } else if (line.startsWith("-")) oldLines.push(line.slice(1));
    else if (line.startsWith("+")) newLines.push(line.slice(1));
  }
  return {
    type: "diff",
    path: absolute(change.path, workspace),
    oldText: change.kind === "add" ? null : oldLines.join("\n"),
    newText: change.kind === "delete" ? "" : newLines.join("\n"),
  };
}

export function textContent(text: string): acp.ToolCallContent {
  const shown = text.length > MAX_TOOL_TEXT_CHARS ? `…${text.slice(-MAX_TOOL_TEXT_CHARS)}` : text;
  return { type: "content", content: { type: "text", text: shown } };
}

/** The changes a file tool would make (or made) as diff content; a change that would fail says why instead. */
function changesContent(changes: readonly FileChange[] | undefined, workspace: string): acp.ToolCallContent[] {
  return (changes ?? []).map((c) => (c.problem ? textContent(`${c.path}: ${c.problem}`) : diffContent(c, workspace)));
}

/** tool_pending: the call as proposed, waiting (status pending) unless auto-confirmed. */
export function toolCallOf(call: ToolPendingNotification, workspace: string): acp.ToolCall {
  return {
    toolCallId: call.toolCallId,
    title: call.title,
    name: call.toolName,
    kind: call.kind,
    status: "pending",
    locations: acpLocations(call.locations, workspace),
    rawInput: call.arguments,
    content: changesContent(call.changes, workspace),
  };
}

/** What a unified diff stored on a record (write_file, edit_file) shows as, as for tool_pending's changes. */
function recordDiff(record: ToolCallRecord, workspace: string): acp.ToolCallContent[] {
  if (!record.diff) return [];
  const path = record.locations?.[0]?.path ?? /^\+\+\+ b\/(.+)$/m.exec(record.diff)?.[1] ?? /^--- a\/(.+)$/m.exec(record.diff)?.[1];
  if (!path) return [];
  const kind = /^--- \/dev\/null$/m.test(record.diff) ? "add" : /^\+\+\+ \/dev\/null$/m.test(record.diff) ? "delete" : "modify";
  return [diffContent({ path, kind, diff: record.diff }, workspace)];
}

type Status = NonNullable<acp.ToolCallUpdate["status"]>;

/** A record that has ended (completed, failed, skipped) as the update that closes its call. */
export function settledUpdate(record: ToolCallRecord, workspace: string, skipReason?: string): acp.ToolCallUpdate {
  // ACP has no "skipped": a call that will not run ends as failed, saying why.
  const status: Status = record.status === "completed" ? "completed" : record.status === "pending" ? "pending" : record.status === "executing" ? "in_progress" : "failed";
  const result = record.result ?? "";
  const text = record.status === "skipped" ? `Skipped${skipReason ? ` (${skipReason})` : ""}${result ? `: ${result}` : ""}` : result;
  const diff = record.status === "completed" ? recordDiff(record, workspace) : [];
  return {
    toolCallId: record.toolCallId,
    status,
    content: diff.length > 0 ? diff : text ? [textContent(text)] : [],
    rawOutput: { result: record.result, success: record.success, ...(record.exitCode !== undefined ? { exitCode: record.exitCode } : {}) },
  };
}

/** A stored record, replayed by session/load: the whole call at once. */
export function replayedToolCall(record: ToolCallRecord, workspace: string): acp.ToolCall {
  const settled = settledUpdate(record, workspace);
  return {
    toolCallId: record.toolCallId,
    title: record.title ?? record.toolName,
    name: record.toolName,
    kind: record.kind ?? "other",
    status: settled.status ?? undefined,
    locations: acpLocations(record.locations, workspace),
    rawInput: record.arguments,
    content: settled.content ?? [],
    ...(record.status === "pending" || record.status === "executing" ? {} : { rawOutput: settled.rawOutput }),
  };
}

/** tool_executing: running now; a changed diff (edited arguments) replaces the one shown. */
export function executingUpdate(event: ToolExecutingNotification, workspace: string): acp.ToolCallUpdate {
  return {
    toolCallId: event.toolCallId,
    status: "in_progress",
    title: event.title,
    kind: event.kind,
    locations: acpLocations(event.locations, workspace),
    rawInput: event.arguments,
    ...(event.changes ? { content: changesContent(event.changes, workspace) } : {}),
  };
}
