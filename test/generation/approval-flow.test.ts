/**
 * The approval policy end to end: a scripted model calls test tools that
 * carry annotations, and what the client sees (tool_pending with
 * autoConfirmed / autoReason, tool_failed, tool_skipped) and what the model
 * is sent next (its tool list, the tool results) follow settings.approval,
 * settings.toolPolicy and settings.confirmTimeoutMs.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { AgentwireClient } from "../../clients/typescript/index.js";
import { OpenAIProvider } from "../../src/llm/openai-provider.js";
import { createBuiltinRegistry } from "../../src/tools/builtin-registry.js";
import type { Tool, ToolAnnotations } from "../../src/tools/tool.js";
import { startFakeOpenAI, type FakeChatBody, type FakeOpenAI } from "../fake-openai/server.js";
import { newConversation } from "../harness/agent-fixture.js";
import { EventRecorder } from "../harness/event-recorder.js";
import { expectInvalidParams } from "../harness/rpc-errors.js";
import { startTestServer, type TestServer } from "../harness/test-server.js";

/** Names of the tools that ran, in order. */
const runs: string[] = [];

function testTool(name: string, annotations?: ToolAnnotations): Tool {
  return {
    name,
    description: `Test tool ${name}.`,
    parameters: z.strictObject({}),
    ...(annotations ? { annotations } : {}),
    async run() {
      runs.push(name);
      return { success: true, output: `${name} ran` };
    },
  };
}

const TOOLS = [
  testTool("peek", { readOnlyHint: true }),
  testTool("wipe", { readOnlyHint: false, destructiveHint: true }),
  testTool("mcp__gh__list_issues", { readOnlyHint: true }),
  testTool("mcp__gh__create_issue"),
  testTool("mcp__gh__delete_repo", { destructiveHint: true }),
];

let fake: FakeOpenAI;
let server: TestServer;
let client: AgentwireClient;

/** A server with the test tools, on `dataDir` when given (restart tests). */
function startServer(dataDir?: string): Promise<TestServer> {
  return startTestServer(
    { model: "fake-model", ...(dataDir ? { server: { dataDir } } : {}) },
    {
      tools: createBuiltinRegistry(TOOLS),
      provider: async () => new OpenAIProvider({ apiKey: "test-key", baseURL: fake.url, retryBaseDelayMs: 10, retryMaxDelayMs: 20 }),
    },
  );
}

beforeAll(async () => {
  fake = await startFakeOpenAI({ apiKey: "test-key" });
  server = await startServer();
  client = await server.connectInMemory();
});
afterAll(async () => {
  await server?.close();
  await fake?.close();
});
afterEach(() => {
  const rejected = [...fake.rejected];
  fake.reset();
  runs.length = 0;
  expect(rejected).toEqual([]);
});

const call = (id: string, name: string) => ({ id, name, args: "{}" });
/** The model calls these tools, then answers "done". */
const script = (...calls: { id: string; name: string; args: string }[]) =>
  fake.enqueue({ kind: "reply", toolCalls: calls }, { kind: "reply", text: ["done"] });

const offeredTools = (request: FakeChatBody) => (request.tools ?? []).map((t: any) => t.function.name).sort();
/** The tool results the model was sent, by call id. */
const toolResults = (request: FakeChatBody) =>
  Object.fromEntries(request.messages.filter((m: any) => m.role === "tool").map((m: any) => [m.tool_call_id, m.content]));
const pendingOf = (events: EventRecorder, toolCallId: string) => events.of("tool_pending").find((e) => e.toolCallId === toolCallId)!;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function stepToEnd(id: string, events: EventRecorder, autoConfirm?: number) {
  const { generationId } = await client.step({ conversationId: id, ...(autoConfirm !== undefined ? { autoConfirm } : {}) });
  const end = await events.waitForEnd(generationId);
  expect(end.method).toBe("generation_complete");
  return generationId;
}

