/**
 * Server-wide notices (delivery "server" in protocol/notices.ts): about the
 * server as a whole, not one conversation, so they go to every initialized
 * connection of this instance — subscribed or not — with no conversationId
 * and no seq. They are not replayed: a client that was away reads the state
 * they tell of (mcp.list) instead.
 */
import type { NoticeNotification, ServerNoticeCode } from "../../protocol/notices.js";
import type { Connection } from "./connection.js";
import { notificationFrame } from "./notification-frame.js";

export interface ServerNotice {
  level: NoticeNotification["level"];
  code: ServerNoticeCode;
  message: string;
  data: Record<string, unknown>;
}

export function broadcastNotice(connections: Iterable<Connection>, notice: ServerNotice): void {
  const frame = notificationFrame("notice", { timestamp: new Date().toISOString(), generationId: null, ...notice });
  for (const connection of connections) {
    if (connection.initialized && connection.wants("notice")) connection.send(frame);
  }
}
