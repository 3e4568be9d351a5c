/**
 * Conversation MCP servers (conversation.create / conversation.update
 * mcpServers): their tools reach that conversation's model only, they
 * shadow a server-wide server of the same name there, they stop when the
 * conversation is deleted or the server stops, they start again when the
 * conversation is loaded after a restart, and a bad definition is refused
 * naming the field.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { AgentwireClient } from "../../clients/typescript/index.js";
import { startFakeOpenAI, type FakeOpenAI } from "../fake-openai/server.js";
import { newConversation } from "../harness/agent-fixture.js";
import { eventually } from "../harness/eventually.js";
import { rpcError } from "../harness/rpc-errors.js";
import { alive, startMcpAgent, stdioFixture } from "../fixtures/mcp/mcp-fixture.js";

let fake: FakeOpenAI;
let dataDir: string;
beforeAll(async () => {
  fake = await startFakeOpenAI({ apiKey: "test-key" });
  dataDir = await mkdtemp(join(tmpdir(), "agentwire-conv-mcp-"));
});
afterAll(async () => {
  await fake.close();
  await rm(dataDir, { recursive: true, force: true });
});

/** Has the model call mcp__fx__pid in the conversation and answers the pid the call returned. */
async function pidVia(client: AgentwireClient, conversationId: string, callId: string): Promise<number> {
  fake.enqueue({ kind: "reply", toolCalls: [{ id: callId, name: "mcp__fx__pid", args: "{}" }] }, { kind: "reply", text: ["ok"] });
  const { generationId } = await client.step({ conversationId, autoConfirm: true });
  await eventually(async () => (await client.conversation.get({ conversationId })).state.lastGeneration?.generationId === generationId, 10_000, "the step ended");
  const { records } = await client.conversation.get({ conversationId, includeRecords: true });
  const call = records!.find((r) => r.type === "tool_call" && r.toolCallId === callId) as { status: string; result: string };
  expect(call.status).toBe("completed");
  return Number(call.result);
}

const offeredTools = (i: number) => (fake.requests[i]!.tools ?? []).map((t: any) => t.function.name as string);

