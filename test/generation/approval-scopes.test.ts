/**
 * Remembered approvals end to end (tool.confirm `remember`) and the skip
 * reason (`message`): one server with a stand-in `shell` tool (it records the
 * command instead of running it) and the fake model endpoint.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { AgentwireClient } from "../../clients/typescript/index.js";
import { OpenAIProvider } from "../../src/llm/openai-provider.js";
import { createBuiltinRegistry } from "../../src/tools/builtin-registry.js";
import type { Tool } from "../../src/tools/tool.js";
import { startFakeOpenAI, type FakeChatBody, type FakeOpenAI } from "../fake-openai/server.js";
import { newConversation } from "../harness/agent-fixture.js";
import type { EventRecorder } from "../harness/event-recorder.js";
import { expectInvalidParams } from "../harness/rpc-errors.js";
import { startTestServer, type TestServer } from "../harness/test-server.js";
import { readWorkspaceApprovals } from "../../src/generation/workspace-approvals.js";

/** What ran, in order: shell commands, or tool names. */
const runs: string[] = [];

const shell: Tool = {
  name: "shell",
  description: "Stand-in shell.",
  parameters: z.strictObject({ command: z.string() }),
  async run(args) {
    runs.push((args as { command: string }).command);
    return { success: true, output: "ok" };
  },
};
const peek: Tool = {
  name: "peek",
  description: "Test tool.",
  parameters: z.strictObject({}),
  async run() {
    runs.push("peek");
    return { success: true, output: "peeked" };
  },
};

let fake: FakeOpenAI;
/** The user's trust list lives under $XDG_DATA_HOME: a temporary one for this file. */
let dataHome: string;
const savedDataHome = process.env.XDG_DATA_HOME;
let server: TestServer;
let client: AgentwireClient;
let workspace: string;

beforeAll(async () => {
  dataHome = await mkdtemp(join(tmpdir(), "aw-scopes-home-"));
  process.env.XDG_DATA_HOME = dataHome;
  fake = await startFakeOpenAI({ apiKey: "test-key" });
  server = await startTestServer(
    { model: "fake-model" },
    {
      tools: createBuiltinRegistry([shell, peek]),
      provider: async () => new OpenAIProvider({ apiKey: "test-key", baseURL: fake.url, retryBaseDelayMs: 10, retryMaxDelayMs: 20 }),
    },
  );
  client = await server.connectInMemory();
});
afterAll(async () => {
  await server?.close();
  await fake?.close();
  process.env.XDG_DATA_HOME = savedDataHome;
  await rm(dataHome, { recursive: true, force: true });
});
afterEach(async () => {
  const rejected = [...fake.rejected];
  fake.reset();
  runs.length = 0;
  if (workspace) await rm(workspace, { recursive: true, force: true });
  expect(rejected).toEqual([]);
});

async function newWorkspace(): Promise<string> {
  workspace = await mkdtemp(join(tmpdir(), "aw-scopes-"));
  return workspace;
}

const sh = (id: string, command: string) => ({ id, name: "shell", args: JSON.stringify({ command }) });
/** The model calls these tools, then answers "done". */
const script = (...calls: { id: string; name: string; args: string }[]) =>
  fake.enqueue({ kind: "reply", toolCalls: calls }, { kind: "reply", text: ["done"] });
const pendingOf = (events: EventRecorder, toolCallId: string) => events.waitFor((e) => e.method === "tool_pending" && e.params.toolCallId === toolCallId);
const toolResults = (request: FakeChatBody) =>
  Object.fromEntries(request.messages.filter((m: any) => m.role === "tool").map((m: any) => [m.tool_call_id, m.content]));

