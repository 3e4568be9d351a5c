import type { NotificationMethod } from "../../protocol/index.js";

/** The transport-independent view of one client connection. */
export interface Connection {
  readonly id: string;
  initialized: boolean;
  clientInfo?: { name: string; version?: string };
  /** The stand-in a request forwarded from another instance runs on (cluster mode): nothing sent on it reaches a client. */
  forwarded?: boolean;
  /** Sent `capabilities.experimentalApi: true` in initialize: experimental methods are allowed. */
  experimentalApi: boolean;
  /** Sent `capabilities.subscriberPresence: true` in initialize: it receives subscribers_changed. */
  subscriberPresence: boolean;
  /** Notification methods this client opted out of at initialize. */
  optOut: ReadonlySet<string>;
  /** Conversations this connection is subscribed to. */
  readonly subscriptions: Set<string>;
  /** Cluster mode: conversations it registered client tools on (tools.register), whose owners are told when it closes. */
  readonly clientToolConversations: Set<string>;
  /** Send a pre-serialized frame. Must never throw. */
  send(frame: string): void;
  wants(method: NotificationMethod): boolean;
  /** Aborted when the connection has closed: what a request that waits (generation.wait) listens to. */
  readonly closeSignal: AbortSignal;
  /** The transport has closed the connection; idempotent. */
  markClosed(): void;
  /**
   * Close the transport with a WebSocket close code and reason, when it can
   * be closed from here (a forwarded request's stand-in cannot).
   */
  close?(code: number, reason: string): void;
}

export function createConnection(id: string, send: (frame: string) => void): Connection {
  const lifetime = new AbortController();
  const connection: Connection = {
    id,
    initialized: false,
    experimentalApi: false,
    subscriberPresence: false,
    optOut: new Set(),
    subscriptions: new Set(),
    clientToolConversations: new Set(),
    send,
    wants(method) {
      return connection.optOut.size === 0 || !connection.optOut.has(method);
    },
    closeSignal: lifetime.signal,
    markClosed() {
      lifetime.abort();
    },
  };
  return connection;
}
