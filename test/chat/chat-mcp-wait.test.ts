/**
 * A one-shot `agentwire chat` waits for its tools: the MCP servers of its
 * configuration finish their first connection attempt before the first step
 * (bounded by MCP_WAIT_MS), so the model's first request already offers
 * their tools; one that failed is reported on stderr and in --json.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "../fake-openai/server.js";
import { mcpProblems, waitForMcpServers } from "../../src/chat/mcp-wait.js";
import { startMcpAgent, stdioFixture } from "../fixtures/mcp/mcp-fixture.js";
import { killAllCli, runCli } from "../harness/cli-process.js";
import { shippedBundle } from "../harness/shipped-bundle.js";

let fake: FakeOpenAI;
let root: string;
beforeAll(async () => {
  fake = await startFakeOpenAI({ apiKey: "test-key" });
  root = await mkdtemp(join(tmpdir(), "agentwire-chat-mcp-"));
});
afterAll(async () => {
  await killAllCli();
  await fake.close();
  await rm(root, { recursive: true, force: true });
});

it("offers a slow-starting MCP server's tools on the first request, the call succeeds, and a failed server is reported", async () => {
  const config = join(root, "agentwire.json");
  await writeFile(
    config,
    JSON.stringify({
      mcpServers: {
        // Slow to start, as `npx -y some-server` is: the old chat stepped before it was connected.
        fx: stdioFixture({ FIXTURE_START_DELAY_MS: "700" }),
        broken: { command: "agentwire-no-such-mcp-server" },
      },
    }),
  );
  fake.enqueue({ kind: "reply", toolCalls: [{ id: "call_1", name: "mcp__fx__echo", args: '{"text":"hi"}' }] }, { kind: "reply", text: ["done"] });
  const env = { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: "test-key", AGENTWIRE_MODEL: "fake-model" };
  const chat = runCli(["chat", "use the tool", "--config", config, "--data-dir", join(root, "data"), "--yes", "--json"], env, shippedBundle(), root);
  const { code } = await chat.exited;
  expect(code).toBe(0);

  const offered = (fake.requests[0]!.tools ?? []).map((t: any) => t.function.name as string);
  expect(offered).toContain("mcp__fx__echo");
  const lines = chat.stdout().split("\n").filter(Boolean).map((l) => JSON.parse(l));
  const completed = lines.filter((l) => l.method === "tool_completed").map((l) => l.params.record);
  expect(completed).toMatchObject([{ toolName: "mcp__fx__echo", result: "echo: hi" }]);
  expect(lines.at(-1)).toMatchObject({ type: "end", exitCode: 0 });

  // The servers' states, a line of their own before the first step.
  const listed = lines.find((l) => l.type === "result" && l.method === "mcp.list");
  expect(listed.result.servers.map((s: any) => [s.name, s.state])).toEqual([
    ["fx", "connected"],
    ["broken", "failed"],
  ]);
  expect(lines.indexOf(listed)).toBeLessThan(lines.findIndex((l) => l.method === "step"));
  expect(chat.stderr()).toContain(
    'agentwire: MCP server "broken" failed: could not start "agentwire-no-such-mcp-server": command not found; its tools are not offered (it is retried in the background)',
  );
}, 60_000);

it("waits no longer than its bound: a server still connecting is reported and the chat goes on", async () => {
  const agent = await startMcpAgent({ mcpServers: { slow: stdioFixture({ FIXTURE_START_DELAY_MS: "5000" }) } });
  try {
    const servers = await waitForMcpServers(agent.client, { timeoutMs: 300 });
    expect(servers!.map((s) => [s.name, s.state])).toEqual([["slow", "connecting"]]);
    expect(mcpProblems(servers!, 300)).toEqual(['MCP server "slow" is still connecting after 0.3 s; going on without its tools']);
  } finally {
    await agent.close();
  }
}, 20_000);
