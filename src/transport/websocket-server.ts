/**
 * The WebSocket adapter: one Link per socket, handed to a session. What is
 * specific to sockets lives here: who may upgrade (token, Origin, connection
 * caps), a bounded send backlog, and a heartbeat. Whatever a client sends,
 * the process must survive it: every socket has an error listener (ws raises
 * an error for an oversized frame and would otherwise crash us).
 */
import type { IncomingMessage, Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import type { WebSocket, WebSocketServer } from "ws";
import type { LimitsConfig, ServerSettings } from "../../protocol/config.js";
import { newId } from "../ids.js";
import type { Logger } from "../logging/logger.js";
import type { Link } from "./link.js";
import type { LinkSession } from "./link-session.js";
import { frameBytes, OPEN, socketSender } from "./socket-writes.js";
import { loadWs, wsIfLoaded, type WsLibrary } from "./ws-load.js";
import { checkUpgrade, ownOriginsFor, selectProtocol } from "./upgrade-guard.js";

/** What the socket layer reads of the configuration: who may connect, and the bounds of a socket. */
export interface WebSocketSettings {
  server: Pick<ServerSettings, "host" | "token" | "allowOrigins" | "heartbeatMs">;
  limits: Pick<LimitsConfig, "maxPayloadBytes" | "maxBufferedBytes" | "maxConnections" | "maxConnectionsPerAddress">;
}

/**
 * What serves the sockets' links: on the main thread, a session each
 * (server.ts); in the socket thread, the main thread's sessions through
 * messages (socket-thread-worker.ts).
 */
export interface SocketAcceptor {
  /** Connections open now, whatever carries them: the cap counts them all. */
  count(): number;
  open(link: Link, id: string): Pick<LinkSession, "receive" | "closed">;
}

export interface WebSocketTransport {
  close(): Promise<void>;
}

export function attachWebSocket(
  http: HttpServer,
  config: WebSocketSettings,
  log: Logger,
  acceptor: SocketAcceptor,
  /** Told when a connection is dropped for not reading (the server's metrics). */
  onSlowConsumer: () => void = () => {},
): WebSocketTransport {
  const sockets = new Set<WebSocket>();
  const perAddress = new Map<string, number>();
  // One timer for all sockets (not one each): a peer that did not answer the
  // previous ping is terminated, the others are pinged again.
  const alive = new Set<WebSocket>();
  const heartbeat =
    config.server.heartbeatMs > 0
      ? setInterval(() => {
          for (const socket of sockets) {
            if (socket.readyState !== OPEN) continue; // ping() throws on a closing socket
            if (!alive.has(socket)) {
              socket.terminate();
              continue;
            }
            alive.delete(socket);
            socket.ping();
          }
        }, config.server.heartbeatMs)
      : undefined;
  heartbeat?.unref();

  let wss: WebSocketServer | undefined;
  const server = (ws: WsLibrary) =>
    (wss ??= new ws.WebSocketServer({
      noServer: true,
      maxPayload: config.limits.maxPayloadBytes,
      // Frames are small JSON; compression costs more CPU than it saves on loopback. Also relied on by
      // link.send, which writes text frames under ws (textFrame): a compressing sender would queue its own.
      perMessageDeflate: false,
      handleProtocols: (offered) => selectProtocol(offered),
    }));
  let closing = false;

  const refuse = (socket: Duplex, status: 400 | 401 | 403 | 503, reason: string, request: IncomingMessage) => {
    const text = { 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 503: "Service Unavailable" }[status];
    const body = JSON.stringify({ error: reason });
    const retry = status === 503 ? "Retry-After: 5\r\n" : "";
    socket.end(
      `HTTP/1.1 ${status} ${text}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${retry}Connection: close\r\n\r\n${body}`,
    );
    log.info(`refused upgrade from ${request.socket.remoteAddress}: ${reason}`);
  };

  let ownOrigins: string[] | undefined;
  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on("error", () => socket.destroy());
    if (!wsIfLoaded()) {
      // ws is not loaded yet (a client command's own server, ws-load.ts): the upgrade waits for it. What the
      // client sends meanwhile stays in the socket's buffer: the HTTP server leaves an upgraded socket unread
      // until ws listens for its data. A server others connect to loads ws before it listens (server.ts).
      loadWs().then(
        () => (closing || socket.destroyed ? socket.destroy() : upgrade(request, socket, head)),
        (error: unknown) => {
          log.error("could not load the WebSocket library (ws)", error);
          socket.destroy();
        },
      );
      return;
    }
    upgrade(request, socket, head);
  };
  const upgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    ownOrigins ??= ownOriginsFor(config.server.host, (http.address() as AddressInfo).port);
    const verdict = checkUpgrade(request, { token: config.server.token, allowOrigins: config.server.allowOrigins, ownOrigins });
    if (!verdict.ok) return refuse(socket, verdict.status, verdict.reason, request);
    const address = request.socket.remoteAddress ?? "unknown";
    if (acceptor.count() >= config.limits.maxConnections) {
      return refuse(socket, 503, `the server has its maximum of ${config.limits.maxConnections} connections (--max-connections)`, request);
    }
    if ((perAddress.get(address) ?? 0) >= config.limits.maxConnectionsPerAddress) {
      return refuse(
        socket,
        503,
        `${address} has its maximum of ${config.limits.maxConnectionsPerAddress} connections (--max-connections-per-address)`,
        request,
      );
    }
    server(wsIfLoaded()!).handleUpgrade(request, socket, head, (ws) => accept(ws, socket, address));
  };
  http.on("upgrade", onUpgrade);

  const accept = (socket: WebSocket, raw: Duplex, address: string) => {
    sockets.add(socket);
    alive.add(socket);
    perAddress.set(address, (perAddress.get(address) ?? 0) + 1);
    const id = newId("k");
    const link: Link = {
      remoteAddress: address,
      send: socketSender(socket, raw, {
        maxBufferedBytes: config.limits.maxBufferedBytes,
        onSlowConsumer: () => {
          log.warn(`connection ${id} is not reading (send backlog over ${config.limits.maxBufferedBytes} bytes); dropping it`);
          onSlowConsumer();
        },
      }),
      close: (code, reason) => socket.close(code, reason),
      pause: () => socket.pause(),
      resume: () => socket.resume(),
    };
    const s = acceptor.open(link, id);
    log.debug(`connection ${id} opened from ${address}`);

    socket.on("error", (error) => log.debug(`socket error on ${id}: ${error.message}`));
    socket.on("pong", () => alive.add(socket));
    socket.on("message", (data) => s.receive(frameBytes(data)));
    socket.on("close", () => {
      sockets.delete(socket);
      alive.delete(socket);
      const left = (perAddress.get(address) ?? 1) - 1;
      if (left > 0) perAddress.set(address, left);
      else perAddress.delete(address);
      s.closed();
      log.debug(`connection ${id} closed`);
    });
  };

  return {
    close: async () => {
      closing = true;
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
      if (wss) await new Promise<void>((resolve) => wss!.close(() => resolve()));
    },
  };
}
