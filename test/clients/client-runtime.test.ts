/**
 * The generated client against a hand-scripted ws server on 127.0.0.1:0:
 * every answer below is written by the test, so each runtime path is hit on
 * purpose.
 */
import type { IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocket, WebSocketServer } from "ws";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  AgentwireClient,
  AgentwireConnectionError,
  AgentwireRpcError,
  type AgentwireClientOptions,
  type ToolPendingNotification,
} from "../../clients/typescript/index.js";
import { PROTOCOL_VERSION } from "../../protocol/version.js";

interface Frame {
  jsonrpc: string;
  id?: number | string | null;
  method?: string;
  params?: any;
  result?: any;
  error?: { code: number; message: string; data?: unknown };
}

/** One server-side connection, read frame by frame. */
class Peer {
  readonly #frames: Frame[] = [];
  readonly #waiters: Array<(frame: Frame) => void> = [];
  constructor(
    readonly socket: WebSocket,
    readonly request: IncomingMessage,
  ) {
    socket.on("error", () => {});
    socket.on("message", (data) => {
      const frame = JSON.parse(data.toString()) as Frame;
      const waiter = this.#waiters.shift();
      if (waiter) waiter(frame);
      else this.#frames.push(frame);
    });
  }
  next(): Promise<Frame> {
    const frame = this.#frames.shift();
    return frame ? Promise.resolve(frame) : new Promise((resolve) => this.#waiters.push(resolve));
  }
  send(message: object, binary = false): void {
    this.socket.send(JSON.stringify({ jsonrpc: "2.0", ...message }), { binary });
  }
  /** Answer the initialize a connecting client sends first. */
  async acceptInitialize(): Promise<Frame> {
    const init = await this.next();
    this.send({ id: init.id, result: initializeResult });
    this.send({ method: "connected", params: { connectionId: "k_1", protocolVersion: "1.0", timestamp: "t" } });
    return init;
  }
}

const initializeResult = {
  protocolVersion: "1.0",
  serverInfo: { name: "agentwire", version: "0.1.0" },
  capabilities: { methods: [], notifications: [], maxPayloadBytes: 1 << 20 },
  connectionId: "k_1",
};

let wss: WebSocketServer;
let url: string;
let peers: Peer[];
let peerWaiters: Array<(peer: Peer) => void>;
const clients: AgentwireClient[] = [];

beforeEach(async () => {
  peers = [];
  peerWaiters = [];
  wss = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  wss.on("connection", (socket, request) => {
    const peer = new Peer(socket, request);
    const waiter = peerWaiters.shift();
    if (waiter) waiter(peer);
    else peers.push(peer);
  });
  await new Promise<void>((resolve) => wss.once("listening", () => resolve()));
  url = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/rpc`;
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  for (const socket of wss.clients) socket.terminate();
  await new Promise<void>((resolve) => wss.close(() => resolve()));
});

function nextPeer(): Promise<Peer> {
  const peer = peers.shift();
  return peer ? Promise.resolve(peer) : new Promise((resolve) => peerWaiters.push(resolve));
}

/** Connect a client and play the server's part of the handshake. */
async function connect(options: AgentwireClientOptions = {}): Promise<{ client: AgentwireClient; peer: Peer; init: Frame }> {
  const connecting = AgentwireClient.connect(url, { WebSocket, ...options });
  const peer = await nextPeer();
  const init = await peer.acceptInitialize();
  const client = await connecting;
  clients.push(client);
  return { client, peer, init };
}

/** Resolves after the client has processed every frame the peer sent before: a round trip. */
async function roundTrip(client: AgentwireClient, peer: Peer): Promise<void> {
  const pending = client.tools.list();
  const frame = await peer.next();
  peer.send({ id: frame.id, result: { tools: [] } });
  await pending;
}

describe("AgentwireClient", () => {
  it("connects: sends initialize with the protocol version, client info and token", async () => {
    const { client, peer, init } = await connect({
      token: "s3cret",
      clientInfo: { name: "test-client", version: "1" },
      capabilities: { notificationOptOut: ["generation_progress"] },
    });
    expect(init.method).toBe("initialize");
    expect(init.params).toEqual({
      protocolVersion: PROTOCOL_VERSION,
      clientInfo: { name: "test-client", version: "1" },
      capabilities: { notificationOptOut: ["generation_progress"] },
    });
    expect(new URL(peer.request.url!, "http://x").searchParams.get("token")).toBe("s3cret");
    expect(new URL(peer.request.url!, "http://x").pathname).toBe("/rpc");
    expect(client.initializeResult).toEqual(initializeResult);
    expect(client.connectionId).toBe("k_1");
    expect(client.closed).toBe(false);
  });

  it("sends typed requests and resolves with the result; params default to {}", async () => {
    const { client, peer } = await connect();
    const created = client.conversation.create({ title: "demo" });
    const frame = await peer.next();
    expect(frame).toMatchObject({ jsonrpc: "2.0", method: "conversation.create", params: { title: "demo" } });
    expect(typeof frame.id).toBe("number");
    peer.send({ id: frame.id, result: { id: "c_1", title: "demo" } });
    expect(await created).toEqual({ id: "c_1", title: "demo" });

    const status = client.server.status();
    const statusFrame = await peer.next();
    expect(statusFrame.method).toBe("server.status");
    expect(statusFrame.params).toEqual({});
    expect(statusFrame.id).not.toBe(frame.id);
    peer.send({ id: statusFrame.id, result: { version: "0.1.0" } });
    expect(await status).toEqual({ version: "0.1.0" });
  });

  it("matches answers that come out of order, and reads binary frames", async () => {
    const { client, peer } = await connect();
    const first = client.step({ conversationId: "c_1" });
    const second = client.interrupt({ conversationId: "c_1" });
    const [a, b] = [await peer.next(), await peer.next()];
    peer.send({ id: b.id, result: { interrupted: true } }, true);
    peer.send({ id: a.id, result: { generationId: "g_1" } });
    expect(await second).toEqual({ interrupted: true });
    expect(await first).toEqual({ generationId: "g_1" });
  });

  it("rejects with AgentwireRpcError carrying code, message and data", async () => {
    const { client, peer } = await connect();
    const get = client.conversation.get({ conversationId: "c_missing" });
    const frame = await peer.next();
    peer.send({ id: frame.id, error: { code: -32010, message: "Conversation not found", data: { conversationId: "c_missing" } } });
    const error = await get.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AgentwireRpcError);
    expect(error).toMatchObject({ code: -32010, message: "Conversation not found", data: { conversationId: "c_missing" } });
  });

  it("delivers notifications to on() and onAny() until their disposers are called", async () => {
    const { client, peer } = await connect();
    const pending: ToolPendingNotification[] = [];
    const any: Array<[string, unknown]> = [];
    const stopPending = client.on("tool_pending", (params) => pending.push(params));
    const stopAny = client.onAny((method, params) => any.push([method, params]));
    const params = { conversationId: "c_1", seq: 1, toolCallId: "t_1", toolName: "shell", arguments: { command: "ls" } };
    peer.send({ method: "tool_pending", params });
    peer.send({ method: "tool_output", params: { conversationId: "c_1", seq: 2, chunk: "x" } });
    await roundTrip(client, peer);
    expect(pending).toEqual([params]);
    expect(any.map(([method]) => method)).toEqual(["tool_pending", "tool_output"]);

    stopPending();
    stopPending(); // idempotent
    peer.send({ method: "tool_pending", params: { ...params, seq: 3 } });
    await roundTrip(client, peer);
    expect(pending).toHaveLength(1);
    expect(any).toHaveLength(3);

    stopAny();
    peer.send({ method: "tool_pending", params: { ...params, seq: 4 } });
    await roundTrip(client, peer);
    expect(any).toHaveLength(3);
  });

  it("keeps dispatching when a handler throws", async () => {
    const { client, peer } = await connect();
    const seen: number[] = [];
    const thrown: unknown[] = [];
    const onUncaught = (e: unknown) => thrown.push(e);
    process.prependListener("uncaughtException", onUncaught);
    try {
      client.on("interrupted", () => {
        throw new Error("handler bug");
      });
      client.on("interrupted", (p) => seen.push(p.seq));
      peer.send({ method: "interrupted", params: { seq: 7 } });
      await roundTrip(client, peer);
      await new Promise((resolve) => setTimeout(resolve, 10));
    } finally {
      process.removeListener("uncaughtException", onUncaught);
    }
    expect(seen).toEqual([7]);
    expect(thrown).toEqual([expect.objectContaining({ message: "handler bug" })]);
  });

  it("answers server→client requests with -32601", async () => {
    const { peer } = await connect();
    peer.send({ id: "s1", method: "client.ping", params: {} });
    const answer = await peer.next();
    expect(answer).toEqual({ jsonrpc: "2.0", id: "s1", error: { code: -32601, message: "Method not found: client.ping" } });
  });

  it("rejects pending calls with CONNECTION_CLOSED when the server closes, then rejects at once", async () => {
    const { client, peer } = await connect();
    const closes: unknown[] = [];
    client.onClose((info) => closes.push(info));
    const pending = client.conversation.list();
    await peer.next();
    peer.socket.close(4001, "going away");
    const error = await pending.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AgentwireConnectionError);
    expect(error).toMatchObject({ code: "CONNECTION_CLOSED" });
    expect((error as Error).message).toContain("4001");
    expect((error as Error).message).toContain("going away");
    expect(closes).toEqual([{ code: 4001, reason: "going away" }]);
    expect(client.closed).toBe(true);

    await expect(client.tools.list()).rejects.toMatchObject({ code: "CONNECTION_CLOSED" });
    const late: unknown[] = [];
    client.onClose((info) => late.push(info));
    await Promise.resolve();
    expect(late).toEqual([{ code: 4001, reason: "going away" }]);
    await client.close(); // already closed: resolves at once
  });

  it("close() resolves once closed and rejects what is pending; later requests reject at once", async () => {
    const { client, peer } = await connect();
    const pending = client.models.list();
    await peer.next();
    const serverSawClose = new Promise<number>((resolve) => peer.socket.once("close", (code) => resolve(code)));
    const sendsAfterClose = client.close();
    await expect(client.tools.list()).rejects.toMatchObject({ code: "CONNECTION_CLOSED" });
    await sendsAfterClose;
    expect(client.closed).toBe(true);
    await expect(pending).rejects.toMatchObject({ code: "CONNECTION_CLOSED" });
    expect(await serverSawClose).toBe(1000);
  });

  it("rejects with TIMEOUT after requestTimeoutMs and ignores the late answer", async () => {
    const { client, peer } = await connect({ requestTimeoutMs: 50 });
    const slow = client.tools.list();
    const frame = await peer.next();
    await expect(slow).rejects.toMatchObject({ name: "AgentwireConnectionError", code: "TIMEOUT" });
    peer.send({ id: frame.id, result: { tools: [] } });
    await roundTrip(client, peer);
  });

  it("a call's own timeoutMs overrides requestTimeoutMs, shorter or longer", async () => {
    const { client, peer } = await connect({ requestTimeoutMs: 40 });
    const quick = client.tools.list({ timeoutMs: 10 });
    const quickFrame = await peer.next();
    const error = await quick.catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "AgentwireConnectionError", code: "TIMEOUT" });
    expect((error as Error).message).toContain("10 ms");
    peer.send({ id: quickFrame.id, result: { tools: [] } }); // late: ignored

    const patient = client.server.status({ timeoutMs: 5_000 });
    const frame = await peer.next();
    await new Promise((resolve) => setTimeout(resolve, 80)); // past requestTimeoutMs
    peer.send({ id: frame.id, result: { version: "0.1.0" } });
    expect(await patient).toEqual({ version: "0.1.0" });
  });

  it("an already aborted signal rejects at once with ABORTED and sends nothing", async () => {
    const { client, peer } = await connect();
    const controller = new AbortController();
    controller.abort(new Error("user left"));
    const error = await client.conversation.get({ conversationId: "c_1" }, { signal: controller.signal }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AgentwireConnectionError);
    expect(error).toMatchObject({ code: "ABORTED", cause: expect.objectContaining({ message: "user left" }) });
    const next = client.server.status();
    expect((await peer.next()).method).toBe("server.status"); // the aborted call never reached the socket
    void next.catch(() => {});
  });

  it("aborting a call in flight rejects it at once, ignores the late answer and drops the listener", async () => {
    const { client, peer } = await connect();
    const controller = new AbortController();
    const removed = vi.spyOn(controller.signal, "removeEventListener");
    const call = client.step({ conversationId: "c_1" }, { signal: controller.signal });
    const frame = await peer.next();
    controller.abort();
    await expect(call).rejects.toMatchObject({ name: "AgentwireConnectionError", code: "ABORTED" });
    expect(removed).toHaveBeenCalledWith("abort", expect.any(Function));
    peer.send({ id: frame.id, result: { generationId: "g_1" } });
    await roundTrip(client, peer);

    // A signal shared by calls that settle normally is not left holding their listeners.
    const shared = new AbortController();
    const added = vi.spyOn(shared.signal, "addEventListener");
    const unlistened = vi.spyOn(shared.signal, "removeEventListener");
    const answered = client.interrupt({ conversationId: "c_1" }, { signal: shared.signal });
    peer.send({ id: (await peer.next()).id, result: { interrupted: false } });
    expect(await answered).toEqual({ interrupted: false });
    expect(added).toHaveBeenCalledTimes(1);
    expect(unlistened).toHaveBeenCalledTimes(1);
  });

  it("experimentalApi sends capabilities.experimentalApi: true, merged with the other capabilities", async () => {
    const merged = await connect({ experimentalApi: true, capabilities: { notificationOptOut: ["tool_output"] } });
    expect(merged.init.params.capabilities).toEqual({ notificationOptOut: ["tool_output"], experimentalApi: true });
    const alone = await connect({ experimentalApi: true });
    expect(alone.init.params.capabilities).toEqual({ experimentalApi: true });
    const plain = await connect();
    expect(plain.init.params).toEqual({ protocolVersion: PROTOCOL_VERSION });
  });

  it("connect rejects with the server's error and closes the socket when initialize is refused", async () => {
    const connecting = AgentwireClient.connect(url, { WebSocket });
    const peer = await nextPeer();
    const closed = new Promise<void>((resolve) => peer.socket.once("close", () => resolve()));
    const init = await peer.next();
    peer.send({ id: init.id, error: { code: -32003, message: "Unsupported protocol version", data: { supported: "1.0" } } });
    await expect(connecting).rejects.toMatchObject({ name: "AgentwireRpcError", code: -32003, data: { supported: "1.0" } });
    await closed;
  });

  it("connect rejects with CONNECTION_CLOSED when nothing listens, and with TIMEOUT when initialize is not answered", async () => {
    const port = (wss.address() as AddressInfo).port;
    await new Promise<void>((resolve) => wss.close(() => resolve()));
    const refused = await AgentwireClient.connect(`ws://127.0.0.1:${port}`, { WebSocket }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(AgentwireConnectionError);
    expect(refused).toMatchObject({ code: "CONNECTION_CLOSED" });
    expect((refused as Error).message).toContain("ECONNREFUSED");

    wss = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    await new Promise<void>((resolve) => wss.once("listening", () => resolve()));
    const silent = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`;
    await expect(AgentwireClient.connect(silent, { WebSocket, requestTimeoutMs: 50 })).rejects.toMatchObject({ code: "TIMEOUT" });
  });
});

/** Compile-time checks only (never called): `tsc --noEmit` fails if the generated types loosen. */
export async function typeChecks(client: AgentwireClient): Promise<void> {
  // @ts-expect-error conversationId is required
  await client.conversation.get({});
  // @ts-expect-error role must be user, system or assistant
  await client.message.append({ conversationId: "c", role: "tool", content: "x" });
  // @ts-expect-error no such method
  await client.request("conversation.nope", {});
  // @ts-expect-error initialize is done by connect, not offered as a method
  await client.initialize();
  const list: { nextCursor?: string } = await client.conversation.list();
  await client.tools.list({ signal: new AbortController().signal, timeoutMs: 1000 });
  // @ts-expect-error tools.list takes options only, no params
  await client.tools.list({}, {});
  const result: { generationId: string } = await client.request("step", { conversationId: "c" });
  client.on("tool_output", (p) => p.chunk.toUpperCase());
  client.onAny((method, params) => {
    if (method === "tool_pending") params.toolName.toUpperCase();
  });
  // @ts-expect-error unknown notification
  client.on("no_such_event", () => {});
  void list;
  void result;
}