describe("settings.approval", () => {
  it("ask (the default): every call waits for tool.confirm, read-only or not", async () => {
    script(call("c1", "peek"));
    const { id, events } = await newConversation(client);
    expect((await client.conversation.get({ conversationId: id })).conversation.settings).toMatchObject({
      approval: "ask",
      toolPolicy: {},
      confirmTimeoutMs: null,
    });
    const { generationId } = await client.step({ conversationId: id });
    await events.waitForMethod("tool_pending");
    expect(pendingOf(events, "c1")).toMatchObject({ autoConfirmed: false });
    expect(pendingOf(events, "c1")).not.toHaveProperty("autoReason");
    expect(offeredTools(fake.requests[0]!)).toEqual(TOOLS.map((t) => t.name).sort());
    await sleep(50);
    expect(runs).toEqual([]);
    expect((await client.conversation.get({ conversationId: id })).state.pendingTools.map((p) => p.toolCallId)).toEqual(["c1"]);
    await client.tool.confirm({ conversationId: id, toolCallId: "c1", action: "confirm" });
    expect((await events.waitForEnd(generationId)).method).toBe("generation_complete");
    expect(runs).toEqual(["peek"]);
  });

  it("auto-read-only: the read-only tool runs without asking, the destructive one and the unannotated one wait", async () => {
    script(call("c1", "peek"), call("c2", "wipe"), call("c3", "mcp__gh__create_issue"));
    const { id, events } = await newConversation(client, { settings: { approval: "auto-read-only" } });
    const { generationId } = await client.step({ conversationId: id });
    await events.waitFor((e) => e.method === "tool_completed" && e.params.record.toolCallId === "c1");
    expect(pendingOf(events, "c1")).toMatchObject({ autoConfirmed: true, autoReason: "policy" });
    expect(pendingOf(events, "c2")).toMatchObject({ autoConfirmed: false });
    expect(pendingOf(events, "c3")).toMatchObject({ autoConfirmed: false });
    const state = (await client.conversation.get({ conversationId: id })).state;
    expect(state.pendingTools.map((p) => p.toolCallId)).toEqual(["c2", "c3"]);
    expect(runs).toEqual(["peek"]);
    await client.tool.confirm({ conversationId: id, toolCallId: "c2", action: "skip" });
    await client.tool.confirm({ conversationId: id, toolCallId: "c3", action: "skip" });
    expect((await events.waitForEnd(generationId)).method).toBe("generation_complete");
    expect(runs).toEqual(["peek"]);
    const results = toolResults(fake.requests[1]!);
    expect(results.c1).toBe("peek ran");
    expect(results.c2).toMatch(/declined/);
  });

  it("auto: every call runs without asking", async () => {
    script(call("c1", "peek"), call("c2", "wipe"), call("c3", "mcp__gh__create_issue"));
    const { id, events } = await newConversation(client, { settings: { approval: "auto" } });
    await stepToEnd(id, events);
    expect(events.of("tool_pending").map((p) => [p.autoConfirmed, p.autoReason])).toEqual([
      [true, "policy"],
      [true, "policy"],
      [true, "policy"],
    ]);
    expect(runs).toEqual(["peek", "wipe", "mcp__gh__create_issue"]);
  });

  it("the auto-confirm budget is consulted after the policy, and a policy run does not spend it", async () => {
    script(call("c1", "peek"), call("c2", "wipe"), call("c3", "wipe"));
    const { id, events } = await newConversation(client, { settings: { approval: "auto-read-only" } });
    const { generationId } = await client.step({ conversationId: id, autoConfirm: 1 });
    await events.waitFor((e) => e.method === "tool_completed" && e.params.record.toolCallId === "c2");
    expect(events.of("tool_pending").map((p) => [p.toolCallId, p.autoConfirmed, p.autoReason])).toEqual([
      ["c1", true, "policy"],
      ["c2", true, "budget"],
      ["c3", false, undefined],
    ]);
    await client.tool.confirm({ conversationId: id, toolCallId: "c3", action: "skip" });
    expect((await events.waitForEnd(generationId)).method).toBe("generation_complete");
    expect(runs).toEqual(["peek", "wipe"]);
  });

  it("conversation.update changes the policy for the next step", async () => {
    script(call("c1", "wipe"));
    const { id, events } = await newConversation(client);
    const updated = await client.conversation.update({ conversationId: id, settings: { approval: "auto" } });
    expect(updated.settings).toMatchObject({ approval: "auto", toolPolicy: {}, maxIterations: 20 });
    await stepToEnd(id, events);
    expect(pendingOf(events, "c1")).toMatchObject({ autoConfirmed: true, autoReason: "policy" });
    expect(runs).toEqual(["wipe"]);
  });
});

