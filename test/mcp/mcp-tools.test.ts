/**
 * MCP tools end to end: a real MCP server (the fixture, over stdio, and the
 * published server-everything) declared in the configuration, its tools
 * offered to the model as mcp__<server>__<tool>, called by the scripted fake
 * model through the protocol, with results, failures, interrupts and time
 * limits as a client and the model see them.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { newConversation } from "../harness/agent-fixture.js";
import { eventually } from "../harness/eventually.js";
import { everythingServer, startMcpAgent, stdioFixture, type McpAgent } from "../fixtures/mcp/mcp-fixture.js";

let agent: McpAgent;
const markers = mkdtempSync(join(tmpdir(), "agentwire-mcp-markers-"));

beforeAll(async () => {
  process.env.MCP_TEST_SECRET_KEY = "must-not-leak";
  agent = await startMcpAgent({
    mcpServers: {
      fx: { ...stdioFixture({ FIXTURE_MARKER_DIR: markers, GIVEN_BY_DEFINITION: "yes" }) },
      everything: everythingServer(),
    },
  });
  await eventually(async () => (await agent.client.server.status()).mcp.connected === 2, 15_000, "both MCP servers connected");
}, 20_000);
afterAll(async () => {
  await agent?.close();
  rmSync(markers, { recursive: true, force: true });
  delete process.env.MCP_TEST_SECRET_KEY;
});

/** Script one call of `name` with `args`, then a closing text reply; run the step auto-confirmed and return what ended the tool call. */
async function callTool(name: string, args: unknown, settings: { toolTimeoutMs?: number } = {}) {
  agent.fake.enqueue({ kind: "reply", toolCalls: [{ id: "call_1", name, args: JSON.stringify(args) }] }, { kind: "reply", text: ["done"] });
  const { id, events } = await newConversation(agent.client, { settings });
  const before = agent.fake.requests.length;
  const { generationId } = await agent.client.step({ conversationId: id, autoConfirm: true });
  const end = await events.waitForEnd(generationId, 10_000);
  const ended = events.events.find((e) => ["tool_completed", "tool_failed"].includes(e.method));
  const next = agent.fake.requests[before + 1];
  return { end, ended, record: ended?.params.record, toolMessage: next?.messages.find((m: any) => m.role === "tool"), events };
}

it("offers the servers' tools in tools.list and to the model as mcp__<server>__<tool>, with their schemas and annotations", async () => {
  const { tools } = await agent.client.tools.list();
  const byName = new Map(tools.map((t) => [t.name, t]));
  expect(byName.get("shell")?.source).toBe("builtin");
  const echo = byName.get("mcp__fx__echo")!;
  expect(echo).toMatchObject({ source: "mcp", description: "Echo the text back." });
  expect(echo.parameters).toMatchObject({ type: "object", properties: { text: { type: "string" } }, required: ["text"] });
  expect(echo.parameters).not.toHaveProperty("$schema");
  expect(byName.get("mcp__fx__peek")?.annotations).toEqual({ readOnlyHint: true, destructiveHint: false });
  expect(byName.get("mcp__everything__echo")?.annotations).toMatchObject({ readOnlyHint: true });

  agent.fake.enqueue({ kind: "reply", text: ["hi"] });
  const { id, events } = await newConversation(agent.client);
  const { generationId } = await agent.client.step({ conversationId: id });
  await events.waitForEnd(generationId);
  const offered = agent.fake.requests.at(-1)!.tools!.map((t: any) => t.function.name);
  expect(offered).toEqual(expect.arrayContaining(["shell", "mcp__fx__echo", "mcp__fx__slow", "mcp__everything__echo"]));
  const offeredEcho = agent.fake.requests.at(-1)!.tools!.find((t: any) => t.function.name === "mcp__fx__echo");
  expect(offeredEcho.function.parameters.required).toEqual(["text"]);
});

it("runs a call end to end: tool_executing, tool_completed with the server's text, which the model reads next", async () => {
  const { ended, record, toolMessage, events } = await callTool("mcp__fx__echo", { text: "hello mcp" });
  expect(events.events.map((e) => e.method)).toContain("tool_executing");
  expect(ended?.method).toBe("tool_completed");
  expect(record.result).toBe("echo: hello mcp");
  expect(toolMessage.content).toBe("echo: hello mcp");
});

it("calls server-everything's echo over stdio", async () => {
  const { ended, record } = await callTool("mcp__everything__echo", { message: "from agentwire" });
  expect(ended?.method).toBe("tool_completed");
  expect(record.result).toBe("Echo: from agentwire");
});

