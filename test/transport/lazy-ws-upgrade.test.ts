/**
 * A server that did not load ws at start (a client command's own server,
 * src/transport/ws-load.ts) loads it at its first upgrade: the upgrade waits
 * for it and then completes, and one whose server closes meanwhile is
 * dropped, not completed on a server that is gone. The modules are loaded
 * afresh here, so ws is not loaded yet whatever ran before in this worker.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, expect, it, vi } from "vitest";
import { WebSocket } from "ws";
import { createLogger } from "../../src/logging/logger.js";

const settings = {
  server: { host: "127.0.0.1", token: undefined, allowOrigins: [], heartbeatMs: 0 },
  limits: { maxPayloadBytes: 1 << 20, maxBufferedBytes: 1 << 20, maxConnections: 10, maxConnectionsPerAddress: 10 },
};

let http: Server | undefined;
afterEach(async () => {
  http?.closeAllConnections();
  await new Promise((resolve) => http?.close(resolve));
  http = undefined;
});

/** websocket-server.ts and ws-load.ts as a process that has not loaded ws has them. */
async function freshTransport() {
  vi.resetModules();
  const [{ attachWebSocket }, { wsIfLoaded }] = await Promise.all([import("../../src/transport/websocket-server.js"), import("../../src/transport/ws-load.js")]);
  http = createServer();
  await new Promise<void>((resolve) => http!.listen(0, "127.0.0.1", resolve));
  const opened: string[] = [];
  const transport = attachWebSocket(http, settings, createLogger("silent"), {
    count: () => opened.length,
    open: (link, id) => {
      opened.push(id);
      link.send('{"jsonrpc":"2.0","method":"hello"}');
      return { receive: () => {}, closed: () => {} };
    },
  });
  return { transport, opened, wsIfLoaded, url: `ws://127.0.0.1:${(http.address() as AddressInfo).port}` };
}

it("loads ws at the first upgrade and completes it", async () => {
  const { transport, opened, wsIfLoaded, url } = await freshTransport();
  expect(wsIfLoaded()).toBeUndefined();
  const client = new WebSocket(url);
  const first = await new Promise<string>((resolve, reject) => {
    client.once("message", (data) => resolve(String(data)));
    client.once("error", reject);
  });
  expect(first).toBe('{"jsonrpc":"2.0","method":"hello"}');
  expect(wsIfLoaded()).toBeDefined();
  expect(opened).toHaveLength(1);
  client.close();
  await transport.close();
});

it("drops an upgrade still waiting for ws when the server closes", async () => {
  const { transport, opened, url } = await freshTransport();
  // Closed as the upgrade arrives, while ws is still loading.
  http!.once("upgrade", () => void transport.close());
  const client = new WebSocket(url);
  const outcome = await new Promise<string>((resolve) => {
    client.once("open", () => resolve("opened"));
    client.once("error", (error) => resolve(`error: ${error.message}`));
  });
  expect(outcome).toMatch(/^error: /);
  expect(opened).toEqual([]);
});