describe("remember: conversation", () => {
  it("shows the rule first, stores it in the settings, then approves the same prefix only: another prefix and a compound command still ask", async () => {
    script(sh("c1", "git status"));
    const { id, events } = await newConversation(client);
    const first = await client.step({ conversationId: id });
    const pending = (await pendingOf(events, "c1")).params;
    expect(pending).toMatchObject({ autoConfirmed: false, rememberAs: { tool: "shell", prefix: "git status" } });
    // Shown before anything is stored (and in the state, for a client that connects now).
    const before = await client.conversation.get({ conversationId: id });
    expect(before.conversation.settings.approvalRules ?? []).toEqual([]);
    expect(before.state.pendingTools[0]!.rememberAs).toEqual({ tool: "shell", prefix: "git status" });
    await client.tool.confirm({ conversationId: id, toolCallId: "c1", action: "confirm", remember: "conversation" });
    expect((await events.waitForEnd(first.generationId)).method).toBe("generation_complete");
    const settings = (await client.conversation.get({ conversationId: id })).conversation.settings;
    expect(settings.approvalRules).toEqual([{ tool: "shell", prefix: "git status" }]);
    expect(events.of("conversation_updated").at(-1)!.conversation.settings.approvalRules).toEqual([{ tool: "shell", prefix: "git status" }]);

    script(sh("c2", "git status --short"), sh("c3", "git push --force"), sh("c4", "git status && rm -rf build"), sh("c5", "git status | sh"));
    const second = await client.step({ conversationId: id });
    for (const c of ["c3", "c4", "c5"]) await pendingOf(events, c);
    expect((await pendingOf(events, "c2")).params).toMatchObject({ autoConfirmed: true, autoReason: "rule" });
    expect((await pendingOf(events, "c3")).params).toMatchObject({ autoConfirmed: false, rememberAs: { tool: "shell", prefix: "git push" } });
    for (const c of ["c4", "c5"]) {
      const p = (await pendingOf(events, c)).params;
      expect(p.autoConfirmed).toBe(false);
      expect(p).not.toHaveProperty("rememberAs"); // a compound command has no prefix to remember
    }
    // Remembering a compound command is refused on `remember`, and the call stays pending.
    await expectInvalidParams(client.tool.confirm({ conversationId: id, toolCallId: "c4", action: "confirm", remember: "conversation" }), "remember");
    for (const c of ["c3", "c4", "c5"]) await client.tool.confirm({ conversationId: id, toolCallId: c, action: "skip" });
    expect((await events.waitForEnd(second.generationId)).method).toBe("generation_complete");
    expect(runs).toEqual(["git status", "git status --short"]);
  });

  it("a rule for another tool is by name; calls still waiting in the same round that it matches run at once", async () => {
    script({ id: "p1", name: "peek", args: "{}" }, { id: "p2", name: "peek", args: "{}" }, sh("s1", "ls"));
    const { id, events } = await newConversation(client);
    const { generationId } = await client.step({ conversationId: id });
    await pendingOf(events, "s1");
    expect((await pendingOf(events, "p1")).params.rememberAs).toEqual({ tool: "peek" });
    await client.tool.confirm({ conversationId: id, toolCallId: "p1", action: "confirm", remember: "conversation" });
    await events.waitFor((e) => e.method === "tool_completed" && e.params.record.toolCallId === "p2");
    await client.tool.confirm({ conversationId: id, toolCallId: "s1", action: "skip" });
    expect((await events.waitForEnd(generationId)).method).toBe("generation_complete");
    expect(runs).toEqual(["peek", "peek"]);
  });

  it("remember with any action but confirm is -32602 naming the field", async () => {
    script(sh("c1", "ls"));
    const { id, events } = await newConversation(client);
    const { generationId } = await client.step({ conversationId: id });
    await pendingOf(events, "c1");
    await expectInvalidParams(client.tool.confirm({ conversationId: id, toolCallId: "c1", action: "skip", remember: "conversation" } as any), "remember");
    await expectInvalidParams(client.tool.confirm({ conversationId: id, toolCallId: "c1", action: "confirm", message: "why" } as any), "message");
    // A conversation without a workspace has nowhere to keep a workspace rule.
    await expectInvalidParams(client.tool.confirm({ conversationId: id, toolCallId: "c1", action: "confirm", remember: "workspace" }), "remember");
    await client.tool.confirm({ conversationId: id, toolCallId: "c1", action: "skip" });
    expect((await events.waitForEnd(generationId)).method).toBe("generation_complete");
  });
});

