/**
 * An in-memory linked pair, as MCP's InMemoryTransport.createLinkedPair: the
 * client end is a WebSocketLike the generated client drives, the server end a
 * Link the server serves like any socket. For an embedder that runs the
 * server and its client in one process (`connectInMemory` in src/embed.ts,
 * the public entry), and for the behaviour tests.
 *
 * Delivery is asynchronous (one microtask later) and every frame is
 * round-tripped through JSON.parse / JSON.stringify, so nothing that could
 * not cross a real socket slips through: a client that works over this link
 * works over a WebSocket.
 */
import type { WebSocketConstructor, WebSocketLike } from "../../clients/typescript/index.js";
import type { Link } from "./link.js";
import type { LinkSession } from "./link-session.js";

const CONNECTING = 0;
const OPEN = 1;
const CLOSING = 2;
const CLOSED = 3;

type Listener = (event: any) => void;

/** The address an in-memory client is given: no socket dials it (the link's WebSocket stand-in takes any). */
export const IN_MEMORY_URL = "memory://agentwire";

/** What serves the server end: a running server (`startServer`'s `acceptLink`). */
export interface LinkAcceptor {
  acceptLink(link: Link): Pick<LinkSession, "receive" | "closed">;
}

/** What crosses the link: the frame as JSON would carry it (a frame that is not JSON passes as it is). */
function roundTrip(frame: string): string {
  try {
    return JSON.stringify(JSON.parse(frame));
  } catch {
    return frame;
  }
}

export class InMemoryClientSocket implements WebSocketLike {
  readyState = CONNECTING;
  binaryType = "arraybuffer";
  private readonly listeners = new Map<string, Listener[]>();
  /** Set once the server end is attached. */
  deliverToServer: (frame: string) => void = () => {};
  closeServer: () => void = () => {};

  addEventListener(type: string, listener: Listener): void {
    const list = this.listeners.get(type) ?? [];
    list.push(listener);
    this.listeners.set(type, list);
  }

  emit(type: string, event: unknown): void {
    for (const listener of this.listeners.get(type) ?? []) listener(event);
  }

  send(data: string): void {
    if (this.readyState !== OPEN) throw new Error("in-memory socket is not open");
    const frame = roundTrip(String(data));
    queueMicrotask(() => this.deliverToServer(frame));
  }

  close(code = 1000, reason = ""): void {
    if (this.readyState === CLOSED || this.readyState === CLOSING) return;
    this.readyState = CLOSING;
    queueMicrotask(() => {
      this.closeServer();
      this.finish(code, reason);
    });
  }

  /** Ends the client side (from either end). */
  finish(code: number, reason: string): void {
    if (this.readyState === CLOSED) return;
    this.readyState = CLOSED;
    this.emit("close", { code, reason });
  }
}

/**
 * A WebSocket constructor for `AgentwireClient.connect(url, { WebSocket })`
 * whose sockets are in-memory links to `server` (the url is ignored).
 * `sockets` collects the client ends, e.g. to drop one from the server side.
 */
export function inMemoryWebSocket(server: LinkAcceptor, sockets: InMemorySocketPair[] = []): WebSocketConstructor {
  return class {
    constructor() {
      const pair = linkedPair(server);
      sockets.push(pair);
      return pair.client;
    }
  } as unknown as WebSocketConstructor;
}

export interface InMemorySocketPair {
  client: InMemoryClientSocket;
  /** Close from the server side, as a server dropping the socket would. */
  dropFromServer(code?: number, reason?: string): void;
}

export function linkedPair(server: LinkAcceptor): InMemorySocketPair {
  const client = new InMemoryClientSocket();
  let open = true;
  const link: Link = {
    remoteAddress: "in-memory",
    send(frame) {
      if (!open) return;
      const copy = roundTrip(frame);
      queueMicrotask(() => {
        if (client.readyState === OPEN) client.emit("message", { data: copy });
      });
    },
    close(code, reason) {
      if (!open) return;
      open = false;
      queueMicrotask(() => {
        session.closed();
        client.finish(code, reason);
      });
    },
  };
  const session = server.acceptLink(link);
  client.deliverToServer = (frame) => {
    if (open) session.receive(frame);
  };
  client.closeServer = () => {
    if (!open) return;
    open = false;
    session.closed();
  };
  queueMicrotask(() => {
    client.readyState = OPEN;
    client.emit("open", {});
  });
  return { client, dropFromServer: (code = 1001, reason = "dropped") => link.close(code, reason) };
}
