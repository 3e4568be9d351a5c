/**
 * One client's session over any Link: each received frame goes through the
 * dispatcher and its reply (if any) goes back, then the work queued for
 * "right after the reply" runs (e.g. `connected` after initialize). The
 * session also bounds what a client can make it hold: frames in flight, and
 * how long it may stay connected without initializing.
 */
import type { App, RequestContext } from "../app.js";
import type { Logger } from "../logging/logger.js";
import type { Dispatcher } from "../rpc/dispatcher.js";
import { createConnection, type Connection } from "../sessions/connection.js";
import type { Link } from "./link.js";

export interface SessionOptions {
  dispatcher: Dispatcher<RequestContext>;
  /** The app is assembled after the transports (it needs their connection set). */
  app: () => App;
  log: Logger;
  /** A link that has not initialized this long after opening is closed (1008). 0 disables. */
  initializeTimeoutMs: number;
  /** Frames being handled at once; beyond it the link is paused (or, if it cannot pause, frames wait in order). */
  maxInFlight: number;
  /** Called for every frame handed to the link (the server's frames-sent counter): keep it cheap, it is on the token path. */
  onFrameSent?: () => void;
}

export interface LinkSession {
  readonly connection: Connection;
  /** Feed one received frame: its text, or its UTF-8 bytes. */
  receive(frame: string | Buffer): void;
  /** The link has closed: drop subscriptions and timers. Idempotent. */
  closed(): void;
}

export function openSession(link: Link, id: string, options: SessionOptions): LinkSession {
  const { dispatcher, log } = options;
  const { onFrameSent } = options;
  const connection = createConnection(
    id,
    onFrameSent
      ? (frame) => {
          onFrameSent();
          link.send(frame);
        }
      : (frame) => link.send(frame),
  );
  connection.close = (code, reason) => link.close(code, reason);
  let inFlight = 0;
  let paused = false;
  let ended = false;
  const waiting: (string | Buffer)[] = [];

  const initTimer =
    options.initializeTimeoutMs > 0
      ? setTimeout(() => {
          if (connection.initialized || ended) return;
          log.info(`connection ${id} sent no initialize within ${options.initializeTimeoutMs} ms; closing it`);
          link.close(1008, `initialize was not sent within ${options.initializeTimeoutMs} ms`);
        }, options.initializeTimeoutMs)
      : undefined;
  initTimer?.unref();

  const handle = (frame: string | Buffer) => {
    inFlight++;
    const context: RequestContext = { connection, app: options.app(), afterReply: [] };
    dispatcher
      .handleFrame(frame, context)
      .then(
        (reply) => {
          if (reply !== undefined) connection.send(reply);
          for (const after of context.afterReply) after();
        },
        (error) => log.error("frame handling failed", error),
      )
      .finally(() => {
        inFlight--;
        if (ended) return;
        while (waiting.length > 0 && inFlight < options.maxInFlight) handle(waiting.shift()!);
        if (paused && inFlight < options.maxInFlight) {
          paused = false;
          link.resume?.();
        }
      });
  };

  return {
    connection,
    receive(frame) {
      if (ended) return;
      if (inFlight < options.maxInFlight && waiting.length === 0) {
        handle(frame);
      } else {
        waiting.push(frame);
      }
      if (inFlight >= options.maxInFlight && !paused && link.pause) {
        paused = true;
        link.pause();
      }
    },
    closed() {
      if (ended) return;
      ended = true;
      waiting.length = 0;
      if (initTimer) clearTimeout(initTimer);
      options.app().hub.disconnect(connection);
      // Its client tools go; their calls in flight wait for the same client to come back (client-tools.ts), here
      // and on the owners of the conversations it registered tools on through this instance (cluster mode).
      const app = options.app();
      app.agent.clientTools.closed(connection.id);
      if (connection.clientToolConversations.size > 0) app.cluster?.connectionClosed(connection.id, connection.clientToolConversations);
    },
  };
}
