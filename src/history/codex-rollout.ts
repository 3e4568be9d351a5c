/**
 * Codex CLI rollouts: `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl`.
 * Each line is `{ timestamp, type, payload }`: `session_meta` (id, cwd,
 * start time), `turn_context` (model, cwd of a turn), `response_item` (what
 * the model saw and said: message, reasoning, function_call,
 * function_call_output, local_shell_call, custom_tool_call…) and
 * `event_msg` (the UI's copy of the same turn, not needed here) and
 * `compacted` (the summary that replaced the history before it). Older
 * rollouts wrote a bare meta object first and bare response items after it;
 * both are read.
 */
import { addItem, emptySession, isoTime, obj, str, type ParsedSession } from "./history-items.js";
import { readableLines } from "./json-lines.js";

/** Line types read for nothing: the UI's events (user_message, agent_message, token_count…) duplicate the response items. */
const IGNORED = new Set(["event_msg"]);

/** User messages Codex writes itself before the first prompt: its context, not something the user said. */
const INJECTED = ["<environment_context>", "<user_instructions>", "<user_shell_command>", "# AGENTS.md instructions", "<INSTRUCTIONS>"];

const RESPONSE_ITEM_TYPES = new Set(["message", "reasoning", "function_call", "function_call_output", "local_shell_call", "custom_tool_call", "custom_tool_call_output"]);

export function parseCodexRollout(text: string, maxLineBytes: number): ParsedSession {
  const session = emptySession();
  const replies = new Set<string>();
  for (const line of readableLines(text, maxLineBytes, session.damaged)) {
    const { value } = line;
    const timestamp = isoTime(value.timestamp);
    const payload = obj(value.payload);
    const type = str(value.type);
    if (type === "session_meta" && payload) {
      readMeta(session, payload, timestamp);
    } else if (type === "turn_context" && payload) {
      session.model = str(payload.model) ?? session.model;
      session.cwd ??= str(payload.cwd) ?? null;
    } else if (type === "compacted" && payload) {
      const summary = str(payload.message);
      if (summary !== undefined && summary.trim() !== "") addItem(session, { kind: "compaction", summary, ...(timestamp ? { timestamp } : {}) }, replies);
      else session.skipped++;
    } else if (type === "response_item" && payload) {
      readResponseItem(session, payload, timestamp, replies);
    } else if (type !== undefined && IGNORED.has(type)) {
      // known, nothing to take
    } else if (payload === undefined && type !== undefined && RESPONSE_ITEM_TYPES.has(type)) {
      readResponseItem(session, value, timestamp, replies); // the older, unwrapped layout
    } else if (type === undefined && line.n === 1 && str(value.id)) {
      readMeta(session, value, timestamp);
    } else if (type === undefined && value.record_type !== undefined) {
      // the older layout's state lines
    } else {
      session.unknown.push(line.n);
    }
  }
  return session;
}

function readMeta(session: ParsedSession, meta: Record<string, unknown>, timestamp: string | undefined): void {
  session.sessionId ??= str(meta.id) ?? null;
  session.cwd = str(meta.cwd) ?? session.cwd;
  session.model = str(meta.model) ?? session.model;
  const started = isoTime(meta.timestamp) ?? timestamp;
  if (started) {
    session.createdAt ??= started;
    session.updatedAt ??= started;
  }
}

/** The text of a message's content parts; images and other parts count as skipped. */
function textOf(session: ParsedSession, content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  const texts: string[] = [];
  for (const part of content) {
    const text = str(obj(part)?.text);
    if (text !== undefined) texts.push(text);
    else session.skipped++;
  }
  return texts.join("\n");
}

function readResponseItem(session: ParsedSession, item: Record<string, unknown>, timestamp: string | undefined, replies: Set<string>): void {
  const at = timestamp ? { timestamp } : {};
  switch (item.type) {
    case "message": {
      const text = textOf(session, item.content);
      const trimmed = text.trimStart();
      if (item.role === "user" && text.trim() !== "" && !INJECTED.some((mark) => trimmed.startsWith(mark))) {
        addItem(session, { kind: "user", text, ...at }, replies);
      } else if (item.role === "assistant" && text.trim() !== "") {
        addItem(session, { kind: "assistant", text, ...at }, replies);
      } else {
        session.skipped++; // developer and system messages, injected context, empty text
      }
      return;
    }
    case "reasoning": {
      const parts = [...(Array.isArray(item.summary) ? item.summary : []), ...(Array.isArray(item.content) ? item.content : [])];
      const text = parts
        .map((part) => str(obj(part)?.text))
        .filter((t): t is string => t !== undefined && t !== "")
        .join("\n\n");
      // Only encrypted reasoning: nothing a person (or another model) can read.
      if (text === "") session.skipped++;
      else addItem(session, { kind: "reasoning", text, ...at }, replies);
      return;
    }
    case "function_call":
    case "custom_tool_call": {
      const callId = str(item.call_id) ?? str(item.id);
      const name = str(item.name);
      if (!callId || !name) return void session.skipped++;
      const args = item.type === "function_call" ? parsedArguments(item.arguments) : { input: item.input ?? "" };
      addItem(session, { kind: "call", callId, name, arguments: args, ...at }, replies);
      return;
    }
    case "local_shell_call": {
      const callId = str(item.call_id) ?? str(item.id);
      const action = obj(item.action);
      if (!callId || !action) return void session.skipped++;
      const args: Record<string, unknown> = { command: action.command };
      if (action.working_directory !== undefined && action.working_directory !== null) args.workdir = action.working_directory;
      if (action.timeout_ms !== undefined && action.timeout_ms !== null) args.timeoutMs = action.timeout_ms;
      addItem(session, { kind: "call", callId, name: "local_shell", arguments: args, ...at }, replies);
      return;
    }
    case "function_call_output":
    case "custom_tool_call_output": {
      const callId = str(item.call_id);
      if (!callId) return void session.skipped++;
      addItem(session, { kind: "result", callId, ...outputOf(item.output), ...at }, replies);
      return;
    }
    default:
      session.skipped++; // web searches, image generation and other items with no agentwire record
  }
}

/** A function call's arguments: a JSON object as text; anything else is kept whole under `input`. */
function parsedArguments(raw: unknown): Record<string, unknown> {
  if (typeof raw === "string") {
    try {
      const parsed = obj(JSON.parse(raw));
      if (parsed) return parsed;
    } catch {
      // not JSON: kept as text below
    }
    return { input: raw };
  }
  return obj(raw) ?? { input: raw ?? null };
}

/**
 * A call's output. Codex writes text, or `{ content, success }`; its shell
 * tool's text is often itself JSON, `{ output, metadata: { exit_code } }`.
 */
function outputOf(raw: unknown): { output: string; failed: boolean; exitCode?: number } {
  const wrapped = obj(raw);
  if (wrapped) {
    const content = str(wrapped.content) ?? JSON.stringify(wrapped.content ?? "");
    return { ...outputOf(content), ...(wrapped.success === false ? { failed: true } : {}) };
  }
  const text = typeof raw === "string" ? raw : JSON.stringify(raw ?? "");
  if (text.startsWith("{")) {
    try {
      const shell = obj(JSON.parse(text));
      const output = str(shell?.output);
      const exitCode = obj(shell?.metadata)?.exit_code;
      if (output !== undefined && typeof exitCode === "number") return { output, failed: exitCode !== 0, exitCode };
    } catch {
      // plain text that starts with a brace
    }
  }
  return { output: text, failed: false };
}
