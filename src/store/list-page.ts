import type { Conversation } from "../../protocol/index.js";
import { InvalidCursorError, type ConversationPage } from "./conversation-store.js";
import { isValidConversationId } from "./conversation-id.js";

/** What paging needs to know about a conversation. */
export interface ListEntry {
  id: string;
  createdAt: string;
}

/** Newest first by createdAt, ties broken by id (descending), so the order is total. */
export function compareNewestFirst(a: ListEntry, b: ListEntry): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? 1 : -1;
  if (a.id !== b.id) return a.id < b.id ? 1 : -1;
  return 0;
}

/** The cursor names the last entry of a page; the next page starts strictly after it. */
export function encodeCursor(entry: ListEntry): string {
  return Buffer.from(`${entry.createdAt}|${entry.id}`, "utf8").toString("base64url");
}

export function decodeCursor(cursor: string): ListEntry {
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw new InvalidCursorError();
  const text = Buffer.from(cursor, "base64url").toString("utf8");
  const bar = text.lastIndexOf("|");
  const createdAt = text.slice(0, bar);
  const id = text.slice(bar + 1);
  if (bar <= 0 || createdAt.includes("|") || !isValidConversationId(id)) throw new InvalidCursorError();
  // Round-trip check: rejects strings that only decode by accident.
  if (encodeCursor({ createdAt, id }) !== cursor) throw new InvalidCursorError();
  return { createdAt, id };
}

/**
 * Picks one page from entries already sorted newest first. The cursor's entry
 * need not exist any more (it may have been deleted): paging compares keys.
 */
export function selectPage<E extends ListEntry>(
  sorted: readonly E[],
  limit: number,
  cursor: string | undefined,
): { page: E[]; nextCursor?: string } {
  const size = Math.max(1, Math.floor(Number.isFinite(limit) ? limit : 1));
  let start = 0;
  if (cursor !== undefined) {
    const after = decodeCursor(cursor);
    // Binary search for the first entry ordered strictly after the cursor.
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareNewestFirst(sorted[mid], after) <= 0) lo = mid + 1;
      else hi = mid;
    }
    start = lo;
  }
  const page = sorted.slice(start, start + size);
  const more = start + size < sorted.length;
  return more ? { page, nextCursor: encodeCursor(page[page.length - 1]) } : { page };
}

export function toPage(data: Conversation[], nextCursor: string | undefined): ConversationPage {
  return nextCursor === undefined ? { data } : { data, nextCursor };
}