it("offers a conversation's MCP tools to its model only, shadowing the server-wide server of that name; they stop with the conversation and the server, and start again after a restart", async () => {
  // A server-wide "fx" whose tools the conversation's own "fx" hides: its `pid` would answer with another process.
  const config = { server: { dataDir }, mcpServers: { fx: stdioFixture() } };
  let agent = await startMcpAgent(config, undefined, fake);
  let pid = 0;
  let mine = "";
  try {
    await eventually(async () => (await agent.client.server.status()).mcp.connected === 1, 10_000, "the server-wide server connected");
    const first = fake.requests.length;
    fake.enqueue(
      { kind: "reply", toolCalls: [{ id: "call_1", name: "mcp__fx__pid", args: "{}" }] },
      { kind: "reply", text: ["done"] },
      { kind: "reply", text: ["other"] },
    );
    // Stepped at once: the first model call waits for the server's first connection attempt.
    const own = await newConversation(agent.client, { mcpServers: [{ name: "fx", ...stdioFixture() }, { name: "solo", ...stdioFixture() }] });
    mine = own.id;
    const { generationId } = await agent.client.step({ conversationId: own.id, autoConfirm: true });
    expect((await own.events.waitForEnd(generationId, 10_000)).method).toBe("generation_complete");
    pid = Number(own.events.of("tool_completed")[0].record.result);

    const other = await newConversation(agent.client);
    const step = await agent.client.step({ conversationId: other.id });
    await other.events.waitForEnd(step.generationId);

    const ownTools = offeredTools(first);
    expect(ownTools).toContain("mcp__fx__pid");
    expect(ownTools.filter((n) => n === "mcp__fx__pid")).toHaveLength(1);
    expect(ownTools).toContain("mcp__solo__pid");
    // The other conversation sees the server-wide fx, each tool once, and nothing of the first one's servers.
    const otherTools = offeredTools(first + 2);
    expect(otherTools.filter((n) => n === "mcp__fx__pid")).toHaveLength(1);
    expect(otherTools.filter((n) => n.startsWith("mcp__solo__"))).toEqual([]);
    const listed = await agent.client.mcp.list({ conversationId: own.id });
    expect(listed.servers.map((s) => `${s.name}:${s.origin}`)).toEqual(["fx:config", "fx:conversation", "solo:conversation"]);
    expect(listed.servers[1]).toMatchObject({ state: "connected", transport: "stdio" });
    expect((await agent.client.mcp.list()).servers.map((s) => s.origin)).toEqual(["config"]);
    expect((await agent.client.mcp.list({ conversationId: other.id })).servers).toHaveLength(1);
    expect(alive(pid)).toBe(true);

    // Stopped with the server: no process outlives it.
    await agent.close();
    await eventually(async () => !alive(pid), 5000, "the conversation's server stopped with agentwire");

    // Back after a restart once the conversation is loaded; the old process is not.
    agent = await startMcpAgent(config, undefined, fake);
    const again = await agent.client.mcp.list({ conversationId: mine });
    expect(again.servers[1]).toMatchObject({ name: "fx", origin: "conversation" });

    await agent.client.conversation.subscribe({ conversationId: mine });
    await agent.client.message.append({ conversationId: mine, role: "user", content: "once more" });
    const before = fake.requests.length;
    const second = await pidVia(agent.client, mine, "call_2");
    expect(offeredTools(before)).toContain("mcp__fx__pid");
    expect(second).not.toBe(pid);
    expect(alive(second)).toBe(true);

    // Stopped when the conversation is unloaded (nobody watches it and it is idle).
    await agent.client.conversation.unsubscribe({ conversationId: mine });
    expect(await agent.server.server.app.hub.unloadIdle(0, Date.now() + 3_600_000)).toBe(1);
    await eventually(async () => !alive(second), 5000, "stopped with the unload");

    // Loaded again (and its servers with it), then changed with conversation.update: a removed server stops.
    await agent.client.conversation.update({ conversationId: mine, mcpServers: [{ name: "fx", ...stdioFixture() }] });
    const third = await pidVia(agent.client, mine, "call_3");
    await agent.client.conversation.update({ conversationId: mine, mcpServers: [] });
    await eventually(async () => !alive(third), 5000, "removed by update");
    expect((await agent.client.mcp.list({ conversationId: mine })).servers).toHaveLength(1);

    // Deleted with its conversation.
    await agent.client.conversation.update({ conversationId: mine, mcpServers: [{ name: "fx", ...stdioFixture() }] });
    const fourth = await pidVia(agent.client, mine, "call_4");
    await agent.client.conversation.delete({ conversationId: mine });
    await eventually(async () => !alive(fourth), 5000, "stopped with its conversation");
  } finally {
    await agent.close();
  }
}, 40_000);

it("refuses a bad server definition with -32602 naming the field, and creates nothing", async () => {
  const agent = await startMcpAgent({}, undefined, fake);
  try {
    const cases: [unknown, string][] = [
      [[{ name: "bad name", command: "node" }], "\"mcpServers[0].name\""],
      [[{ name: "fx" }], "\"mcpServers[0]"],
      [[{ name: "fx", command: "node" }, { name: "fx", url: "http://127.0.0.1:1/mcp" }], "\"mcpServers[1].name\""],
      [Array.from({ length: 9 }, (_, i) => ({ name: `s${i}`, command: "node" })), "\"mcpServers\""],
    ];
    const before = (await agent.client.conversation.list()).data.length;
    for (const [mcpServers, path] of cases) {
      const error = await rpcError(agent.client.conversation.create({ mcpServers } as never));
      expect(error.code).toBe(-32602);
      expect(JSON.stringify(error.data)).toContain(path);
    }
    expect((await agent.client.conversation.list()).data.length).toBe(before);
  } finally {
    await agent.close();
  }
}, 20_000);
