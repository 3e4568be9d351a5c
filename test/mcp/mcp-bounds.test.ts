/**
 * What MCP servers may cost: each server's start is its own (a server that
 * never answers initialize holds only its own mcp.add), and the number of
 * servers is bounded by limits.maxMcpServers (configuration file and
 * mcp.add together).
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "../fake-openai/server.js";
import { eventually } from "../harness/eventually.js";
import { rpcError } from "../harness/rpc-errors.js";
import { alive, startMcpAgent, stdioFixture } from "../fixtures/mcp/mcp-fixture.js";

let fake: FakeOpenAI;
let root: string;

beforeAll(async () => {
  [fake, root] = await Promise.all([startFakeOpenAI({ apiKey: "test-key" }), mkdtemp(join(tmpdir(), "agentwire-mcp-bounds-"))]);
});
afterAll(async () => {
  await fake?.close();
  await rm(root, { recursive: true, force: true });
});

/** A real stdio process that reads its stdin and never answers (it writes its pid first). */
const silentServer = (pidFile: string) => ({
  command: process.execPath,
  args: ["-e", "require('node:fs').writeFileSync(process.argv[1], String(process.pid)); process.stdin.resume();", pidFile],
});

const savedNames = async (dataDir: string) => Object.keys(JSON.parse(await readFile(join(dataDir, "mcp-servers.json"), "utf8")).mcpServers);

it("a silent MCP server holds only its own mcp.add: another server's add answers while it is still connecting", async () => {
  const dataDir = await mkdtemp(join(root, "independent-"));
  const pidFile = join(dataDir, "silent.pid");
  // initialize gets 10 s here: long enough that the silent one is still connecting throughout.
  const agent = await startMcpAgent({ server: { dataDir } }, undefined, fake);
  try {
    const silentAdd = agent.client.mcp.add({ name: "silent", server: silentServer(pidFile) });
    const silentState = async () => (await agent.client.mcp.list()).servers.find((s) => s.name === "silent")?.state;
    await eventually(async () => (await silentState()) === "connecting", 5000, "the silent server connecting");
    await eventually(() => readFile(pidFile, "utf8").then(() => true, () => false), 5000, "the silent process started");

    const normal = await agent.client.mcp.add({ name: "normal", server: stdioFixture() });
    expect(normal.server).toMatchObject({ name: "normal", state: "connected" });
    expect(normal.server.tools.map((t) => t.name)).toContain("mcp__normal__echo");
    // Answered while the silent one is still waiting for its initialize answer.
    expect(await silentState()).toBe("connecting");

    // Removing the silent one ends its start (its add answers) and its process.
    const pid = Number(await readFile(pidFile, "utf8"));
    expect(await agent.client.mcp.remove({ name: "silent" })).toEqual({ removed: true });
    await silentAdd;
    await eventually(() => !alive(pid), 5000, "the silent process gone");
    expect(await savedNames(dataDir)).toEqual(["normal"]);
  } finally {
    await agent.server.stop();
    await agent.close();
  }
}, 30_000);

it("limits.maxMcpServers bounds the servers: mcp.add beyond it answers LIMIT_EXCEEDED and saves nothing; a restart under a lower limit starts no more", async () => {
  const dataDir = await mkdtemp(join(root, "cap-"));
  const config = { server: { dataDir }, limits: { maxMcpServers: 3 }, mcpServers: { fromfile: { ...stdioFixture(), disabled: true } } };
  const first = await startMcpAgent(config, undefined, fake);
  try {
    await first.client.mcp.add({ name: "one", server: { ...stdioFixture(), disabled: true } });
    await first.client.mcp.add({ name: "two", server: { ...stdioFixture(), disabled: true } });
    const refused = await rpcError(first.client.mcp.add({ name: "three", server: stdioFixture() }));
    expect(refused.code).toBe(-32050);
    expect(refused.data).toEqual({ limit: "maxMcpServers", max: 3, actual: 4 });
    expect(refused.message).toBe(
      "Limit exceeded: 3 MCP servers are declared, the most this server keeps (limits.maxMcpServers is 3); mcp.remove one first or raise the limit",
    );
    expect((await first.client.mcp.list()).servers.map((s) => s.name)).toEqual(["fromfile", "one", "two"]);
    expect(await savedNames(dataDir)).toEqual(["one", "two"]);
    // Room again once one is removed.
    await first.client.mcp.remove({ name: "two" });
    await first.client.mcp.add({ name: "three", server: { ...stdioFixture(), disabled: true } });
    expect(await savedNames(dataDir)).toEqual(["one", "three"]);
  } finally {
    await first.server.stop();
    await first.close();
  }

  // The limit lowered to 2: the file's server and the first saved one run; "three" is kept, not run.
  const second = await startMcpAgent({ ...config, limits: { ...config.limits, maxMcpServers: 2 } }, undefined, fake);
  try {
    expect((await second.client.mcp.list()).servers.map((s) => s.name)).toEqual(["fromfile", "one"]);
    expect((await second.client.server.status()).mcp.servers).toBe(2);
    const full = await rpcError(second.client.mcp.add({ name: "four", server: stdioFixture() }));
    expect(full.data).toEqual({ limit: "maxMcpServers", max: 2, actual: 4 });
    // The name of a server kept over the limit is taken, and mcp.remove forgets it.
    await second.client.mcp.remove({ name: "one" });
    const clash = await rpcError(second.client.mcp.add({ name: "three", server: stdioFixture() }));
    expect(clash.message).toContain('"three" already exists');
    await second.client.mcp.remove({ name: "three" });
    expect(await savedNames(dataDir)).toEqual([]);
    await second.client.mcp.add({ name: "five", server: { ...stdioFixture(), disabled: true } });
    expect(await savedNames(dataDir)).toEqual(["five"]);
  } finally {
    await second.server.stop();
    await second.close();
  }
}, 30_000);
