import { PRESENCE_CLIENTS_MAX } from "../../protocol/index.js";
import type { Connection } from "./connection.js";
import { notificationFrame } from "./notification-frame.js";

/**
 * Who is subscribed to each conversation on this instance, whether served by
 * a local runtime or from the cluster's bus, and the `subscribers_changed`
 * notification when that changes. Kept apart from the runtimes' subscriber
 * sets because those follow where events come from (a runtime, the bus) and
 * move between the two; presence follows only the connections.
 *
 * Live only (see protocol/presence.ts): nothing here is stored or replayed.
 * In cluster mode it counts this instance's connections: a subscriber on
 * another instance is not seen here (README, "Running several instances").
 */
export class Presence {
  private readonly watchers = new Map<string, Set<Connection>>();

  joined(connection: Connection, conversationId: string): void {
    let set = this.watchers.get(conversationId);
    if (!set) {
      set = new Set();
      this.watchers.set(conversationId, set);
    }
    if (set.has(connection)) return;
    set.add(connection);
    this.announce(conversationId, set);
  }

  left(connection: Connection, conversationId: string): void {
    const set = this.watchers.get(conversationId);
    if (!set?.delete(connection)) return;
    if (set.size === 0) this.watchers.delete(conversationId);
    this.announce(conversationId, set);
  }

  /** The conversation is gone (deleted): nobody watches it any more, and nobody is told. */
  forget(conversationId: string): void {
    this.watchers.delete(conversationId);
  }

  private announce(conversationId: string, set: ReadonlySet<Connection>): void {
    const listeners = [...set].filter((c) => c.subscriberPresence);
    if (listeners.length === 0) return;
    const clients = [...set].slice(0, PRESENCE_CLIENTS_MAX).map((c) => ({ connectionId: c.id, clientInfo: c.clientInfo ?? null }));
    const frame = notificationFrame("subscribers_changed", {
      conversationId,
      timestamp: new Date().toISOString(),
      count: set.size,
      clients,
    });
    for (const connection of listeners) {
      if (connection.wants("subscribers_changed")) connection.send(frame);
    }
  }
}
