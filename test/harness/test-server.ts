/**
 * Starts a real agentwire server in-process on 127.0.0.1:0 with a fresh
 * temp data dir, and connects real WebSocket clients to it.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import { WebSocket } from "ws";
import { AgentwireClient, type AgentwireClientOptions } from "../../clients/typescript/index.js";
import { type ConfigOverrides, testConfig } from "./test-config.js";
import type { ServerConfig } from "../../src/config/server-config.js";
import { createLogger } from "../../src/logging/logger.js";
import { startServer, type RunningServer, type ServerParts } from "../../src/server.js";
import { inMemoryWebSocket, type InMemoryClientSocket, type InMemorySocketPair } from "../../src/transport/in-memory-link.js";
import { openRawInMemory, type RawSocket } from "./raw-socket.js";

export interface TestServer {
  server: RunningServer;
  url: string;
  dataDir: string;
  config: ServerConfig;
  /** A client over a real WebSocket on 127.0.0.1. */
  connect(options?: AgentwireClientOptions): Promise<AgentwireClient>;
  /** A client over an in-memory link (JSON round-tripped, delivered asynchronously): for behaviour tests. */
  connectInMemory(options?: AgentwireClientOptions): Promise<AgentwireClient>;
  /** A raw client (frames as text) over an in-memory link: for behaviour tests that need raw frames. */
  openRawInMemory(): Promise<RawSocket<InMemoryClientSocket>>;
  /** The in-memory links opened so far (e.g. to drop one from the server side). */
  readonly links: InMemorySocketPair[];
  /** Stop the server (the data dir stays, for restart tests). */
  stop(): Promise<void>;
  /** Stop and remove the data dir. */
  close(): Promise<void>;
}

export async function startTestServer(
  config: ConfigOverrides = {},
  parts: ServerParts = {},
): Promise<TestServer> {
  const givenDataDir = config.server?.dataDir;
  const dataDir = givenDataDir ?? (await mkdtemp(join(tmpdir(), "agentwire-test-")));
  const full = testConfig({ server: { port: 0, logLevel: "silent", heartbeatMs: 0 } }, config, { server: { dataDir } });
  let server: RunningServer;
  try {
    server = await startServer(full, { log: createLogger(process.env.AGENTWIRE_TEST_LOG ? "debug" : "silent"), ...parts });
  } catch (error) {
    if (!givenDataDir) await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
  const clients: AgentwireClient[] = [];
  const links: InMemorySocketPair[] = [];
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    // The server closes its sockets, not links it was handed; raw in-memory clients are closed here.
    for (const link of links) link.client.close();
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
    openRawInMemory: () => openRawInMemory(server, links),
    stop,
    async close() {
      await stop();
      if (!givenDataDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * For a file whose tests each start a server of their own: `start` starts one
 * (as startTestServer), and after each test the raw sockets pushed to
 * `sockets` are closed, then the server that test started.
 */
export function useServerPerTest(): { start(config?: ConfigOverrides): Promise<TestServer>; readonly sockets: RawSocket[] } {
  let current: TestServer | undefined;
  const sockets: RawSocket[] = [];
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.close();
    await current?.close();
    current = undefined;
  });
  return {
    sockets,
    async start(config = {}) {
      current = await startTestServer(config);
      return current;
    },
  };
}

/** Raw sockets live in raw-socket.ts; re-exported for the tests that import them from here. */
export { openInitialized, openRaw, type RawSocket } from "./raw-socket.js";
