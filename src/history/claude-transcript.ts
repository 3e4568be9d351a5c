/**
 * Claude Code transcripts: `~/.claude/projects/<cwd with / as ->/<session id>.jsonl`.
 * Each line is one event with `type`, `uuid`/`parentUuid`, `sessionId`,
 * `cwd` and `timestamp`; `user` and `assistant` lines carry the Messages
 * API `message` ({ role, content: string | blocks }). Claude Code writes a
 * model reply one content block per line, all lines sharing `message.id`;
 * tool results come back as `tool_result` blocks of a `user` line. Lines of
 * a sub-agent (`isSidechain`) are its own conversation, not this one's:
 * its own file (`agent-<id>.jsonl`) is read with `subAgent`, where its
 * lines' `sessionId` names the session that started it.
 */
import { addItem, emptySession, isoTime, obj, str, type ParsedSession } from "./history-items.js";
import { readableLines } from "./json-lines.js";

/** Line types with nothing to import: titles Claude Code made, its own notes and file snapshots. */
const IGNORED = new Set(["summary", "system", "file-history-snapshot", "queue-operation", "progress", "attachment", "custom-title"]);

/** User lines Claude Code writes for its slash commands: their echo, not something said to the model. */
const COMMAND_ECHO = ["<command-name>", "<command-message>", "<local-command-stdout>", "<local-command-stderr>", "<command-args>"];

/** `subAgent`: the file is a sub-agent's own transcript (every line a sidechain), read as its conversation. */
export function parseClaudeTranscript(text: string, maxLineBytes: number, subAgent = false): ParsedSession {
  const session = emptySession();
  const replies = new Set<string>();
  for (const line of readableLines(text, maxLineBytes, session.damaged)) {
    const { value } = line;
    const type = str(value.type);
    if (type !== "user" && type !== "assistant") {
      if (type === undefined || !IGNORED.has(type)) session.unknown.push(line.n);
      continue;
    }
    if (value.isSidechain === true && !subAgent) {
      session.skipped++;
      continue;
    }
    session.sessionId ??= str(value.sessionId) ?? null;
    session.cwd = str(value.cwd) ?? session.cwd;
    const timestamp = isoTime(value.timestamp);
    if (timestamp) {
      session.createdAt ??= timestamp;
      session.updatedAt = timestamp;
    }
    const message = obj(value.message);
    if (!message) {
      session.unknown.push(line.n);
      continue;
    }
    const at = timestamp ? { timestamp } : {};
    if (type === "user") readUser(session, message, value.isMeta === true, at, replies);
    else readAssistant(session, message, at, replies);
  }
  return session;
}

function readUser(session: ParsedSession, message: Record<string, unknown>, meta: boolean, at: { timestamp?: string }, replies: Set<string>): void {
  const blocks = typeof message.content === "string" ? [{ type: "text", text: message.content }] : Array.isArray(message.content) ? message.content : [];
  const texts: string[] = [];
  for (const raw of blocks) {
    const block = obj(raw);
    if (block?.type === "text" && typeof block.text === "string") {
      texts.push(block.text);
    } else if (block?.type === "tool_result" && typeof block.tool_use_id === "string") {
      addItem(session, { kind: "result", callId: block.tool_use_id, output: resultText(block.content), failed: block.is_error === true, ...at }, replies);
    } else {
      session.skipped++; // images, documents
    }
  }
  const text = texts.join("\n");
  if (text.trim() === "") return;
  // Caveats and command echoes Claude Code adds itself are not the user's words.
  if (meta || COMMAND_ECHO.some((mark) => text.trimStart().startsWith(mark))) {
    session.skipped++;
    return;
  }
  addItem(session, { kind: "user", text, ...at }, replies);
}

function readAssistant(session: ParsedSession, message: Record<string, unknown>, at: { timestamp?: string }, replies: Set<string>): void {
  const model = str(message.model);
  if (model && model !== "<synthetic>") session.model = model;
  const messageId = str(message.id);
  const reply = messageId ? { messageId } : {};
  const blocks = typeof message.content === "string" ? [{ type: "text", text: message.content }] : Array.isArray(message.content) ? message.content : [];
  for (const raw of blocks) {
    const block = obj(raw);
    if (block?.type === "text" && typeof block.text === "string") {
      if (block.text.trim() !== "") addItem(session, { kind: "assistant", text: block.text, ...reply, ...at }, replies);
    } else if (block?.type === "thinking" && typeof block.thinking === "string" && block.thinking !== "") {
      addItem(session, { kind: "reasoning", text: block.thinking, ...at }, replies);
    } else if (block?.type === "tool_use" && typeof block.id === "string" && typeof block.name === "string") {
      addItem(session, { kind: "call", callId: block.id, name: block.name, arguments: obj(block.input) ?? { input: block.input ?? null }, ...at }, replies);
    } else {
      session.skipped++; // redacted thinking, server tool blocks
    }
  }
}

/** A tool_result's content: text, or blocks whose text is joined (an image stands as a placeholder). */
function resultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((raw) => {
      const block = obj(raw);
      return block?.type === "text" ? (str(block.text) ?? "") : `[${str(block?.type) ?? "content"} not imported]`;
    })
    .join("\n");
}
