/**
 * MCP elicitation: the client declares the capability; a server's
 * elicitation/create during a tool call becomes input_requested (source
 * mcp) on the conversation whose call triggered it, and the user's answer,
 * decline or cancel goes back to the server as its ElicitResult.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { ErrorCodes } from "../../protocol/index.js";
import { newConversation } from "../harness/agent-fixture.js";
import { eventually } from "../harness/eventually.js";
import { startMcpAgent, stdioFixture, type McpAgent } from "../fixtures/mcp/mcp-fixture.js";

let agent: McpAgent;

beforeAll(async () => {
  agent = await startMcpAgent({ mcpServers: { fx: stdioFixture() } });
  await eventually(async () => (await agent.client.server.status()).mcp.connected === 1, 15_000, "the MCP server connected");
}, 20_000);
afterAll(async () => {
  await agent?.close();
});

async function askThroughMcp() {
  agent.fake.enqueue({ kind: "reply", toolCalls: [{ id: "call_mcp_ask", name: "mcp__fx__ask", args: "{}" }] }, { kind: "reply", text: ["done"] });
  const { id, events } = await newConversation(agent.client);
  const { generationId } = await agent.client.step({ conversationId: id, autoConfirm: true });
  const asked = (await events.waitForMethod("input_requested", 10_000)).params;
  return { id, events, generationId, asked };
}

it("accept: the user's form answer goes back to the server, whose result the model reads", async () => {
  const { id, events, generationId, asked } = await askThroughMcp();
  expect(asked).toMatchObject({
    source: "mcp",
    server: "fx",
    toolCallId: "call_mcp_ask",
    question: "Which name should the report carry?",
    schema: { type: "object", properties: { name: { type: "string" }, copies: { type: "integer" } }, required: ["name"] },
  });
  expect((await agent.client.conversation.get({ conversationId: id })).state.pendingInputs).toHaveLength(1);
  const wrong = await agent.client.input.respond({ conversationId: id, requestId: asked.requestId, answer: { copies: 2 } }).catch((e) => e);
  expect(wrong.code).toBe(ErrorCodes.INVALID_PARAMS);
  expect(JSON.stringify(wrong.data)).toContain("answer.name");
  await agent.client.input.respond({ conversationId: id, requestId: asked.requestId, answer: { name: "Q3", copies: 2 } });
  await events.waitForEnd(generationId, 10_000);
  expect(events.of("input_resolved")[0]).toMatchObject({ requestId: asked.requestId, outcome: "answered" });
  expect(events.of("tool_completed")[0]!.record.result).toBe('elicitation: accept {"name":"Q3","copies":2}');
});

it("decline and cancel reach the server as such", async () => {
  const first = await askThroughMcp();
  await agent.client.input.respond({ conversationId: first.id, requestId: first.asked.requestId, action: "decline" });
  await first.events.waitForEnd(first.generationId, 10_000);
  expect(first.events.of("tool_completed")[0]!.record.result).toBe("elicitation: decline");

  const second = await askThroughMcp();
  await agent.client.input.respond({ conversationId: second.id, requestId: second.asked.requestId, action: "cancel" });
  await second.events.waitForEnd(second.generationId, 10_000);
  expect(second.events.of("input_resolved")[0]).toMatchObject({ outcome: "cancelled" });
  expect(second.events.of("tool_completed")[0]!.record.result).toBe("elicitation: cancel");
});

it("a session with no call that can ask declines the server's question", async () => {
  const { McpSession } = await import("../../src/mcp/mcp-session.js");
  const session = await McpSession.open(stdioFixture(), { baseEnv: () => ({ PATH: process.env.PATH ?? "" }), connectTimeoutMs: 10_000 });
  try {
    const result = await session.callTool("ask", {}, { signal: new AbortController().signal, timeoutMs: 10_000 });
    expect(result.content).toEqual([{ type: "text", text: "elicitation: decline" }]);
  } finally {
    await session.close();
  }
});