describe("settings.toolPolicy", () => {
  const toolPolicy = { "mcp__gh__*": "always", "mcp__gh__delete_*": "never", wipe: "never", peek: "ask" } as const;

  it("never: the tool is not offered; a call to it anyway fails at once with the policy message and is not run", async () => {
    script(call("c1", "wipe"), call("c2", "mcp__gh__delete_repo"), call("c3", "peek"));
    const { id, events } = await newConversation(client, { settings: { approval: "auto", toolPolicy } });
    const { generationId } = await client.step({ conversationId: id });
    await events.waitForMethod("tool_pending");
    expect(offeredTools(fake.requests[0]!)).toEqual(["mcp__gh__create_issue", "mcp__gh__list_issues", "peek"]);
    // Both denied calls failed when stored, before the allowed one was offered; neither was offered.
    expect(events.flow().filter((m) => m.startsWith("tool_"))).toEqual(["tool_failed", "tool_failed", "tool_pending"]);
    const failed = events.of("tool_failed").map((e) => e.record);
    expect(failed.map((r) => [r.toolCallId, r.status, r.success])).toEqual([
      ["c1", "failed", false],
      ["c2", "failed", false],
    ]);
    expect(failed[0]!.result).toMatch(/"wipe" is not allowed by this conversation's policy/);
    // "ask" beats approval "auto" for peek.
    expect(pendingOf(events, "c3")).toMatchObject({ autoConfirmed: false });
    await client.tool.confirm({ conversationId: id, toolCallId: "c3", action: "confirm" });
    expect((await events.waitForEnd(generationId)).method).toBe("generation_complete");
    expect(runs).toEqual(["peek"]);
    const results = toolResults(fake.requests[1]!);
    expect(results.c1).toMatch(/not allowed by this conversation's policy/);
    expect(results.c2).toMatch(/"mcp__gh__delete_repo" is not allowed/);
    expect(offeredTools(fake.requests[1]!)).toEqual(["mcp__gh__create_issue", "mcp__gh__list_issues", "peek"]);
  });

  it("always (by wildcard) runs without asking under approval ask; the longer never-prefix still wins for its tools", async () => {
    script(call("c1", "mcp__gh__create_issue"), call("c2", "mcp__gh__list_issues"), call("c3", "mcp__gh__delete_repo"));
    const { id, events } = await newConversation(client, { settings: { toolPolicy } });
    await stepToEnd(id, events);
    expect(events.of("tool_pending").map((p) => [p.toolCallId, p.autoReason])).toEqual([
      ["c1", "policy"],
      ["c2", "policy"],
    ]);
    expect(events.of("tool_failed").map((e) => e.record.toolCallId)).toEqual(["c3"]);
    expect(runs).toEqual(["mcp__gh__create_issue", "mcp__gh__list_issues"]);
  });

  it("an unknown tool's message lists only the tools the policy allows", async () => {
    script(call("c1", "nope"));
    const { id, events } = await newConversation(client, { settings: { toolPolicy: { "*": "never", peek: "ask" } } });
    await stepToEnd(id, events);
    expect(offeredTools(fake.requests[0]!)).toEqual(["peek"]);
    expect(events.of("tool_failed")[0]!.record.result).toBe('Unknown tool "nope". Available tools: peek.');
  });
});

describe("settings.confirmTimeoutMs", () => {
  it("skips a call nobody decided with reason timeout, and the generation goes on with the model told", async () => {
    script(call("c1", "wipe"));
    const { id, events } = await newConversation(client, { settings: { confirmTimeoutMs: 200 } });
    const started = Date.now();
    const generationId = await stepToEnd(id, events);
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    const [skipped] = events.of("tool_skipped");
    expect(skipped).toMatchObject({ generationId, reason: "timeout", record: { toolCallId: "c1", status: "skipped", success: false } });
    expect(skipped!.record.result).toMatch(/within 200 ms \(settings\.confirmTimeoutMs\)/);
    expect(runs).toEqual([]);
    expect(toolResults(fake.requests[1]!).c1).toBe(skipped!.record.result);
    const got = await client.conversation.get({ conversationId: id, includeRecords: true });
    expect(got.records!.find((r) => r.type === "tool_call")).toMatchObject({ status: "skipped", result: skipped!.record.result });
    expect(got.state.pendingTools).toEqual([]);
  });

  it("a decision before the timeout wins: the call runs and no timeout follows", async () => {
    script(call("c1", "wipe"));
    const { id, events } = await newConversation(client, { settings: { confirmTimeoutMs: 250 } });
    const { generationId } = await client.step({ conversationId: id });
    await events.waitForMethod("tool_pending");
    await client.tool.confirm({ conversationId: id, toolCallId: "c1", action: "confirm" });
    expect((await events.waitForEnd(generationId)).method).toBe("generation_complete");
    await sleep(350);
    expect(events.of("tool_skipped")).toEqual([]);
    expect(runs).toEqual(["wipe"]);
  });

  it("an interrupt settles the call as interrupted, and its timer never fires", async () => {
    script(call("c1", "wipe"));
    const { id, events } = await newConversation(client, { settings: { confirmTimeoutMs: 200 } });
    await client.step({ conversationId: id });
    await events.waitForMethod("tool_pending");
    await client.conversation.update({ conversationId: id, settings: { confirmTimeoutMs: null } }); // does not touch the offered call
    await client.interrupt({ conversationId: id });
    await sleep(300);
    expect(events.of("tool_skipped").map((e) => e.reason)).toEqual(["interrupted"]);
    expect(events.of("interrupted")).toHaveLength(1);
  });

  it("a call offered by policy or budget gets no timer", async () => {
    script(call("c1", "peek"), call("c2", "wipe"));
    const { id, events } = await newConversation(client, { settings: { approval: "auto-read-only", confirmTimeoutMs: 100 } });
    await stepToEnd(id, events, 1);
    expect(events.of("tool_skipped")).toEqual([]);
    expect(runs).toEqual(["peek", "wipe"]);
  });
});

describe("across a restart", () => {
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "agentwire-approval-"));
  });
  afterEach(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it("a call kept pending by a stop is offered again with a fresh timer; a conversation stored without the approval settings loads with the defaults", async () => {
    const first = await startServer(dataDir);
    let second: TestServer | undefined;
    try {
      const c1 = await first.connectInMemory();
      fake.enqueue({ kind: "reply", toolCalls: [call("c1", "wipe")] });
      const { id, events } = await newConversation(c1, { settings: { confirmTimeoutMs: 300 } });
      await c1.step({ conversationId: id });
      await events.waitForMethod("tool_pending");
      await first.stop();
      expect(events.of("tool_skipped")).toEqual([]);

      // As a conversation stored before these settings existed: its meta.json lacks them.
      const metaPath = join(dataDir, "conversations", id, "meta.json");
      const meta = JSON.parse(await readFile(metaPath, "utf8"));
      expect(meta.conversation.settings).toMatchObject({ approval: "ask", confirmTimeoutMs: 300 });
      delete meta.conversation.settings.approval;
      delete meta.conversation.settings.toolPolicy;
      meta.conversation.settings.confirmTimeoutMs = 300; // kept: the timer must start again
      await writeFile(metaPath, JSON.stringify(meta));
      await sleep(350); // longer than the timeout: only a fresh timer leaves the call waiting at first

      second = await startServer(dataDir);
      const c2 = await second.connectInMemory();
      const got = await c2.conversation.get({ conversationId: id });
      expect(got.conversation.settings).not.toHaveProperty("approval");
      expect(got.state.pendingTools.map((p) => p.toolCallId)).toEqual(["c1"]);

      fake.enqueue({ kind: "reply", text: ["done"] });
      const again = new EventRecorder(c2, id);
      await c2.conversation.subscribe({ conversationId: id });
      const offeredAt = Date.now();
      const { generationId } = await c2.step({ conversationId: id });
      await again.waitForMethod("tool_pending");
      expect(again.of("tool_pending")[0]).toMatchObject({ toolCallId: "c1", autoConfirmed: false });
      expect((await again.waitForEnd(generationId)).method).toBe("generation_complete");
      expect(Date.now() - offeredAt).toBeGreaterThanOrEqual(290);
      expect(again.of("tool_skipped").map((e) => e.reason)).toEqual(["timeout"]);
      expect(runs).toEqual([]);
    } finally {
      await second?.stop();
      await first.stop();
    }
  });

  it("a stored pending call of a tool now denied fails without being offered, and the model is told", async () => {
    const first = await startServer(dataDir);
    let second: TestServer | undefined;
    try {
      const c1 = await first.connectInMemory();
      fake.enqueue({ kind: "reply", toolCalls: [call("c1", "wipe")] });
      const { id, events } = await newConversation(c1);
      await c1.step({ conversationId: id });
      await events.waitForMethod("tool_pending");
      await first.stop();

      second = await startServer(dataDir);
      const c2 = await second.connectInMemory();
      await c2.conversation.update({ conversationId: id, settings: { toolPolicy: { wipe: "never" } } });
      const again = new EventRecorder(c2, id);
      await c2.conversation.subscribe({ conversationId: id });
      fake.enqueue({ kind: "reply", text: ["done"] });
      const { generationId } = await c2.step({ conversationId: id });
      expect((await again.waitForEnd(generationId)).method).toBe("generation_complete");
      expect(again.of("tool_pending")).toEqual([]);
      expect(again.of("tool_failed").map((e) => [e.record.toolCallId, e.record.status])).toEqual([["c1", "failed"]]);
      expect(toolResults(fake.requests.at(-1)!).c1).toMatch(/"wipe" is not allowed by this conversation's policy/);
      expect(offeredTools(fake.requests.at(-1)!)).not.toContain("wipe");
      expect(runs).toEqual([]);
    } finally {
      await second?.stop();
      await first.stop();
    }
  });
});

