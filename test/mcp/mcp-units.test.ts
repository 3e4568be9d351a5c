/**
 * The small MCP parts without a server: the names the model calls MCP tools
 * by, and the saved-servers file (atomic, never silently losing a damaged one).
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { McpServersFile } from "../../src/mcp/mcp-servers-file.js";
import { mcpToolName } from "../../src/mcp/mcp-tool-name.js";

const OPENAI_NAME = /^[A-Za-z0-9_-]{1,64}$/;

it("names MCP tools mcp__<server>__<tool>, valid for the model API, distinct and stable", () => {
  expect(mcpToolName("fx", "echo")).toBe("mcp__fx__echo");
  expect(mcpToolName("fx", "files.read/v2")).toBe("mcp__fx__files_read_v2");
  // Two tools that differ only in a refused character do not share a name.
  const taken = new Set([mcpToolName("fx", "a.b")]);
  const other = mcpToolName("fx", "a_b", taken);
  expect(other).not.toBe("mcp__fx__a_b");
  expect(other).toMatch(OPENAI_NAME);
  // Too long: cut, with a hash of the original, the same every time.
  const long = "x".repeat(100);
  const name = mcpToolName("a-server-name-of-32-characters-x", long);
  expect(name).toMatch(OPENAI_NAME);
  expect(name).toHaveLength(64);
  expect(mcpToolName("a-server-name-of-32-characters-x", long)).toBe(name);
  expect(mcpToolName("a-server-name-of-32-characters-x", `${long}y`)).not.toBe(name);
});

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

it("saves servers atomically and sets a damaged file aside instead of overwriting it", async () => {
  dir = await mkdtemp(join(tmpdir(), "agentwire-mcp-file-"));
  const file = new McpServersFile(dir);
  expect(await file.load()).toEqual({ servers: {} });

  await file.save({ a: { command: "node" } });
  expect(await new McpServersFile(dir).load()).toEqual({ servers: { a: { command: "node" } } });
  expect((await readdir(dir)).filter((f) => f.endsWith(".tmp"))).toEqual([]);

  await writeFile(file.path, '{"mcpServers": {"b": {"command": ');
  const damaged = new McpServersFile(dir);
  const loaded = await damaged.load();
  expect(loaded.servers).toEqual({});
  expect(loaded.problem).toMatch(/is not valid JSON/);
  await damaged.save({ c: { url: "http://127.0.0.1:1/mcp" } });
  const names = await readdir(dir);
  const aside = names.find((n) => n.startsWith("mcp-servers.json.damaged-"));
  expect(aside).toBeDefined();
  expect(await readFile(join(dir, aside!), "utf8")).toBe('{"mcpServers": {"b": {"command": ');
  expect(JSON.parse(await readFile(file.path, "utf8"))).toEqual({ mcpServers: { c: { url: "http://127.0.0.1:1/mcp" } } });

  await writeFile(file.path, JSON.stringify({ mcpServers: { "bad name": { command: "x" } } }));
  expect((await new McpServersFile(dir).load()).problem).toMatch(/does not hold valid server definitions/);
});

it("keeps a failed server failed while a retry is under way (server.status never counts it as connecting)", async () => {
  const { McpConnection } = await import("../../src/mcp/mcp-connection.js");
  const { createLogger } = await import("../../src/logging/logger.js");
  const dir = await mkdtemp(join(tmpdir(), "aw-mcp-retry-"));
  // First start exits at once (a failure); every later start hangs without answering initialize,
  // so the retry stays in flight for the whole connect timeout.
  const marker = join(dir, "started-once");
  const script = join(dir, "server.sh");
  await writeFile(script, `if [ -e "${marker}" ]; then exec sleep 30; fi; : > "${marker}"; exit 1\n`);
  const connection = new McpConnection("flaky", { command: "sh", args: [script] }, "config", {
    baseEnv: () => ({ PATH: process.env.PATH ?? "" }),
    connectTimeoutMs: 5000,
    backoff: { initialMs: 50, maxMs: 50 },
    maxOutputBytes: 1000,
    log: createLogger("silent"),
    changed: () => {},
    notice: () => {},
  });
  try {
    await connection.start();
    expect(connection.info()).toMatchObject({ state: "failed", attempts: 1 });
    // Wait until the retry has started (attempts 2), then read the state while it hangs.
    const deadline = Date.now() + 5000;
    while (connection.info().attempts < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    const during = connection.info();
    expect(during).toMatchObject({ state: "failed", attempts: 2, nextRetryMs: 0 });
    expect(during.error).toBeTruthy();
  } finally {
    await connection.close();
    await rm(dir, { recursive: true, force: true });
  }
});

it("counts two failed servers as failed while both retries are in flight at once (mcp-lifecycle's failed: 2, once seen as 0)", async () => {
  const { McpManager } = await import("../../src/mcp/mcp-manager.js");
  const { createLogger } = await import("../../src/logging/logger.js");
  const dir = await mkdtemp(join(tmpdir(), "aw-mcp-retries-"));
  // Each server's first start exits at once (a failure); every later start hangs without answering
  // initialize, so from the first retry on both are retrying at the same time, for the whole timeout.
  const flaky = async (name: string) => {
    const marker = join(dir, `started-${name}`);
    const script = join(dir, `${name}.sh`);
    await writeFile(script, `if [ -e "${marker}" ]; then exec sleep 30; fi; : > "${marker}"; exit 1\n`);
    return { command: "sh", args: [script] };
  };
  const manager = new McpManager(
    { dataDir: dir, mcpServers: { a: await flaky("a"), b: await flaky("b") }, toolEnvAllow: [], maxMcpServers: 10 },
    createLogger("silent"),
    { connectTimeoutMs: 10_000, backoff: { initialMs: 50, maxMs: 50 } },
  );
  try {
    await manager.start();
    const deadline = Date.now() + 5000;
    const retrying = async () => (await manager.servers()).every((s) => s.attempts >= 2);
    while (!(await retrying()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(await retrying()).toBe(true);
    // Before 414cde2 a retry set the state back to connecting: with both in flight this read 0.
    expect(manager.status()).toMatchObject({ servers: 2, connected: 0, failed: 2 });
  } finally {
    await manager.close();
    await rm(dir, { recursive: true, force: true });
  }
});
