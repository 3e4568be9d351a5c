/**
 * A bare client for protocol-level tests: send raw text, read what the server
 * sent — one parsed frame at a time (`next`), or all of it as the exact
 * strings received (`frames`, to compare bytes across subscribers). Over a
 * real WebSocket (`openRaw`) or over an in-memory link (`openRawInMemory`,
 * for tests that need raw frames but not the wire). Plus an upgrade attempt
 * that reports the HTTP status instead of throwing.
 */
import type { IncomingHttpHeaders } from "node:http";
import { WebSocket, type ClientOptions } from "ws";
import { afterAll, beforeAll } from "vitest";
import type { ConfigOverrides } from "./test-config.js";
import type { RunningServer } from "../../src/server.js";
import { linkedPair, type InMemoryClientSocket, type InMemorySocketPair } from "../../src/transport/in-memory-link.js";
import { startTestServer, type TestServer } from "./test-server.js";

export interface RawSocket<S = WebSocket> {
  /** What carries the frames: ws's WebSocket, or the client end of an in-memory link. */
  socket: S;
  /** Every text frame received, as received, in order (a test may clear it). */
  readonly frames: string[];
  send(text: string): void;
  /** The next frame not yet read by `next` (parsed), waiting up to `timeoutMs`. */
  next(timeoutMs?: number): Promise<unknown>;
  /** Resolves to true if no frame arrives for `next` within `ms`. */
  silentFor(ms: number): Promise<boolean>;
  /** Send a request and resolve with the parsed response plus the frames that arrived before it. */
  request(method: string, params?: unknown): Promise<{ response: any; before: string[] }>;
  /** Frames that are notifications (have a `method`), parsed. */
  notifications(): { method: string; params: any }[];
  /** Wait until `count` frames are in `frames`. */
  waitForFrames(count: number, timeoutMs?: number): Promise<void>;
  /** Forget every frame received so far: `frames` empties and `next` waits for a new one. */
  clear(): void;
  closed: Promise<{ code: number; reason: string }>;
  close(): void;
}

let nextId = 1;

/** The reading side of a raw socket; `received` is fed every text frame. */
function rawSocket<S>(
  socket: S,
  transport: { send(text: string): void; close(): void; closed: RawSocket["closed"] },
): { raw: RawSocket<S>; received(text: string): void } {
  const frames: string[] = [];
  const unread: string[] = [];
  let readers: ((text: string) => void)[] = [];
  let listeners: (() => void)[] = [];

  const waitUntil = (check: () => boolean, what: string, timeoutMs: number) =>
    new Promise<void>((resolve, reject) => {
      if (check()) return resolve();
      const listener = () => {
        if (!check()) return;
        clearTimeout(timer);
        listeners = listeners.filter((l) => l !== listener);
        resolve();
      };
      const timer = setTimeout(() => {
        listeners = listeners.filter((l) => l !== listener);
        reject(new Error(`${what} did not arrive within ${timeoutMs} ms`));
      }, timeoutMs);
      listeners.push(listener);
    });

  const raw: RawSocket<S> = {
    socket,
    frames,
    closed: transport.closed,
    send: (text) => transport.send(text),
    close: () => transport.close(),
    next(timeoutMs = 2000) {
      if (unread.length) return Promise.resolve(JSON.parse(unread.shift()!));
      return new Promise((resolve, reject) => {
        const reader = (text: string) => {
          clearTimeout(timer);
          resolve(JSON.parse(text));
        };
        const timer = setTimeout(() => {
          readers = readers.filter((r) => r !== reader);
          reject(new Error("no frame within " + timeoutMs + " ms"));
        }, timeoutMs);
        readers.push(reader);
      });
    },
    silentFor(ms) {
      if (unread.length) return Promise.resolve(false);
      return new Promise((resolve) => {
        const reader = (text: string) => {
          clearTimeout(timer);
          unread.unshift(text);
          resolve(false);
        };
        const timer = setTimeout(() => {
          readers = readers.filter((r) => r !== reader);
          resolve(true);
        }, ms);
        readers.push(reader);
      });
    },
    async request(method, params = {}) {
      const id = `raw-${nextId++}`;
      const start = frames.length;
      transport.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
      let index = -1;
      await waitUntil(
        () => {
          for (let i = start; i < frames.length; i++) {
            if ((JSON.parse(frames[i]!) as { id?: unknown }).id === id) {
              index = i;
              return true;
            }
          }
          return false;
        },
        `response to ${method}`,
        3000,
      );
      return { response: JSON.parse(frames[index]!), before: frames.slice(start, index) };
    },
    notifications() {
      return frames.map((f) => JSON.parse(f)).filter((m) => typeof m.method === "string");
    },
    waitForFrames(count, timeoutMs = 3000) {
      return waitUntil(() => frames.length >= count, `${count} frames`, timeoutMs);
    },
    clear() {
      frames.length = 0;
      unread.length = 0;
    },
  };

  const received = (text: string) => {
    frames.push(text);
    const reader = readers.shift();
    if (reader) reader(text);
    else unread.push(text);
    for (const l of listeners) l();
  };
  return { raw, received };
}

