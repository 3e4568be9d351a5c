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
import { WebSocket, WebSocketServer, type RawData } from "ws";
import type { LimitsConfig, ServerSettings } from "../../protocol/config.js";
import { newId } from "../ids.js";
import type { Logger } from "../logging/logger.js";
import type { Connection } from "../sessions/connection.js";
import type { Link } from "./link.js";
import { openSession, type SessionOptions } from "./link-session.js";
import { checkUpgrade, ownOriginsFor, selectProtocol } from "./upgrade-guard.js";

/** What the socket layer reads of the configuration: who may connect, and the bounds of a socket. */
export interface WebSocketSettings {
  server: Pick<ServerSettings, "host" | "token" | "allowOrigins" | "heartbeatMs">;
  limits: Pick<LimitsConfig, "maxPayloadBytes" | "maxBufferedBytes" | "maxConnections" | "maxConnectionsPerAddress">;
}

export interface WebSocketTransport {
  readonly connections: Set<Connection>;
  close(): Promise<void>;
}

export function attachWebSocket(
  http: HttpServer,
  config: WebSocketSettings,
  log: Logger,
  session: Omit<SessionOptions, "log">,
  /** Every connection of every transport, kept by the server. */
  connections: Set<Connection>,
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
            if (socket.readyState !== WebSocket.OPEN) continue; // ping() throws on a closing socket
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

  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: config.limits.maxPayloadBytes,
    // Frames are small JSON; compression costs more CPU than it saves on loopback. Also relied on by
    // link.send, which writes text frames under ws (textFrame): a compressing sender would queue its own.
    perMessageDeflate: false,
    handleProtocols: (offered) => selectProtocol(offered),
  });

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
    ownOrigins ??= ownOriginsFor(config.server.host, (http.address() as AddressInfo).port);
    const verdict = checkUpgrade(request, { token: config.server.token, allowOrigins: config.server.allowOrigins, ownOrigins });
    if (!verdict.ok) return refuse(socket, verdict.status, verdict.reason, request);
    const address = request.socket.remoteAddress ?? "unknown";
    if (connections.size >= config.limits.maxConnections) {
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
    wss.handleUpgrade(request, socket, head, (ws) => accept(ws, socket, address));
  };
  http.on("upgrade", onUpgrade);

  const accept = (socket: WebSocket, raw: Duplex, address: string) => {
    sockets.add(socket);
    // A turn's first frame to this connection is written at once: a token's
    // frame leaves while the token is handled, not after the rest of that
    // turn's work. What else the turn sends it (a replay, a tool's output with
    // its status events, a client watching many conversations) leaves in one
    // more write: the TCP socket under ws is corked at the second frame and
    // uncorked once the current task is done, before any I/O is polled, so no
    // frame waits for another event. Frames are written whole, so the bytes
    // are the same; only the number of syscalls changes.
    let backlog = 0;
    const writes: TurnWrites = { raw, sent: false, corked: false };
    alive.add(socket);
    perAddress.set(address, (perAddress.get(address) ?? 0) + 1);
    const id = newId("k");
    const link: Link = {
      remoteAddress: address,
      send: (frame) => {
        if (socket.readyState !== WebSocket.OPEN) return;
        // The backlog is what earlier turns left unsent; this turn's frames are only corked, not stuck.
        if (!writes.sent) backlog = socket.bufferedAmount;
        if (backlog > config.limits.maxBufferedBytes) {
          // A client that stops reading must not grow our memory without bound;
          // it can reconnect and resume with afterSeq. Terminated, not closed: a
          // peer that reads nothing would never read a close frame either.
          log.warn(`connection ${id} is not reading (send backlog over ${config.limits.maxBufferedBytes} bytes); dropping it`);
          onSlowConsumer();
          socket.terminate();
          return;
        }
        if (!writes.sent) sentThisTurn(writes);
        else if (!writes.corked) {
          writes.corked = true;
          raw.cork();
        }
        // The frame goes under ws, as the bytes ws.send would write (see textFrame). ws writes to the
        // same socket only for its own control frames (ping, pong, close), and straight away: with
        // perMessageDeflate off its sender never queues, so frames cannot be reordered.
        raw.write(textFrame(frame));
      },
      close: (code, reason) => socket.close(code, reason),
      pause: () => socket.pause(),
      resume: () => socket.resume(),
    };
    const s = openSession(link, id, { ...session, log });
    connections.add(s.connection);
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
      connections.delete(s.connection);
      s.closed();
      log.debug(`connection ${id} closed`);
    });
  };

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

/** Frames up to this size are kept for the next connection that sends the same one. */
const FRAME_CACHE_MAX_BYTES = 16 * 1024;
let lastText = "";
let lastFrame: Buffer | null = null;

/**
 * The WebSocket text frame of `text`, as a server sends it (RFC 6455 §5.2:
 * FIN and opcode 1, the payload length, no mask): the bytes ws.send writes.
 * An event goes to every subscriber as the same string, one connection
 * after the other, so the last frame is kept: the text is encoded once per
 * event, not once per subscriber, and each connection gets one write of
 * one buffer instead of ws's header and payload writes with their options.
 */
function textFrame(text: string): Buffer {
  if (lastFrame !== null && text === lastText) return lastFrame;
  const length = Buffer.byteLength(text);
  const header = length < 126 ? 2 : length < 65536 ? 4 : 10;
  const frame = Buffer.allocUnsafe(header + length);
  frame[0] = 0x81;
  if (header === 2) {
    frame[1] = length;
  } else if (header === 4) {
    frame[1] = 126;
    frame.writeUInt16BE(length, 2);
  } else {
    frame[1] = 127;
    frame.writeUInt32BE(Math.floor(length / 2 ** 32), 2);
    frame.writeUInt32BE(length >>> 0, 6);
  }
  frame.write(text, header, "utf8");
  if (length <= FRAME_CACHE_MAX_BYTES) {
    lastText = text;
    lastFrame = frame;
  } else {
    lastFrame = null;
  }
  return frame;
}

/** A connection's TCP socket: whether this turn of the event loop wrote to it, and corked it. */
interface TurnWrites {
  readonly raw: Duplex;
  sent: boolean;
  corked: boolean;
}

/**
 * Sockets written to this turn of the event loop. One nextTick ends the
 * turn for them all (uncorks those that were corked): a token sent to
 * hundreds of connections in one turn costs one tick, not a tick (and its
 * closure) per connection.
 */
let writtenNow: TurnWrites[] = [];

function sentThisTurn(writes: TurnWrites): void {
  writes.sent = true;
  if (writtenNow.push(writes) === 1) process.nextTick(endTurn);
}

function endTurn(): void {
  const written = writtenNow;
  writtenNow = [];
  for (let i = 0; i < written.length; i++) {
    const writes = written[i]!;
    writes.sent = false;
    if (!writes.corked) continue;
    writes.corked = false;
    writes.raw.uncork();
  }
}

/**
 * The frame's bytes, decoded later by the dispatcher (only when its shape is
 * acceptable). Text frames are the protocol; a binary frame is read as UTF-8
 * JSON all the same.
 */
function frameBytes(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}
