/**
 * Managing MCP servers over the protocol: mcp.probe (tries a definition,
 * saves nothing), mcp.add (saved in the data dir, back after a restart),
 * mcp.remove, their errors, and the Streamable HTTP transport with a header
 * the server checks.
 */
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "../fake-openai/server.js";
import { newConversation } from "../harness/agent-fixture.js";
import { eventually } from "../harness/eventually.js";
import { rpcError } from "../harness/rpc-errors.js";
import { startHttpFixture, startMcpAgent, stdioFixture, type HttpFixture } from "../fixtures/mcp/mcp-fixture.js";

let fake: FakeOpenAI;
let http: HttpFixture;
let dataDir: string;
const TOKEN = "x-fixture-token: let-me-in";

beforeAll(async () => {
  [fake, http, dataDir] = await Promise.all([
    startFakeOpenAI({ apiKey: "test-key" }),
    startHttpFixture({ FIXTURE_REQUIRED_HEADER: TOKEN }),
    mkdtemp(join(tmpdir(), "agentwire-mcp-methods-")),
  ]);
}, 20_000);
afterAll(async () => {
  await Promise.all([fake?.close(), http?.close()]);
  await rm(dataDir, { recursive: true, force: true });
});

const toolNames = async (agent: { client: { tools: { list(): Promise<{ tools: { name: string }[] }> } } }) =>
  (await agent.client.tools.list()).tools.map((t) => t.name);

it("mcp.probe lists a server's tools without keeping anything; an unreachable one answers MCP_ERROR", async () => {
  const agent = await startMcpAgent({ server: { dataDir } }, undefined, fake);
  try {
    const probe = await agent.client.mcp.probe({ server: stdioFixture() });
    expect(probe.serverInfo).toEqual({ name: "agentwire-fixture", version: "1.0.0" });
    const peek = probe.tools.find((t) => t.name === "peek");
    expect(peek).toMatchObject({ description: "Reads nothing, changes nothing.", annotations: { readOnlyHint: true, destructiveHint: false } });
    expect(probe.tools.find((t) => t.name === "echo")?.inputSchema).toMatchObject({ properties: { text: { type: "string" } } });
    // Nothing saved, nothing offered.
    expect((await agent.client.mcp.list()).servers).toEqual([]);
    expect((await toolNames(agent)).filter((n) => n.startsWith("mcp__"))).toEqual([]);
    expect(existsSync(join(dataDir, "mcp-servers.json"))).toBe(false);

    const missing = await rpcError(agent.client.mcp.probe({ server: { command: "agentwire-no-such-mcp-server" } }));
    expect(missing).toMatchObject({ code: -32060, data: { transport: "stdio" } });
    expect(missing.message).toBe('MCP server error: could not start "agentwire-no-such-mcp-server": command not found');

    // Over HTTP without the header the fixture wants: refused with its status.
    const refused = await rpcError(agent.client.mcp.probe({ server: { url: http.url } }));
    expect(refused).toMatchObject({ code: -32060, data: { transport: "http" } });
    expect(refused.message).toContain("401");

    const bad = await rpcError(agent.client.mcp.probe({ server: { command: "node", workdir: "/tmp" } as never }));
    expect(bad.code).toBe(-32602);
  } finally {
    await agent.server.stop();
    await agent.close();
  }
}, 30_000);

it("mcp.add saves a server (stdio and HTTP with headers) that is back after a restart; mcp.remove forgets it", async () => {
  const [host, value] = TOKEN.split(": ");
  const config = { server: { dataDir }, mcpServers: { fromfile: { ...stdioFixture(), disabled: true } } };
  const first = await startMcpAgent(config, undefined, fake);
  try {
    const added = await first.client.mcp.add({ name: "local", server: stdioFixture() });
    expect(added.server).toMatchObject({ name: "local", transport: "stdio", origin: "added", state: "connected", serverInfo: { name: "agentwire-fixture" } });
    expect(added.server.tools.map((t) => t.name)).toContain("mcp__local__echo");
    const remote = await first.client.mcp.add({ name: "remote", server: { url: http.url, headers: { [host]: value } } });
    expect(remote.server).toMatchObject({ transport: "http", state: "connected" });
    expect(await toolNames(first)).toEqual(expect.arrayContaining(["mcp__local__echo", "mcp__remote__echo"]));

    // A call over HTTP, end to end.
    fake.enqueue({ kind: "reply", toolCalls: [{ id: "call_1", name: "mcp__remote__echo", args: '{"text":"over http"}' }] }, { kind: "reply", text: ["ok"] });
    const { id, events } = await newConversation(first.client);
    const { generationId } = await first.client.step({ conversationId: id, autoConfirm: true });
    await events.waitForEnd(generationId, 10_000);
    expect(events.of("tool_completed")[0].record.result).toBe("echo: over http");

    // Name clashes, with an added server and with one from the configuration file.
    for (const name of ["local", "fromfile"]) {
      const clash = await rpcError(first.client.mcp.add({ name, server: stdioFixture() }));
      expect(clash.code).toBe(-32602);
      expect(clash.data).toEqual({ issues: [expect.objectContaining({ path: "name", message: expect.stringContaining(`"${name}" already exists`) })] });
    }
    const fromFile = await rpcError(first.client.mcp.remove({ name: "fromfile" }));
    expect(fromFile.code).toBe(-32602);
    expect(fromFile.message).toContain("comes from the configuration file");
    expect((await rpcError(first.client.mcp.remove({ name: "nobody" }))).message).toContain('no MCP server is named "nobody"');

    const saved = JSON.parse(await readFile(join(dataDir, "mcp-servers.json"), "utf8"));
    expect(Object.keys(saved.mcpServers)).toEqual(["local", "remote"]);
    expect(saved.mcpServers.remote.headers).toEqual({ [host]: value });
  } finally {
    await first.server.stop();
  }

  // Same data dir, new process: the added servers come back and connect.
  const second = await startMcpAgent(config, undefined, fake);
  try {
    await eventually(async () => (await second.client.server.status()).mcp.connected === 2, 10_000, "both added servers connected again");
    const { servers } = await second.client.mcp.list();
    expect(servers.map((s) => [s.name, s.origin, s.state])).toEqual([
      ["fromfile", "config", "disabled"],
      ["local", "added", "connected"],
      ["remote", "added", "connected"],
    ]);

    expect(await second.client.mcp.remove({ name: "local" })).toEqual({ removed: true });
    expect(await toolNames(second)).not.toContain("mcp__local__echo");
    expect((await second.client.mcp.list()).servers.map((s) => s.name)).toEqual(["fromfile", "remote"]);
    const saved = JSON.parse(await readFile(join(dataDir, "mcp-servers.json"), "utf8"));
    expect(Object.keys(saved.mcpServers)).toEqual(["remote"]);
  } finally {
    await second.server.stop();
  }

  const third = await startMcpAgent(config, undefined, fake);
  try {
    expect((await third.client.mcp.list()).servers.map((s) => s.name)).toEqual(["fromfile", "remote"]);
  } finally {
    await third.server.stop();
  }
}, 40_000);
