/**
 * A message-passing link to one client: one text frame in, one text frame
 * out, a close. The WebSocket server provides one per socket; tests and
 * embedders use an in-memory pair (in-memory-link.ts). Everything above it
 * (parse → dispatch → reply, the connection's subscriptions) is the same for
 * every link.
 */
export interface Link {
  /** Send one text frame. Never throws; frames to a closed link are dropped. */
  send(frame: string): void;
  /** Close the link with a WebSocket close code and reason. */
  close(code: number, reason: string): void;
  /** Stop delivering received frames until resume() (backpressure); optional. */
  pause?(): void;
  resume?(): void;
  /** The peer's address, for logs and per-address limits, when there is one. */
  readonly remoteAddress?: string;
}
