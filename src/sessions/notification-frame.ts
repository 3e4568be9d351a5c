import type { NotificationMethod, NotificationParams } from "../../protocol/index.js";

/**
 * The one way a notification becomes a frame: every event, `connected`
 * included, is serialized here, once, and the same string goes to every
 * connection that should see it.
 */
export function notificationFrame<N extends NotificationMethod>(method: N, params: NotificationParams<N>): string {
  return JSON.stringify({ jsonrpc: "2.0", method, params });
}
