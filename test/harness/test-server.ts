/**
 * Starts a real agentwire server in-process on 127.0.0.1:0 with a fresh
 * temp data dir, and connects real WebSocket clients to it.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WebSocket } from "ws";
import { AgentwireClient, type AgentwireClientOptions } from "../../clients/typescript/index.js";
import { defaultConfig, type ServerConfig } from "../../src/config.js";
import { createLogger } from "../../src/logging/logger.js";
import { startServer, type RunningServer, type ServerParts } from "../../src/server.js";
import { inMemoryWebSocket, type InMemorySocketPair } from "./in-memory-link.js";

export interface TestServer {
  server: RunningServer;
  url: string;
  dataDir: string;
  config: ServerConfig;
  /** A client over a real WebSocket on 127.0.0.1. */
  connect(options?: AgentwireClientOptions): Promise<AgentwireClient>;
  /** A client over an in-memory link (JSON round-tripped, delivered asynchronously): for behaviour tests. */
  connectInMemory(options?: AgentwireClientOptions): Promise<AgentwireClient>;
  /** The in-memory links opened so far (e.g. to drop one from the server side). */
  readonly links: InMemorySocketPair[];
  /** Stop the server (the data dir stays, for restart tests). */
  stop(): Promise<void>;
  /** Stop and remove the data dir. */
  close(): Promise<void>;
}

export async function startTestServer(
  config: Partial<ServerConfig> = {},
  parts: ServerParts = {},
): Promise<TestServer> {
  const dataDir = config.dataDir ?? (await mkdtemp(join(tmpdir(), "agentwire-test-")));
  const full = defaultConfig({ port: 0, logLevel: "silent", heartbeatMs: 0, ...config, dataDir });
  let server: RunningServer;
  try {
    server = await startServer(full, { log: createLogger(process.env.AGENTWIRE_TEST_LOG ? "debug" : "silent"), ...parts });
  } catch (error) {
    if (!config.dataDir) await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
  const clients: AgentwireClient[] = [];
  const links: InMemorySocketPair[] = [];
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await server.close();
  };
  return {
    server,
    url: server.url,
    dataDir,
    config: full,
    async connect(options = {}) {
      const client = await AgentwireClient.connect(server.url, { WebSocket: WebSocket as never, ...options });
      clients.push(client);
      return client;
    },
    links,
    async connectInMemory(options = {}) {
      const client = await AgentwireClient.connect("memory://agentwire", { WebSocket: inMemoryWebSocket(server, links), ...options });
      clients.push(client);
      return client;
    },
    stop,
    async close() {
      await stop();
      if (!config.dataDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** A bare socket for protocol-level tests: send raw text, read parsed frames in order. */
export interface RawSocket {
  send(text: string): void;
  /** The next frame (parsed), waiting up to `timeoutMs`. */
  next(timeoutMs?: number): Promise<unknown>;
  /** Resolves to true if no frame arrives within `ms`. */
  silentFor(ms: number): Promise<boolean>;
  closed: Promise<{ code: number; reason: string }>;
  socket: WebSocket;
  close(): void;
}

export async function openRaw(url: string, options: ConstructorParameters<typeof WebSocket>[2] = {}, protocols?: string[]): Promise<RawSocket> {
  const socket = new WebSocket(url, protocols, options);
  const queue: unknown[] = [];
  const waiters: ((v: unknown) => void)[] = [];
  socket.on("message", (data) => {
    const value = JSON.parse(data.toString());
    const w = waiters.shift();
    if (w) w(value);
    else queue.push(value);
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    socket.on("close", (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  await new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("error", reject);
    socket.once("unexpected-response", (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
  });
  socket.on("error", () => {});
  return {
    socket,
    closed,
    send: (text) => socket.send(text),
    next(timeoutMs = 2000) {
      if (queue.length) return Promise.resolve(queue.shift());
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error("no frame within " + timeoutMs + " ms")), timeoutMs);
        waiters.push((v) => {
          clearTimeout(timer);
          resolve(v);
        });
      });
    },
    async silentFor(ms) {
      if (queue.length) return false;
      return new Promise((resolve) => {
        const waiter = (v: unknown) => {
          clearTimeout(timer);
          queue.unshift(v);
          resolve(false);
        };
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(waiter), 1);
          resolve(true);
        }, ms);
        waiters.push(waiter);
      });
    },
    close: () => socket.close(),
  };
}

/** Open a raw socket and complete initialize on it. */
export async function openInitialized(url: string): Promise<RawSocket> {
  const raw = await openRaw(url);
  raw.send(JSON.stringify({ jsonrpc: "2.0", id: "init", method: "initialize", params: { protocolVersion: "1.0" } }));
  await raw.next(); // result
  await raw.next(); // connected
  return raw;
}