it("fails the call (tool_failed) when the server answers isError, with its text for the model", async () => {
  const { ended, record, toolMessage } = await callTool("mcp__fx__fail", {});
  expect(ended?.method).toBe("tool_failed");
  expect(record.result).toBe("it failed on purpose");
  expect(toolMessage.content).toContain("it failed on purpose");
});

it("refuses arguments that do not match the server's schema before calling it", async () => {
  const { ended, record } = await callTool("mcp__fx__echo", { text: 42 });
  expect(ended?.method).toBe("tool_failed");
  expect(record.result).toMatch(/Invalid arguments:\ntext: .*expected string/);
});

it("gives structured content as JSON, summarises images and resource links in a line, and caps long output", async () => {
  const structured = await callTool("mcp__fx__structured", {});
  expect(structured.ended?.method).toBe("tool_completed");
  expect(JSON.parse(structured.record.result)).toEqual({ answer: 42, items: ["a", "b"] });

  const media = await callTool("mcp__fx__media", {});
  expect(media.record.result).toBe(
    "here is a picture\n[image: image/png, 16 bytes, not shown]\n[resource link: file:///tmp/report.txt (report.txt), text/plain]",
  );

  const big = await callTool("mcp__fx__big", {});
  expect(big.ended?.method).toBe("tool_completed");
  expect(Buffer.byteLength(big.record.result)).toBeLessThan(70 * 1024);
  expect(big.record.result).toMatch(/\[… \d+ bytes cut …\]/);
});

it("starts stdio servers with the scrubbed tool environment plus the definition's env", async () => {
  const secret = await callTool("mcp__fx__env", { name: "MCP_TEST_SECRET_KEY" });
  expect(secret.record.result).toBe("MCP_TEST_SECRET_KEY=<unset>");
  const given = await callTool("mcp__fx__env", { name: "GIVEN_BY_DEFINITION" });
  expect(given.record.result).toBe("GIVEN_BY_DEFINITION=yes");
});

it("interrupt cancels the call in flight: the server sees notifications/cancelled", async () => {
  agent.fake.enqueue({ kind: "reply", toolCalls: [{ id: "call_1", name: "mcp__fx__slow", args: JSON.stringify({ ms: 20_000, id: "interrupt" }) }] });
  const { id, events } = await newConversation(agent.client);
  const { generationId } = await agent.client.step({ conversationId: id, autoConfirm: true });
  await events.waitForMethod("tool_executing");
  // tool_executing is announced before the request leaves: wait until the server has it.
  await eventually(() => existsSync(join(markers, "started-interrupt")), 3000, "the server got the call");
  const started = Date.now();
  await agent.client.interrupt({ conversationId: id });
  expect((await events.waitForEnd(generationId)).method).toBe("interrupted");
  expect(Date.now() - started).toBeLessThan(1000);
  const failed = events.of("tool_failed")[0];
  expect(failed.record.result).toContain("interrupted");
  await eventually(() => existsSync(join(markers, "cancelled-interrupt")), 3000, "the server saw the cancellation");
});

it("applies the conversation's toolTimeoutMs: the call fails and the server is told to cancel", async () => {
  const started = Date.now();
  const { ended, record } = await callTool("mcp__fx__slow", { ms: 20_000, id: "timeout" }, { toolTimeoutMs: 300 });
  expect(ended?.method).toBe("tool_failed");
  expect(record.result).toBe("[timed out after 300 ms; the MCP server was asked to cancel the call]");
  expect(Date.now() - started).toBeLessThan(5000);
  await eventually(() => existsSync(join(markers, "cancelled-timeout")), 3000, "the server saw the cancellation");
  expect(readFileSync(join(markers, "cancelled-timeout"), "utf8")).toMatch(/timed out/i);
});

it("follows tools/list_changed: a tool the server adds at run time joins tools.list", async () => {
  expect((await agent.client.tools.list()).tools.map((t) => t.name)).not.toContain("mcp__fx__extra");
  const { ended } = await callTool("mcp__fx__grow", {});
  expect(ended?.method).toBe("tool_completed");
  await eventually(async () => (await agent.client.tools.list()).tools.some((t) => t.name === "mcp__fx__extra"), 3000, "extra tool listed");
  const extra = await callTool("mcp__fx__extra", {});
  expect(extra.record.result).toBe("extra!");
});
