/**
 * The WebSocket side: one Connection per socket, frames through the
 * dispatcher, a bounded send backlog and a heartbeat. Whatever a client
 * sends, the process must survive it: every socket has an error listener
 * (ws raises an error for an oversized frame and would otherwise crash us).
 */
import type { IncomingMessage, Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { WebSocket, WebSocketServer, type RawData } from "ws";
import type { App, RequestContext } from "../app.js";
import type { ServerConfig } from "../config.js";
import { newId } from "../ids.js";
import type { Logger } from "../logging/logger.js";
import type { Dispatcher } from "../rpc/dispatcher.js";
import { createConnection, type Connection } from "../sessions/connection.js";
import { checkUpgrade, ownOriginsFor, selectProtocol } from "./upgrade-guard.js";

export interface WebSocketTransport {
  readonly connections: Set<Connection>;
  close(): Promise<void>;
}

export function attachWebSocket(
  http: HttpServer,
  config: ServerConfig,
  log: Logger,
  dispatcher: Dispatcher<RequestContext>,
  /** The app is assembled after the transport (it needs the connection set). */
  app: () => App,
): WebSocketTransport {
  const connections = new Set<Connection>();
  const sockets = new Set<WebSocket>();
  // One timer for all sockets (not one each): a peer that did not answer the
  // previous ping is terminated, the others are pinged again.
  const alive = new Set<WebSocket>();
  const heartbeat =
    config.heartbeatMs > 0
      ? setInterval(() => {
          for (const socket of sockets) {
            if (socket.readyState !== WebSocket.OPEN) continue; // ping() throws on a closing socket
            if (!alive.has(socket)) {
              socket.terminate();
              continue;
            }
            alive.delete(socket);
            socket.ping();
          }
        }, config.heartbeatMs)
      : undefined;
  heartbeat?.unref();

  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: config.maxPayloadBytes,
    // Frames are small JSON; compression costs more CPU than it saves on loopback.
    perMessageDeflate: false,
    handleProtocols: (offered) => selectProtocol(offered),
  });

  let ownOrigins: string[] | undefined;
  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on("error", () => socket.destroy());
    ownOrigins ??= ownOriginsFor(config.host, (http.address() as AddressInfo).port);
    const verdict = checkUpgrade(request, { token: config.token, allowOrigins: config.allowOrigins, ownOrigins });
    if (!verdict.ok) {
      const text = { 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden" }[verdict.status];
      const body = JSON.stringify({ error: verdict.reason });
      socket.end(
        `HTTP/1.1 ${verdict.status} ${text}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
      log.info(`refused upgrade from ${request.socket.remoteAddress}: ${verdict.reason}`);
      return;
    }
    wss.handleUpgrade(request, socket, head, (ws) => wss.emit("connection", ws, request));
  };
  http.on("upgrade", onUpgrade);

  wss.on("connection", (socket: WebSocket) => {
    sockets.add(socket);
    alive.add(socket);
    const connection = createConnection(newId("k"), (frame) => {
      if (socket.readyState !== WebSocket.OPEN) return;
      if (socket.bufferedAmount > config.maxBufferedBytes) {
        // A client that stops reading must not grow our memory without bound;
        // it can reconnect and resume with afterSeq. Terminated, not closed: a
        // peer that reads nothing would never read a close frame either.
        log.warn(`connection ${connection.id} is not reading (send backlog over ${config.maxBufferedBytes} bytes); dropping it`);
        socket.terminate();
        return;
      }
      socket.send(frame);
    });
    connections.add(connection);
    log.debug(`connection ${connection.id} opened`);

    socket.on("error", (error) => log.debug(`socket error on ${connection.id}: ${error.message}`));
    socket.on("pong", () => alive.add(socket));
    socket.on("message", (data) => {
      const text = frameText(data);
      const context: RequestContext = { connection, app: app(), afterReply: [] };
      dispatcher.handleFrame(text, context).then(
        (outcome) => {
          if (outcome.reply !== undefined) connection.send(outcome.reply);
          for (const after of context.afterReply) after();
        },
        (error) => log.error("frame handling failed", error),
      );
    });
    socket.on("close", () => {
      sockets.delete(socket);
      alive.delete(socket);
      connections.delete(connection);
      app().hub.disconnect(connection);
      log.debug(`connection ${connection.id} closed`);
    });
  });

  return {
    connections,
    close: async () => {
      if (heartbeat) clearInterval(heartbeat);
      http.off("upgrade", onUpgrade);
      for (const socket of sockets) socket.close(1001, "server shutting down");
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          for (const socket of sockets) socket.terminate();
          resolve();
        }, 1000);
        timer.unref();
        const check = () => (sockets.size === 0 ? (clearTimeout(timer), resolve()) : setTimeout(check, 10).unref());
        check();
      });
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}

/** Text frames are the protocol; a binary frame is read as UTF-8 JSON all the same. */
function frameText(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString("utf8");
  if (Array.isArray(data)) return Buffer.concat(data).toString("utf8");
  return Buffer.from(data).toString("utf8");
}
