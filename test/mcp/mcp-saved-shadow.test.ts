/**
 * A server saved by mcp.add that the configuration file also declares (what
 * `agentwire mcp add` leaves when it reaches a running server: the file
 * written, mcp.add on the server): at the next start the file's is used and
 * the saved copy is dropped, so removing it from the file (`agentwire mcp
 * remove`) does not bring the saved one back.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "../fake-openai/server.js";
import { startMcpAgent, stdioFixture } from "../fixtures/mcp/mcp-fixture.js";

let fake: FakeOpenAI;
let dataDir: string;
beforeAll(async () => {
  fake = await startFakeOpenAI({ apiKey: "test-key" });
  dataDir = await mkdtemp(join(tmpdir(), "agentwire-mcp-shadow-"));
});
afterAll(async () => {
  await fake.close();
  await rm(dataDir, { recursive: true, force: true });
});

const names = async (agent: Awaited<ReturnType<typeof startMcpAgent>>) => (await agent.client.mcp.list()).servers.map((s) => [s.name, s.origin]);

it("a saved server the configuration file also declares is dropped from the data dir at start, and stays gone once the file drops it", async () => {
  const first = await startMcpAgent({ server: { dataDir } }, undefined, fake);
  try {
    await first.client.mcp.add({ name: "fx", server: stdioFixture() });
    await first.client.mcp.add({ name: "other", server: { ...stdioFixture(), disabled: true } });
  } finally {
    await first.server.stop();
  }
  const second = await startMcpAgent({ server: { dataDir }, mcpServers: { fx: stdioFixture() } }, undefined, fake);
  try {
    expect(await names(second)).toEqual([["fx", "config"], ["other", "added"]]);
    expect(Object.keys(JSON.parse(await readFile(join(dataDir, "mcp-servers.json"), "utf8")).mcpServers)).toEqual(["other"]);
  } finally {
    await second.server.stop();
  }
  const third = await startMcpAgent({ server: { dataDir } }, undefined, fake);
  try {
    expect(await names(third)).toEqual([["other", "added"]]);
  } finally {
    await third.server.stop();
  }
}, 30_000);
