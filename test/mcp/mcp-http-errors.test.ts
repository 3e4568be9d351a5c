/**
 * MCP over Streamable HTTP that fails: every way of failing says what
 * happened — a refused connection, a host that does not resolve, an HTTP
 * status with its text, a server that never answers, a web page or JSON
 * that is not MCP, a dropped connection — through mcp.add (the state kept
 * in mcp.list) and mcp.probe (the MCP_ERROR message). Real HTTP servers on
 * 127.0.0.1, started here.
 */
import type { ServerResponse } from "node:http";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "../fake-openai/server.js";
import { startFakeWebServer, type FakeWebServer } from "../harness/fake-web-server.js";
import { rpcError } from "../harness/rpc-errors.js";
import { startMcpAgent, type McpAgent } from "../fixtures/mcp/mcp-fixture.js";

let fake: FakeOpenAI;
let web: FakeWebServer;
let agent: McpAgent;
let dataDir: string;
/** A port nothing listens on: taken from a server that was then closed. */
let closedPort: number;

const status = (code: number, body: string, type = "text/plain") => (_req: unknown, res: ServerResponse) =>
  res.writeHead(code, { "content-type": type }).end(body);

beforeAll(async () => {
  [fake, dataDir] = await Promise.all([startFakeOpenAI({ apiKey: "test-key" }), mkdtemp(join(tmpdir(), "agentwire-mcp-http-"))]);
  const gone = await startFakeWebServer({});
  closedPort = Number(new URL(gone.url).port);
  await gone.close();
  web = await startFakeWebServer({
    "/unauthorized": status(401, '{"error":"missing token"}', "application/json"),
    "/broken": status(500, "database exploded"),
    "/hang": () => {}, // reads the request, never answers
    "/page": status(200, "<!doctype html><html><head><title>Welcome</title></head><body>hello</body></html>", "text/html; charset=utf-8"),
    "/json": status(200, '{"hello":"world"}', "application/json"),
    "/reset": (req) => req.socket.destroy(),
  });
  // A short initialize limit: the silent server's case must not take 10 s.
  agent = await startMcpAgent({ server: { dataDir } }, { connectTimeoutMs: 1500, backoff: { initialMs: 60_000, maxMs: 60_000 } }, fake);
}, 20_000);

afterAll(async () => {
  await agent?.server.stop();
  await agent?.close();
  await Promise.all([fake?.close(), web?.close()]);
  await rm(dataDir, { recursive: true, force: true });
});

const cases = () => {
  const host = new URL(web.url).host;
  return [
    {
      name: "refused",
      url: `http://127.0.0.1:${closedPort}/mcp`,
      message: `connection refused by 127.0.0.1:${closedPort} (nothing is listening there: is the MCP server running, and is the port right?)`,
    },
    { name: "nodns", url: "http://agentwire-no-such-host.invalid/mcp", message: /^could not resolve host "agentwire-no-such-host\.invalid" \(DNS: (ENOTFOUND|EAI_AGAIN)\)$/ },
    {
      name: "notfound",
      url: `${web.url}/nothing-here`,
      message: `HTTP 404 Not Found from ${host}: no route /nothing-here (no MCP endpoint at this path: check the URL, often it ends in /mcp)`,
    },
    {
      name: "unauthorized",
      url: `${web.url}/unauthorized`,
      message: `HTTP 401 Unauthorized from ${host}: {"error":"missing token"} (the server wants credentials: give them in the definition's headers, e.g. Authorization)`,
    },
    { name: "broken", url: `${web.url}/broken`, message: `HTTP 500 Internal Server Error from ${host}: database exploded` },
    { name: "hang", url: `${web.url}/hang`, message: `no answer to initialize from ${host} within 1500 ms (the HTTP request got no response)` },
    {
      name: "page",
      url: `${web.url}/page`,
      message: `not an MCP endpoint: ${host} answered initialize with text/html (HTTP 200 OK), not JSON or an event stream (check the URL: it must be the server's MCP endpoint, often ending in /mcp)`,
    },
    { name: "json", url: `${web.url}/json`, message: `not an MCP endpoint: ${host} answered initialize (HTTP 200 OK) with something that is not a JSON-RPC message` },
    { name: "reset", url: `${web.url}/reset`, message: /^127\.0\.0\.1:\d+ closed the connection without an HTTP answer \((UND_ERR_SOCKET|ECONNRESET)\)$/ },
  ];
};

it("mcp.add of a failing HTTP server keeps it failed with an error that says what happened, not \"connection closed\"", async () => {
  const all = cases();
  // Added together: each start is independent, so the silent one does not hold the others.
  const added = await Promise.all(all.map((c) => agent.client.mcp.add({ name: c.name, server: { url: c.url } })));
  for (const [i, c] of all.entries()) {
    const server = added[i].server;
    expect(server, c.name).toMatchObject({ name: c.name, transport: "http", state: "failed" });
    if (typeof c.message === "string") expect(server.error, c.name).toBe(c.message);
    else expect(server.error, c.name).toMatch(c.message);
    expect(server.error).not.toContain("connection closed");
  }
  const listed = (await agent.client.mcp.list()).servers;
  expect(listed.map((s) => [s.name, s.error])).toEqual(all.map((c, i) => [c.name, added[i].server.error]));
  for (const c of all) await agent.client.mcp.remove({ name: c.name });
}, 30_000);

it("mcp.probe of a failing HTTP server answers MCP_ERROR with the same explanation", async () => {
  for (const c of cases()) {
    const error = await rpcError(agent.client.mcp.probe({ server: { url: c.url } }));
    expect(error, c.name).toMatchObject({ code: -32060, data: { transport: "http" } });
    const detail = error.message.replace(/^MCP server error: /, "");
    if (typeof c.message === "string") expect(detail, c.name).toBe(c.message);
    else expect(detail, c.name).toMatch(c.message);
  }
}, 30_000);