/** A raw socket over a real WebSocket; rejects with the HTTP status when the upgrade is refused. */
export async function openRaw(url: string, options: ClientOptions = {}, protocols?: string[]): Promise<RawSocket> {
  const socket = new WebSocket(url, protocols, options);
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    socket.on("close", (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  const { raw, received } = rawSocket(socket, { send: (text) => socket.send(text), close: () => socket.close(), closed });
  socket.on("message", (data) => received(data.toString()));
  await new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("error", reject);
    socket.once("unexpected-response", (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
  });
  socket.on("error", () => {});
  return raw;
}

/** A raw socket over an in-memory link to `server` (frames JSON round-tripped, delivered asynchronously). */
export async function openRawInMemory(server: RunningServer, links: InMemorySocketPair[] = []): Promise<RawSocket<InMemoryClientSocket>> {
  const pair = linkedPair(server);
  links.push(pair);
  const { client } = pair;
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    client.addEventListener("close", (event: { code: number; reason: string }) => resolve({ code: event.code, reason: event.reason })),
  );
  const { raw, received } = rawSocket(client, { send: (text) => client.send(text), close: () => client.close(), closed });
  client.addEventListener("message", (event: { data: string }) => received(event.data));
  await new Promise<void>((resolve, reject) => {
    client.addEventListener("open", () => resolve());
    void closed.then(({ code }) => reject(new Error(`closed before open (${code})`)));
  });
  return raw;
}

/**
 * Complete initialize on an open raw socket: send it (with `params` over the
 * protocol version), consume its answer and the `connected` notification, and
 * start both `frames` and `next` afresh.
 */
export async function initialize<S>(raw: RawSocket<S>, params: Record<string, unknown> = {}): Promise<RawSocket<S>> {
  const init = await raw.request("initialize", { protocolVersion: "1.0", ...params });
  if (init.response.error) throw new Error(`initialize failed: ${JSON.stringify(init.response.error)}`);
  while (!raw.notifications().some((n) => n.method === "connected")) await raw.waitForFrames(raw.frames.length + 1);
  raw.clear();
  return raw;
}

/** Open a raw WebSocket and complete initialize on it. */
export async function openInitialized(url: string, options: ClientOptions = {}, params: Record<string, unknown> = {}): Promise<RawSocket> {
  return initialize(await openRaw(url, options), params);
}

export interface UpgradeOutcome {
  /** 101 when the WebSocket opened, else the HTTP status of the refusal. */
  status: number;
  /** Subprotocol the server answered ("" for none). */
  protocol: string;
  /** Response headers of a refusal. */
  headers?: IncomingHttpHeaders;
  /** Body of a refusal. */
  body?: string;
}

/** Try a WebSocket upgrade; an opened socket is closed again at once. */
export function attemptUpgrade(url: string, options: ClientOptions = {}, protocols?: string[]): Promise<UpgradeOutcome> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, protocols, options);
    socket.on("unexpected-response", (request, response) => {
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (body += chunk));
      response.on("end", () => {
        request.destroy();
        resolve({ status: response.statusCode ?? 0, protocol: "", headers: response.headers, body });
      });
      response.on("error", reject);
    });
    socket.on("open", () => {
      const protocol = socket.protocol;
      socket.close();
      resolve({ status: 101, protocol });
    });
    socket.on("error", (error) => reject(error));
  });
}

/**
 * A server and one initialized raw socket for a whole test file (started
 * before the first test, closed after the last), with `roundTrip`: send a
 * frame, get the next frame back.
 */
export function useRawServer(config: ConfigOverrides = {}): {
  readonly server: TestServer;
  readonly raw: RawSocket;
  roundTrip(frame: string, timeoutMs?: number): Promise<any>;
} {
  let server: TestServer | undefined;
  let raw: RawSocket | undefined;
  beforeAll(async () => {
    server = await startTestServer(config);
    raw = await openInitialized(server.url);
  });
  afterAll(async () => {
    raw?.close();
    await server?.close();
  });
  return {
    get server() {
      return server!;
    },
    get raw() {
      return raw!;
    },
    async roundTrip(frame, timeoutMs) {
      raw!.send(frame);
      return raw!.next(timeoutMs);
    },
  };
}
