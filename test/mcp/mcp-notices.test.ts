/**
 * An MCP server going down and coming back is told (issue 22): a
 * server-wide `notice` — mcp_server_down, then mcp_server_up once it is
 * connected again — to every initialized connection, subscribed to a
 * conversation or not, without conversationId or seq. A client that opted
 * out of `notice` gets none.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { EventRecorder } from "../harness/event-recorder.js";
import { eventually } from "../harness/eventually.js";
import { startMcpAgent, stdioFixture } from "../fixtures/mcp/mcp-fixture.js";

it("killing an MCP server gives mcp_server_down on every connection, and mcp_server_up when it is back", async () => {
  const dir = await mkdtemp(join(tmpdir(), "agentwire-mcp-notice-"));
  const pidFile = join(dir, "pid");
  const agent = await startMcpAgent({ mcpServers: { fx: stdioFixture({ FIXTURE_PID_FILE: pidFile }) } });
  try {
    await eventually(async () => (await agent.client.server.status()).mcp.connected === 1, 10_000, "connected");
    const other = await agent.server.connectInMemory();
    const quiet = await agent.server.connectInMemory({ capabilities: { notificationOptOut: ["notice"] } });
    const seen = [new EventRecorder(agent.client), new EventRecorder(other), new EventRecorder(quiet)];
    // One of them watches a conversation; server-wide notices do not depend on it.
    const { id } = await other.conversation.create({});
    await other.conversation.subscribe({ conversationId: id });

    process.kill(Number(await readFile(pidFile, "utf8")), "SIGKILL");
    const down = await seen[0]!.waitFor((e) => e.method === "notice" && e.params.code === "mcp_server_down", 10_000);
    expect(down.params).toMatchObject({ level: "warning", generationId: null, data: { server: "fx", error: expect.any(String), nextRetryMs: expect.any(Number) } });
    expect(down.params).not.toHaveProperty("conversationId");
    expect(down.params).not.toHaveProperty("seq");
    expect(down.params.message).toMatch(/MCP server "fx" is down/);

    const up = await seen[0]!.waitFor((e) => e.method === "notice" && e.params.code === "mcp_server_up", 10_000);
    expect(up.params).toMatchObject({ level: "info", data: { server: "fx", tools: expect.any(Number) } });
    expect((await agent.client.mcp.list()).servers[0]).toMatchObject({ state: "connected" });

    await eventually(async () => seen[1]!.of("notice").length === 2, 5000, "the other connection got both");
    expect(seen[1]!.of("notice").map((n) => n.code)).toEqual(["mcp_server_down", "mcp_server_up"]);
    expect(seen[0]!.of("notice").map((n) => n.code)).toEqual(["mcp_server_down", "mcp_server_up"]);
    expect(seen[2]!.of("notice")).toEqual([]);
  } finally {
    await agent.close();
    await rm(dir, { recursive: true, force: true });
  }
}, 20_000);