describe("invalid settings", () => {
  it("are refused with -32602 naming the field, on create and on update", async () => {
    await expectInvalidParams(client.conversation.create({ settings: { approval: "sometimes" as never } }), "settings.approval");
    await expectInvalidParams(client.conversation.create({ settings: { confirmTimeoutMs: 5 } }), "settings.confirmTimeoutMs");
    await expectInvalidParams(
      client.conversation.create({ settings: { confirmTimeoutMs: "1000" as never } }),
      "settings.confirmTimeoutMs",
    );
    const { id } = await client.conversation.create({});
    await expectInvalidParams(
      client.conversation.update({ conversationId: id, settings: { toolPolicy: { shell: "maybe" as never } } }),
      "settings.toolPolicy.shell",
    );
    const badKey = await expectInvalidParams(
      client.conversation.update({ conversationId: id, settings: { toolPolicy: { "mcp__*__x": "never" } } }),
      "settings.toolPolicy.mcp__*__x",
    );
    expect(badKey.message).toContain("not a tool name");
    await expectInvalidParams(client.conversation.update({ conversationId: id, settings: { toolPolicy: [] as never } }), "settings.toolPolicy");
    expect((await client.conversation.get({ conversationId: id })).conversation.settings).toMatchObject({ approval: "ask", toolPolicy: {} });
  });
});