describe("remember: workspace", () => {
  it("writes .agentwire/approvals.json, honoured by a new conversation on the same workspace", async () => {
    const ws = await newWorkspace();
    script(sh("c1", "npm test"));
    const a = await newConversation(client, { workspace: ws });
    const first = await client.step({ conversationId: a.id });
    expect((await pendingOf(a.events, "c1")).params.rememberAs).toEqual({ tool: "shell", prefix: "npm test" });
    await client.tool.confirm({ conversationId: a.id, toolCallId: "c1", action: "confirm", remember: "workspace" });
    expect((await a.events.waitForEnd(first.generationId)).method).toBe("generation_complete");
    expect(JSON.parse(await readFile(join(ws, ".agentwire", "approvals.json"), "utf8"))).toEqual({ rules: [{ tool: "shell", prefix: "npm test" }] });
    // Not in the conversation's own settings.
    expect((await client.conversation.get({ conversationId: a.id })).conversation.settings.approvalRules ?? []).toEqual([]);

    script(sh("c2", "npm test -- --watch=false"), sh("c3", "npm publish"));
    const b = await newConversation(client, { workspace: ws });
    const second = await client.step({ conversationId: b.id });
    expect((await pendingOf(b.events, "c2")).params).toMatchObject({ autoConfirmed: true, autoReason: "rule" });
    expect((await pendingOf(b.events, "c3")).params).toMatchObject({ autoConfirmed: false });
    await client.tool.confirm({ conversationId: b.id, toolCallId: "c3", action: "skip" });
    expect((await b.events.waitForEnd(second.generationId)).method).toBe("generation_complete");
    expect(runs).toEqual(["npm test", "npm test -- --watch=false"]);

    // Edited by hand, the file is no longer as agentwire wrote it: ignored, and reported.
    const file = join(ws, ".agentwire", "approvals.json");
    await writeFile(file, JSON.stringify({ rules: [{ tool: "shell", prefix: "npm test" }, { tool: "shell" }] }));
    script(sh("c4", "npm test"));
    const c = await newConversation(client, { workspace: ws });
    const third = await client.step({ conversationId: c.id });
    expect((await pendingOf(c.events, "c4")).params).toMatchObject({ autoConfirmed: false });
    expect((await c.events.waitForMethod("notice")).params).toMatchObject({ code: "approvals_file_invalid" });
    await client.tool.confirm({ conversationId: c.id, toolCallId: "c4", action: "skip" });
    expect((await c.events.waitForEnd(third.generationId)).method).toBe("generation_complete");
  });

  it("a file agentwire did not write (a cloned repository's) is reported (notice approvals_file_invalid), ignored and never overwritten", async () => {
    const ws = await newWorkspace();
    await mkdir(join(ws, ".agentwire"));
    const planted = '{ "rules": [ { "tool": "shell", "prefix": "ls" } ] }';
    await writeFile(join(ws, ".agentwire", "approvals.json"), planted);
    script(sh("c1", "ls"));
    const { id, events } = await newConversation(client, { workspace: ws });
    const { generationId } = await client.step({ conversationId: id });
    expect((await pendingOf(events, "c1")).params).toMatchObject({ autoConfirmed: false });
    const notice = (await events.waitForMethod("notice")).params;
    expect(notice).toMatchObject({ code: "approvals_file_invalid", level: "warning", data: { path: ".agentwire/approvals.json" } });
    expect(notice.message).toContain("not as agentwire wrote it");
    const error = await expectInvalidParams(client.tool.confirm({ conversationId: id, toolCallId: "c1", action: "confirm", remember: "workspace" }), "remember");
    expect(error.message).toContain("approvals.json");
    await client.tool.confirm({ conversationId: id, toolCallId: "c1", action: "confirm" });
    expect((await events.waitForEnd(generationId)).method).toBe("generation_complete");
    expect(await readFile(join(ws, ".agentwire", "approvals.json"), "utf8")).toBe(planted);
  });

  it("a file that is not valid JSON, or not the documented shape, says so", async () => {
    const ws = await newWorkspace();
    await mkdir(join(ws, ".agentwire"));
    const file = join(ws, ".agentwire", "approvals.json");
    await writeFile(file, '{ "rules": [');
    expect((await readWorkspaceApprovals(ws)).problem).toContain("not valid JSON");
    await writeFile(file, JSON.stringify({ rules: [{ tool: "shell", command: "rm" }] }));
    expect(await readWorkspaceApprovals(ws)).toMatchObject({ rules: [], problem: expect.stringContaining("rules.0") });
  });
});

describe("skip with a message", () => {
  it("reaches the model as the skipped call's result", async () => {
    script(sh("c1", "rm -rf node_modules"));
    const { id, events } = await newConversation(client);
    const { generationId } = await client.step({ conversationId: id });
    await pendingOf(events, "c1");
    await client.tool.confirm({ conversationId: id, toolCallId: "c1", action: "skip", message: "Keep node_modules; run the tests instead." });
    expect((await events.waitForEnd(generationId)).method).toBe("generation_complete");
    const result = toolResults(fake.requests[1]!).c1;
    expect(result).toContain("The user declined to run this tool.");
    expect(result).toContain("Keep node_modules; run the tests instead.");
    expect(events.of("tool_skipped")[0]!.record.result).toBe(result);
    expect(runs).toEqual([]);
  });
});
