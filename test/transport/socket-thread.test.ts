/**
 * server.socketThread: the sockets and the HTTP routes live in a thread of
 * their own (src/transport/socket-thread*.ts). The behaviour smoke set runs
 * over it in both-links.test.ts; this file holds what the thread must keep
 * of the main thread's socket layer — the caps (in-memory links counted),
 * the token, the routes, the frame size limit, the initialize deadline, the
 * heartbeat, the send backlog bound — and what is its own: frames to many
 * subscribers arrive whole and in order, a close leaves after the frames
 * sent before it, the port is the thread's, a port in use fails the start,
 * and closing the server ends the thread.
 */
import { request } from "node:http";
import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { eventually } from "../harness/eventually.js";
import { attemptUpgrade, initialize, openInitialized, openRaw, type RawSocket } from "../harness/raw-socket.js";
import type { ConfigOverrides } from "../harness/test-config.js";
import { useServerPerTest, type TestServer } from "../harness/test-server.js";

const perTest = useServerPerTest();
const sockets = perTest.sockets;

const TOKEN = "socket-thread-token-0123456789";

function start(config: ConfigOverrides = {}): Promise<TestServer> {
  return perTest.start({ ...config, server: { ...config.server, socketThread: true } });
}

function get(port: number, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string; type?: string }> {
  return new Promise((resolve, reject) => {
    request({ host: "127.0.0.1", port, path, headers }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body, type: res.headers["content-type"] }));
    })
      .on("error", reject)
      .end();
  });
}

const tcpServers = () => process.getActiveResourcesInfo().filter((kind) => kind === "TCPServerWrap").length;

