/**
 * What a runtime's session file says, once its own format is read: the
 * common vocabulary the Codex and Claude Code parsers produce and the
 * record assembler (history-records.ts) consumes.
 */

/** One event of a session, in file order. */
export type HistoryItem =
  | { kind: "user"; text: string; timestamp?: string }
  /** `messageId`: several lines of one model reply (Claude Code writes one line per content block) share it. */
  | { kind: "assistant"; text: string; messageId?: string; timestamp?: string }
  | { kind: "reasoning"; text: string; timestamp?: string }
  | { kind: "call"; callId: string; name: string; arguments: Record<string, unknown>; timestamp?: string }
  | { kind: "result"; callId: string; output: string; failed: boolean; exitCode?: number; timestamp?: string }
  /** The runtime compacted its context here: from this point its model saw `summary` instead of what came before. */
  | { kind: "compaction"; summary: string; timestamp?: string };

/** A session file read whole: what the index shows, and the items an import turns into records. */
export interface ParsedSession {
  /** The runtime's own session id, when the file names it. */
  sessionId: string | null;
  cwd: string | null;
  model: string | null;
  createdAt: string | null;
  updatedAt: string | null;
  title: string;
  messageCount: number;
  items: HistoryItem[];
  /** Items with no agentwire record (images, system messages, injected context…). */
  skipped: number;
  /** Line numbers (1-based) that are not JSON or too long. */
  damaged: number[];
  /** Line numbers whose `type` the parser does not know. */
  unknown: number[];
}

export function emptySession(): ParsedSession {
  return { sessionId: null, cwd: null, model: null, createdAt: null, updatedAt: null, title: "", messageCount: 0, items: [], skipped: 0, damaged: [], unknown: [] };
}

/** A time as records store it (ISO with milliseconds, UTC), or undefined when `value` is not one. */
export function isoTime(value: unknown): string | undefined {
  if (typeof value !== "string" && typeof value !== "number") return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

/** The title a list shows: the first user text, whitespace collapsed, cut at 200 characters. */
export function titleOf(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= 200 ? flat : `${flat.slice(0, 199)}…`;
}

export const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);
export const obj = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;

/** Every parser keeps the same running summary as it adds items. */
export function addItem(session: ParsedSession, item: HistoryItem, seenReplies: Set<string>): void {
  session.items.push(item);
  if (item.timestamp) {
    session.createdAt ??= item.timestamp;
    session.updatedAt = item.timestamp;
  }
  if (item.kind === "user") {
    session.messageCount++;
    if (session.title === "") session.title = titleOf(item.text);
  } else if (item.kind === "assistant") {
    // One reply written over several lines is one message.
    if (item.messageId === undefined || !seenReplies.has(item.messageId)) session.messageCount++;
    if (item.messageId !== undefined) seenReplies.add(item.messageId);
  }
}
