import { getEventListeners } from "node:events";
import { createServer, type IncomingMessage, type Server } from "node:http";
import { createServer as createNetServer, type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createNodeHttpFetch } from "../../src/llm/node-http-fetch.js";

let server: Server;
let base: string;
const big = "0123456789abcdef".repeat(128 * 1024); // 2 MiB
const transport = createNodeHttpFetch();

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      if (req.url === "/big") return res.end(big);
      if (req.url === "/empty") {
        res.writeHead(204);
        return res.end();
      }
      if (req.url === "/hang") return; // never answers
      res.writeHead(201, { "content-type": "application/json", "x-multi": ["a", "b"] });
      res.end(JSON.stringify({ method: req.method, auth: req.headers.authorization, host: req.headers.host, body }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  transport.close();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe("node:http fetch for the SDK", () => {
  it("sends method, headers and body; answers status, headers and a readable web body", async () => {
    const res = await transport.fetch(`${base}/echo`, {
      method: "POST",
      headers: new Headers({ authorization: "Bearer k", "content-type": "application/json" }),
      body: '{"x":1}',
    });
    expect(res.status).toBe(201);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(res.headers.get("x-multi")).toBe("a, b");
    expect(await res.json()).toEqual({ method: "POST", auth: "Bearer k", host: new URL(base).host, body: '{"x":1}' });
  });

  it("reads a large body completely through the web stream (backpressure resumes)", async () => {
    const res = await transport.fetch(`${base}/big`);
    expect(await res.text()).toBe(big);
  });

  it("hands an unread body over as the Node stream, once, and never after the web body was read", async () => {
    const res = await transport.fetch(`${base}/big`);
    const node = transport.takeNodeBody(res)!;
    expect(node).toBeDefined();
    expect(transport.takeNodeBody(res)).toBeUndefined();
    let text = "";
    for await (const chunk of node) text += chunk;
    expect(text).toBe(big);

    const read = await transport.fetch(`${base}/echo`);
    await read.text();
    expect(transport.takeNodeBody(read)).toBeUndefined();
  });

  it("gives a null body for 204 and rejects with AbortError when the signal aborts", async () => {
    const empty = await transport.fetch(`${base}/empty`);
    expect(empty.status).toBe(204);
    expect(empty.body).toBeNull();
    const controller = new AbortController();
    const pending = transport.fetch(`${base}/hang`, { signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
  });

  it("rejects a refused connection with the system error code", async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    await expect(transport.fetch(`http://127.0.0.1:${port}/`)).rejects.toMatchObject({ code: "ECONNREFUSED" });
  });

  it("speaks TLS to an https: URL (node:https, loaded at the first such request) and refuses other protocols", async () => {
    // A bare TCP server: what it reads first tells TLS (a handshake record, 0x16) from plain HTTP ("POST", "GET").
    const firstBytes: number[] = [];
    const tcp = createNetServer((socket) =>
      socket.once("data", (data) => {
        firstBytes.push(data[0]!);
        socket.destroy();
      }),
    );
    await new Promise<void>((r) => tcp.listen(0, "127.0.0.1", r));
    const port = (tcp.address() as AddressInfo).port;
    try {
      await expect(transport.fetch(`https://127.0.0.1:${port}/`)).rejects.toThrow();
      await expect(transport.post(new URL(`https://127.0.0.1:${port}/v1`), { host: `127.0.0.1:${port}` }, "{}", new AbortController().signal)).rejects.toThrow();
      expect(firstBytes).toEqual([0x16, 0x16]);
    } finally {
      await new Promise((r) => tcp.close(r));
    }
    await expect(transport.fetch("ftp://127.0.0.1/")).rejects.toThrow("fetch: unsupported protocol ftp:");
  });
});

describe("node:http post for the direct sender", () => {
  const read = async (message: IncomingMessage) => {
    let text = "";
    for await (const chunk of message) text += chunk;
    return JSON.parse(text);
  };

  it("sends its headers (Host included) and body, and leaves no listener on the signal once the answer is read", async () => {
    const controller = new AbortController();
    const message = await transport.post(new URL(`${base}/echo`), { authorization: "Bearer k", "content-type": "application/json" }, '{"y":2}', controller.signal);
    expect(message.statusCode).toBe(201);
    expect(await read(message)).toEqual({ method: "POST", auth: "Bearer k", host: new URL(base).host, body: '{"y":2}' });
    await new Promise((r) => setImmediate(r));
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });

  it("rejects with AbortError when the signal aborts before the answer, or was aborted already", async () => {
    const controller = new AbortController();
    const pending = transport.post(new URL(`${base}/hang`), {}, "", controller.signal);
    setTimeout(() => controller.abort(), 20);
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
    await expect(transport.post(new URL(`${base}/echo`), {}, "", AbortSignal.abort())).rejects.toMatchObject({ name: "AbortError" });
  });

  it("ends an answer being read when the signal aborts", async () => {
    const controller = new AbortController();
    const message = await transport.post(new URL(`${base}/big`), {}, "", controller.signal);
    const failed = new Promise((resolve) => message.once("error", resolve).once("close", resolve));
    controller.abort();
    await failed;
    expect(message.destroyed).toBe(true);
  });
});
