/**
 * Connections a client can make the server hold are bounded: in total, per
 * remote address, and in time before initialize. A refused upgrade gets a
 * clear HTTP 503 with a JSON reason; the server keeps answering others.
 */
import { request } from "node:http";
import { describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { openInitialized, openRaw, useServerPerTest } from "../harness/test-server.js";

const { start, sockets } = useServerPerTest();

/** The HTTP status and body an upgrade attempt gets when it is refused. */
function refusedUpgrade(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.on("unexpected-response", (_req, res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    ws.on("open", () => reject(new Error("the upgrade was accepted")));
    ws.on("error", () => {});
  });
}

function healthz(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    request({ host: "127.0.0.1", port, path: "/healthz" }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    })
      .on("error", reject)
      .end();
  });
}

describe("connection caps", () => {
  it("refuses the connection over --max-connections with 503 naming the flag, and takes one again when a slot frees", async () => {
    const server = await start({ limits: { maxConnections: 3, maxConnectionsPerAddress: 100 } });
    for (let i = 0; i < 3; i++) sockets.push(await openInitialized(server.url));
    const refused = await refusedUpgrade(server.url);
    expect(refused.status).toBe(503);
    expect(JSON.parse(refused.body).error).toContain("--max-connections");
    expect(await healthz(server.server.port)).toBe(200);
    sockets.pop()!.close();
    await new Promise((r) => setTimeout(r, 100));
    sockets.push(await openInitialized(server.url));
  });

  it("refuses the connection over --max-connections-per-address with 503", async () => {
    const server = await start({ limits: { maxConnections: 100, maxConnectionsPerAddress: 2 } });
    for (let i = 0; i < 2; i++) sockets.push(await openInitialized(server.url));
    const refused = await refusedUpgrade(server.url);
    expect(refused.status).toBe(503);
    expect(JSON.parse(refused.body).error).toMatch(/127\.0\.0\.1 has its maximum of 2 connections \(--max-connections-per-address\)/);
  });

  it("drops raw TCP connections beyond the cap instead of letting them hold file descriptors", async () => {
    const server = await start({ limits: { maxConnections: 2, maxConnectionsPerAddress: 100 } });
    const { port } = server.server;
    const net = await import("node:net");
    // http.maxConnections is the cap plus 64 for health checks; open past it.
    const raws = await Promise.all(
      Array.from({ length: 80 }, () => new Promise<import("node:net").Socket>((resolve) => {
        const s = net.connect(port, "127.0.0.1", () => resolve(s));
        s.on("error", () => {});
      })),
    );
    await new Promise((r) => setTimeout(r, 200));
    const closedByServer = raws.filter((s) => s.destroyed || s.readableEnded).length;
    expect(closedByServer).toBeGreaterThanOrEqual(80 - 66);
    for (const s of raws) s.destroy();
  });
});

describe("initialize deadline", () => {
  it("closes a connection that has not initialized in time with 1008, and keeps one that did", async () => {
    const server = await start({ limits: { initializeTimeoutMs: 300 } });
    const silent = await openRaw(server.url);
    const initialized = await openInitialized(server.url);
    sockets.push(silent, initialized);
    const closed = await silent.closed;
    expect(closed.code).toBe(1008);
    expect(closed.reason).toContain("initialize");
    await new Promise((r) => setTimeout(r, 100));
    initialized.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "server.status" }));
    expect(((await initialized.next()) as any).id).toBe(1);
  });
});

describe("links other than sockets", () => {
  it("count toward --max-connections like sockets, and are closed with 1001 when the server stops", async () => {
    const server = await start({ limits: { maxConnections: 2, maxConnectionsPerAddress: 100 } });
    sockets.push(await openInitialized(server.url));
    const inMemory = await server.connectInMemory();
    const closed = new Promise<{ code: number }>((resolve) => inMemory.onClose((info) => resolve(info as { code: number })));
    // Two connections now (a socket and a link): a third of either kind is refused.
    expect((await refusedUpgrade(server.url)).status).toBe(503);
    await expect(server.connectInMemory()).rejects.toThrow();
    await server.server.close(); // the server itself, before the harness closes its clients
    expect((await closed).code).toBe(1001);
  });
});