describe("the socket thread", () => {
  it("listens in its own thread: the main thread holds no listening socket, and the port answers", async () => {
    const before = tcpServers();
    const server = await start();
    expect(tcpServers()).toBe(before);
    const client = await server.connect();
    expect((await client.server.status()).connections).toBe(1);
    expect((await get(server.server.port, "/healthz")).status).toBe(200);
  });

  it("delivers every frame to every subscriber, whole and in order, and the same bytes to each", async () => {
    const server = await start();
    const writer = await server.connect();
    const { id } = await writer.conversation.create({ title: "fan-out" });
    const watchers: RawSocket[] = [];
    for (let i = 0; i < 4; i++) {
      const raw = await openInitialized(server.url);
      sockets.push(raw);
      expect((await raw.request("conversation.subscribe", { conversationId: id })).response.result).toBeDefined();
      raw.clear();
      watchers.push(raw);
    }
    // Appends sent together: their events go out in the same tasks, batched across the thread.
    const contents = Array.from({ length: 40 }, (_, i) => `message ${i} ${"✓".repeat(i * 50)}`);
    await Promise.all(contents.map((content) => writer.message.append({ conversationId: id, role: "user", content })));
    for (const raw of watchers) await raw.waitForFrames(40);
    const seen = watchers.map((raw) => raw.frames.slice());
    for (const frames of seen.slice(1)) expect(frames).toEqual(seen[0]);
    const added = seen[0]!.map((frame) => JSON.parse(frame) as { method: string; params: { seq: number; record: { content: string } } });
    expect(added.map((n) => n.method)).toEqual(Array(40).fill("message_added"));
    const seqs = added.map((n) => n.params.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(added.map((n) => n.params.record.content))).toEqual(new Set(contents));
  });

  it("refuses an upgrade over --max-connections with 503, counting in-memory links, and takes one again when a link closes", async () => {
    const server = await start({ limits: { maxConnections: 2, maxConnectionsPerAddress: 100 } });
    sockets.push(await openInitialized(server.url));
    const inMemory = await server.connectInMemory();
    const refused = await attemptUpgrade(server.url);
    expect(refused.status).toBe(503);
    expect(JSON.parse(refused.body!).error).toContain("--max-connections");
    await inMemory.close();
    await eventually(async () => (await attemptUpgrade(server.url)).status === 101, 5000);
  });

  it("refuses an upgrade over --max-connections-per-address with 503", async () => {
    const server = await start({ limits: { maxConnections: 100, maxConnectionsPerAddress: 2 } });
    for (let i = 0; i < 2; i++) sockets.push(await openInitialized(server.url));
    const refused = await attemptUpgrade(server.url);
    expect(refused.status).toBe(503);
    expect(JSON.parse(refused.body!).error).toMatch(/127\.0\.0\.1 has its maximum of 2 connections \(--max-connections-per-address\)/);
  });

  it("checks the token on the upgrade and on /metrics, which the main thread answers", async () => {
    const server = await start({ server: { token: TOKEN } });
    expect((await attemptUpgrade(server.url)).status).toBe(401);
    expect((await attemptUpgrade(server.url, { headers: { Authorization: `Bearer ${TOKEN}` } })).status).toBe(101);
    const { port } = server.server;
    expect((await get(port, "/metrics")).status).toBe(401);
    const metrics = await get(port, "/metrics", { Authorization: `Bearer ${TOKEN}` });
    expect(metrics.status).toBe(200);
    expect(metrics.body).toContain("agentwire_info");
    expect(JSON.parse((await get(port, "/healthz")).body)).toMatchObject({ ok: true });
    expect(JSON.parse((await get(port, "/openrpc.json")).body).openrpc).toBeDefined();
    expect((await get(port, "/nowhere")).status).toBe(404);
  });

  it("closes a socket that sends a frame over --max-payload with 1009, and serves the others", async () => {
    const server = await start({ limits: { maxPayloadBytes: 4096 } });
    const big = await openInitialized(server.url);
    const other = await openInitialized(server.url);
    sockets.push(big, other);
    big.send(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "server.status", params: { pad: "x".repeat(8192) } }));
    expect((await big.closed).code).toBe(1009);
    // The thread tells the main thread of the close after the peer saw it: counted out soon after.
    await eventually(async () => (await other.request("server.status")).response.result.connections === 1, 5000);
  });

  it("closes a connection that sent no initialize with 1008 after its reply, and keeps one that did", async () => {
    const server = await start({ limits: { initializeTimeoutMs: 300 } });
    const silent = await openRaw(server.url);
    const initialized = await openInitialized(server.url);
    sockets.push(silent, initialized);
    // A request before initialize is answered (an error), and that answer leaves before the close.
    silent.send(JSON.stringify({ jsonrpc: "2.0", id: 7, method: "server.status" }));
    expect(((await silent.next()) as { id: number; error: { code: number } }).error.code).toBe(-32001);
    const closed = await silent.closed;
    expect(closed.code).toBe(1008);
    expect(closed.reason).toContain("initialize");
    await eventually(async () => (await initialized.request("server.status")).response.result.connections === 1, 5000);
  });

  it("terminates a peer that stops answering pings", async () => {
    const server = await start({ server: { heartbeatMs: 100 } });
    const silent = await openRaw(server.url, { autoPong: false });
    const lively = await server.connect();
    expect((await silent.closed).code).toBe(1006);
    await new Promise((r) => setTimeout(r, 300));
    expect((await lively.server.status()).connections).toBe(1);
  });

  it("drops a subscriber that stops reading once its backlog passes maxBufferedBytes, and counts it", async () => {
    const server = await start({ limits: { maxBufferedBytes: 256 * 1024 } });
    const writer = await server.connect();
    const { id } = await writer.conversation.create({ title: "firehose" });
    const stalled = await openInitialized(server.url);
    sockets.push(stalled);
    await stalled.request("conversation.subscribe", { conversationId: id });
    (stalled.socket as unknown as { _socket: { pause(): void } })._socket.pause();
    const big = "x".repeat(64 * 1024);
    await eventually(async () => {
      await Promise.all(Array.from({ length: 8 }, () => writer.message.append({ conversationId: id, role: "user", content: big })));
      return (await writer.server.status()).connections === 1;
    }, 20_000);
    expect((await writer.server.status()).totals.slowConsumersDropped).toBe(1);
  });

  it("fails the start with the listen error when the port is taken", async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      await expect(start({ server: { port } })).rejects.toMatchObject({ code: "EADDRINUSE" });
    } finally {
      taken.close();
    }
  });

  it("closes its sockets with 1001 when the server stops, frees the port and ends the thread", async () => {
    const server = await start();
    const raw = await openInitialized(server.url);
    const { port } = server.server;
    await server.server.close();
    expect((await raw.closed).code).toBe(1001);
    await expect(get(port, "/healthz")).rejects.toMatchObject({ code: "ECONNREFUSED" });
    // The thread is gone: no worker keeps the process alive.
    expect(process.getActiveResourcesInfo().filter((kind) => kind === "MessagePort" || kind === "Worker")).toEqual([]);
  });
});

describe("initialize over the socket thread", () => {
  it("answers the raw initialize exchange", async () => {
    const server = await start();
    const raw = await initialize(await openRaw(server.url));
    sockets.push(raw);
    expect((await raw.request("server.status")).response.result.connections).toBe(1);
  });
});
