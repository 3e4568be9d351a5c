/**
 * A server started with `listen: false` (what a client command starts inside
 * itself): no socket at all, served through the in-memory link only; its
 * data dir says it is not shared; cluster mode, which needs an address, is
 * refused before anything opens.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import type { Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { connectInMemory } from "../../src/embed.js";
import { createLogger } from "../../src/logging/logger.js";
import { ConfigError, startServer } from "../../src/server.js";
import { testConfig } from "../harness/test-config.js";

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function dataDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "agentwire-no-listen-"));
  dirs.push(dir);
  return dir;
}

/** The net.Server handles this process holds: a listening socket is one. */
const listeningServers = () =>
  (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles().filter((handle) => (handle as Server).listening === true).length;

it("opens no socket, serves the in-memory link, and tells the data dir it is not shared", async () => {
  const dir = await dataDir();
  const before = listeningServers();
  const server = await startServer(testConfig({ server: { port: 0, dataDir: dir, logLevel: "silent" } }), { listen: false, log: createLogger("silent") });
  try {
    expect(listeningServers()).toBe(before);
    expect("url" in server).toBe(false);
    const client = await connectInMemory(server);
    const { id } = await client.conversation.create({ title: "in memory only" });
    expect((await client.conversation.get({ conversationId: id })).conversation.title).toBe("in memory only");
    expect(await client.server.status()).toMatchObject({ version: expect.any(String) });
    await client.close();
    expect(JSON.parse(await readFile(join(dir, "SERVER"), "utf8"))).toEqual({ pid: process.pid, shared: false });
  } finally {
    await server.close();
  }
  // The same configuration listening holds a socket: what the count above would have seen.
  const listening = await startServer(testConfig({ server: { port: 0, dataDir: await dataDir(), logLevel: "silent" } }), { log: createLogger("silent") });
  try {
    expect(listeningServers()).toBe(before + 1);
    expect(listening.url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
  } finally {
    await listening.close();
  }
});

it("refuses cluster mode, which needs an address, before it opens anything", async () => {
  const dir = await dataDir();
  const config = testConfig({ server: { port: 0, dataDir: dir, logLevel: "silent", redis: "redis://127.0.0.1:6379", store: "postgres://127.0.0.1:5432/test" } });
  await expect(startServer(config, { listen: false, log: createLogger("silent") })).rejects.toThrow(ConfigError);
  await expect(startServer(config, { listen: false, log: createLogger("silent") })).rejects.toThrow(/--redis needs a server that listens/);
  await expect(readFile(join(dir, "LOCK"))).rejects.toMatchObject({ code: "ENOENT" });
});
