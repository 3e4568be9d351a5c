/**
 * `agentwire acp` (the shipped bundle) as a child process, driven by the
 * ACP SDK's client side against the fake model: one child with an embedded
 * server is shared by the tests in order, a second one proves session/load
 * after a restart, and one more works through a running server (--url)
 * that a WebSocket client watches and approves on.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type * as acp from "@agentclientprotocol/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "../fake-openai/server.js";
import { stdioFixture } from "../fixtures/mcp/mcp-fixture.js";
import { startAgentFixture } from "../harness/agent-fixture.js";
import { eventually } from "../harness/eventually.js";
import { isAlive, waitGone } from "../harness/process-liveness.js";
import { shippedBundle } from "../harness/shipped-bundle.js";
import { agentText, type Editor, killEditors, startEditor } from "./acp-editor.js";

const PNG_1X1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
const EDIT_THEN_DONE = [
  { kind: "reply" as const, toolCalls: [{ id: "call_edit", name: "edit_file", args: JSON.stringify({ path: "notes.txt", old_string: "line two", new_string: "line 2" }) }] },
  { kind: "reply" as const, text: ["Edited."] },
];

let entry: string;
let fake: FakeOpenAI;
let dir: string;
let workspace: string;
let dataDir: string;
let editor: Editor;
let env: Record<string, string>;

const FORMS: acp.ClientCapabilities = { elicitation: { form: {} } };
const initialize = (e: Editor, clientCapabilities: acp.ClientCapabilities = FORMS) =>
  e.agent.request("initialize", { protocolVersion: 1, clientCapabilities, clientInfo: { name: "test", version: "1" } });
const newSession = async (e: Editor) => (await e.agent.request("session/new", { cwd: workspace, mcpServers: [] })).sessionId;
const prompt = (e: Editor, sessionId: string, blocks: acp.ContentBlock[] | string) =>
  e.agent.request("session/prompt", { sessionId, prompt: typeof blocks === "string" ? [{ type: "text", text: blocks }] : blocks });

beforeAll(async () => {
  entry = shippedBundle();
  fake = await startFakeOpenAI({ apiKey: "test-key" });
  dir = await mkdtemp(join(tmpdir(), "agentwire-acp-"));
  workspace = join(dir, "ws");
  dataDir = join(dir, "data");
  await (await import("node:fs/promises")).mkdir(workspace);
  env = { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: "test-key", AGENTWIRE_MODEL: "fake-model" };
  editor = await startEditor(entry, ["--data-dir", dataDir, "--max-payload", "300000"], env, workspace);
  await initialize(editor);
});

afterAll(async () => {
  await killEditors();
  await fake?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("agentwire acp (embedded server)", { timeout: 30_000 }, () => {
  it("initialize: protocol v1, load, image and embedded context prompts, MCP over http; bad input gets the spec's errors", async () => {
    const result = await initialize(editor);
    expect(result).toMatchObject({
      protocolVersion: 1,
      agentCapabilities: { loadSession: true, promptCapabilities: { image: true, embeddedContext: true }, mcpCapabilities: { http: true } },
      agentInfo: { name: "agentwire" },
    });
    await expect(editor.agent.request("session/new", { cwd: "relative/dir", mcpServers: [] })).rejects.toMatchObject({ code: -32602 });
    await expect(prompt(editor, "c_missing", "hi")).rejects.toMatchObject({ code: -32002, data: { sessionId: "c_missing" } });
    await expect(editor.agent.request("session/load", { sessionId: "c_missing", cwd: workspace, mcpServers: [] })).rejects.toMatchObject({ code: -32002 });
  });

  it("a prompt streams agent_message_chunks and ends with end_turn", async () => {
    fake.enqueue({ kind: "reply", reasoning: ["Thinking."], text: ["Hello", " from", " agentwire."], delayMs: 30 });
    const sessionId = await newSession(editor);
    const { stopReason } = await prompt(editor, sessionId, "say hello");
    expect(stopReason).toBe("end_turn");
    const updates = editor.updates(sessionId);
    expect(agentText(updates)).toBe("Hello from agentwire.");
    expect(updates.filter((u) => u.sessionUpdate === "agent_message_chunk").length).toBeGreaterThan(1);
    expect(updates.find((u) => u.sessionUpdate === "agent_thought_chunk")).toMatchObject({ content: { type: "text", text: "Thinking." } });
    expect(fake.requests.at(-1)!.messages.at(-1)).toEqual({ role: "user", content: "say hello" });
  });

  it("a file edit asks session/request_permission with its diff; allow once runs it and the update shows it completed", async () => {
    await writeFile(join(workspace, "notes.txt"), "line one\nline two\nline three\n");
    fake.enqueue(...EDIT_THEN_DONE);
    editor.answer = async () => ({ outcome: { outcome: "selected", optionId: "allow_once" } });
    const sessionId = await newSession(editor);
    const asked = editor.permissions.length;
    const { stopReason } = await prompt(editor, sessionId, "edit the notes");
    expect(stopReason).toBe("end_turn");
    const request = editor.permissions[asked]!;
    expect(request.options.map((o) => o.kind)).toEqual(["allow_once", "allow_always", "reject_once", "reject_always"]);
    expect(request.toolCall).toMatchObject({
      toolCallId: "call_edit",
      kind: "edit",
      status: "pending",
      locations: [{ path: join(workspace, "notes.txt") }],
      rawInput: { path: "notes.txt", old_string: "line two", new_string: "line 2" },
      content: [{ type: "diff", path: join(workspace, "notes.txt"), oldText: "line one\nline two\nline three", newText: "line one\nline 2\nline three" }],
    });
    const statuses = editor.updates(sessionId).filter((u) => "toolCallId" in u && u.toolCallId === "call_edit").map((u) => (u as acp.ToolCallUpdate).status);
    expect(statuses).toEqual(["pending", "in_progress", "completed"]);
    expect(await readFile(join(workspace, "notes.txt"), "utf8")).toBe("line one\nline 2\nline three\n");
    expect(agentText(editor.updates(sessionId))).toBe("Edited.");
  });

  it("reject skips the call: the file is untouched and the call ends as failed, saying it was skipped", async () => {
    await writeFile(join(workspace, "notes.txt"), "line one\nline two\n");
    fake.enqueue(...EDIT_THEN_DONE);
    editor.answer = async () => ({ outcome: { outcome: "selected", optionId: "reject_once" } });
    const sessionId = await newSession(editor);
    expect((await prompt(editor, sessionId, "edit")).stopReason).toBe("end_turn");
    const last = editor.updates(sessionId).filter((u) => u.sessionUpdate === "tool_call_update").at(-1) as acp.ToolCallUpdate;
    expect(last).toMatchObject({ toolCallId: "call_edit", status: "failed", content: [{ type: "content", content: { type: "text", text: expect.stringMatching(/^Skipped \(user\)/) } }] });
    expect(await readFile(join(workspace, "notes.txt"), "utf8")).toBe("line one\nline two\n");
  });

  it("session/cancel mid-stream ends the prompt with cancelled", async () => {
    fake.enqueue({ kind: "reply", text: ["Partial", " never", " ends"], hangAfter: 1 });
    const sessionId = await newSession(editor);
    const running = prompt(editor, sessionId, "go on forever");
    await eventually(() => agentText(editor.updates(sessionId)) === "Partial");
    await editor.agent.notify("session/cancel", { sessionId });
    expect((await running).stopReason).toBe("cancelled");
  });

  it("an image prompt (with a resource) reaches the model as an image", async () => {
    fake.enqueue({ kind: "reply", text: ["A pixel."] });
    const sessionId = await newSession(editor);
    const { stopReason } = await prompt(editor, sessionId, [
      { type: "text", text: "what is this?" },
      { type: "image", mimeType: "image/png", data: PNG_1X1 },
      { type: "resource", resource: { uri: `file://${workspace}/draft.md`, text: "unsaved buffer text" } },
    ]);
    expect(stopReason).toBe("end_turn");
    const user = fake.requests.at(-1)!.messages.at(-1);
    expect(user.role).toBe("user");
    const parts = user.content as { type: string; text?: string; image_url?: { url: string } }[];
    expect(parts.find((p) => p.type === "image_url")?.image_url?.url).toBe(`data:image/png;base64,${PNG_1X1}`);
    expect(parts.find((p) => p.type === "text")?.text).toContain('<file path="draft.md">\nunsaved buffer text\n</file>');
  });

  it("an image over the server's frame limit is refused (-32602) before it is sent; the session goes on", async () => {
    const sessionId = await newSession(editor);
    const big = Buffer.alloc(400_000, 7).toString("base64");
    await expect(prompt(editor, sessionId, [{ type: "text", text: "look" }, { type: "image", mimeType: "image/png", data: big }])).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining("over the server's frame limit of 300000 bytes"),
    });
    fake.enqueue({ kind: "reply", text: ["Still here."] });
    expect((await prompt(editor, sessionId, "still there?")).stopReason).toBe("end_turn");
  });

  it("stop reasons: max_tokens when the model hit its limit; a failed generation is an error response", async () => {
    const sessionId = await newSession(editor);
    fake.enqueue({ kind: "reply", text: ["Cut"], finishReason: "length" });
    expect((await prompt(editor, sessionId, "long answer")).stopReason).toBe("max_tokens");
    fake.enqueue({ kind: "error", status: 400, message: "bad request from the fake" });
    await expect(prompt(editor, sessionId, "fail")).rejects.toMatchObject({ code: -32603, message: expect.stringContaining("bad request from the fake") });
    // The session is still usable after a failure.
    fake.enqueue({ kind: "reply", text: ["Fine."] });
    expect((await prompt(editor, sessionId, "again")).stopReason).toBe("end_turn");
  });

  it("plan_updated becomes a plan update; config options set the model and the reasoning effort", async () => {
    const created = await editor.agent.request("session/new", { cwd: workspace, mcpServers: [] });
    expect(created.configOptions?.find((o) => o.id === "model")).toMatchObject({ currentValue: "fake-model", category: "model" });
    const { configOptions } = await editor.agent.request("session/set_config_option", { sessionId: created.sessionId, configId: "reasoning", value: "high" });
    expect(configOptions.find((o) => o.id === "reasoning")).toMatchObject({ currentValue: "high", category: "thought_level" });
    await expect(editor.agent.request("session/set_config_option", { sessionId: created.sessionId, configId: "reasoning", value: "extreme" })).rejects.toMatchObject({ code: -32602 });
    const entries = [{ content: "Read the code", status: "completed" }, { content: "Fix it", status: "in_progress", priority: "high" }];
    fake.enqueue({ kind: "reply", toolCalls: [{ id: "call_plan", name: "update_plan", args: JSON.stringify({ entries }) }] }, { kind: "reply", text: ["Planned."] });
    expect((await prompt(editor, created.sessionId, "plan it")).stopReason).toBe("end_turn");
    expect(editor.updates(created.sessionId).find((u) => u.sessionUpdate === "plan")).toEqual({
      sessionUpdate: "plan",
      entries: [{ content: "Read the code", status: "completed", priority: "medium" }, { content: "Fix it", status: "in_progress", priority: "high" }],
    });
    expect(editor.permissions.some((p) => p.sessionId === created.sessionId)).toBe(false);
  });

  it("session modes are agentwire's modes: listed with the session, set with session/set_mode, announced with current_mode_update", async () => {
    const created = await editor.agent.request("session/new", { cwd: workspace, mcpServers: [] });
    expect(created.modes?.currentModeId).toBe("code");
    expect(created.modes?.availableModes.map((m) => m.id)).toEqual(["ask", "plan", "code", "auto"]);
    expect(await editor.agent.request("session/set_mode", { sessionId: created.sessionId, modeId: "plan" })).toEqual({});
    await eventually(() => editor.updates(created.sessionId).some((u) => u.sessionUpdate === "current_mode_update"));
    expect(editor.updates(created.sessionId).filter((u) => u.sessionUpdate === "current_mode_update")).toEqual([{ sessionUpdate: "current_mode_update", currentModeId: "plan" }]);
    await expect(editor.agent.request("session/set_mode", { sessionId: created.sessionId, modeId: "nope" })).rejects.toMatchObject({ code: -32602 });
    // In plan mode the model is offered read-only tools (and update_plan) only.
    fake.enqueue({ kind: "reply", text: ["A plan."] });
    await prompt(editor, created.sessionId, "plan the work");
    const tools = (fake.requests.at(-1)!.tools ?? []).map((t: { function: { name: string } }) => t.function.name);
    expect(tools).toContain("update_plan");
    expect(tools).not.toContain("edit_file");
  });

  it("ask_user's question is an elicitation form; the editor's answer reaches the model", async () => {
    const sessionId = await newSession(editor);
    editor.answer = async () => ({ outcome: { outcome: "selected", optionId: "allow_once" } });
    editor.elicit = async () => ({ action: "accept", content: { answer: "right" } });
    fake.enqueue(
      { kind: "reply", toolCalls: [{ id: "call_ask", name: "ask_user", args: JSON.stringify({ question: "Which one?", choices: ["left", "right"] }) }] },
      { kind: "reply", text: ["Right it is."] },
    );
    expect((await prompt(editor, sessionId, "pick")).stopReason).toBe("end_turn");
    expect(editor.elicitations.at(-1)).toEqual({
      mode: "form",
      sessionId,
      toolCallId: "call_ask",
      message: "Which one?",
      requestedSchema: { type: "object", properties: { answer: { type: "string", title: "Answer", enum: ["left", "right"] } }, required: ["answer"] },
    });
    const toolMessage = fake.requests.at(-1)!.messages.find((m: { role: string; tool_call_id?: string }) => m.role === "tool" && m.tool_call_id === "call_ask");
    expect(String(toolMessage.content)).toContain("right");
    expect(agentText(editor.updates(sessionId))).toBe("Right it is.");
  });

  it("allow always remembers the approval for the conversation; reject always stops offering the tool", async () => {
    await writeFile(join(workspace, "notes.txt"), "line one\nline two\n");
    const sessionId = await newSession(editor);
    const asked = () => editor.permissions.filter((p) => p.sessionId === sessionId).length;
    editor.answer = async () => ({ outcome: { outcome: "selected", optionId: "allow_always" } });
    fake.enqueue(...EDIT_THEN_DONE);
    await prompt(editor, sessionId, "edit");
    fake.enqueue({ kind: "reply", toolCalls: [{ id: "call_back", name: "edit_file", args: JSON.stringify({ path: "notes.txt", old_string: "line 2", new_string: "line two" }) }] }, { kind: "reply", text: ["Back."] });
    await prompt(editor, sessionId, "edit back");
    expect(asked()).toBe(1);
    expect(await readFile(join(workspace, "notes.txt"), "utf8")).toBe("line one\nline two\n");

    const other = await newSession(editor);
    editor.answer = async () => ({ outcome: { outcome: "selected", optionId: "reject_always" } });
    fake.enqueue(...EDIT_THEN_DONE);
    await prompt(editor, other, "edit");
    fake.enqueue({ kind: "reply", text: ["No edits."] });
    await prompt(editor, other, "and now?");
    const tools = (fake.requests.at(-1)!.tools ?? []).map((t: { function: { name: string } }) => t.function.name);
    expect(tools).toContain("read_file");
    expect(tools).not.toContain("edit_file");
  });

  it("a running tool's output shows as it comes (at most one update per 100 ms), then its result", async () => {
    editor.answer = async () => ({ outcome: { outcome: "selected", optionId: "allow_once" } });
    const sessionId = await newSession(editor);
    const command = "for i in 1 2 3 4 5 6 7 8 9 10; do echo out$i; sleep 0.05; done";
    fake.enqueue({ kind: "reply", toolCalls: [{ id: "call_out", name: "shell", args: JSON.stringify({ command }) }] }, { kind: "reply", text: ["Ran."] });
    expect((await prompt(editor, sessionId, "run it")).stopReason).toBe("end_turn");
    const updates = editor.updates(sessionId).filter((u): u is acp.ToolCallUpdate & { sessionUpdate: "tool_call_update" } => u.sessionUpdate === "tool_call_update");
    const outputs = updates.filter((u) => u.status === undefined);
    expect(outputs.length).toBeGreaterThan(0);
    expect(outputs.length).toBeLessThan(10);
    expect(outputs[0]!.content).toEqual([{ type: "content", content: { type: "text", text: expect.stringMatching(/^out1\n/) } }]);
    expect(updates.at(-1)).toMatchObject({ status: "completed", rawOutput: { success: true, exitCode: 0 } });
  });

  it("the workspace's commands are offered as available commands; a prompt /NAME ARGS runs one", async () => {
    await (await import("node:fs/promises")).mkdir(join(workspace, ".agentwire", "commands"), { recursive: true });
    await writeFile(join(workspace, ".agentwire", "commands", "check.md"), "---\ndescription: Check the notes\nargument-hint: <what>\n---\nPlease check $ARGUMENTS now.\n");
    const sessionId = await newSession(editor);
    await eventually(() => editor.updates(sessionId).some((u) => u.sessionUpdate === "available_commands_update"));
    // After the answer that names the session, not before (the editor could not place it).
    const frames = editor.stdout().split("\n");
    const answered = frames.findIndex((f) => f.includes(`"result":{"sessionId":"${sessionId}"`));
    expect(answered).toBeGreaterThanOrEqual(0);
    expect(frames.findIndex((f) => f.includes('"available_commands_update"') && f.includes(sessionId))).toBeGreaterThan(answered);
    expect(editor.updates(sessionId).find((u) => u.sessionUpdate === "available_commands_update")).toEqual({
      sessionUpdate: "available_commands_update",
      availableCommands: [{ name: "check", description: "Check the notes", input: { hint: "<what>" } }],
    });
    fake.enqueue({ kind: "reply", text: ["Checked."] });
    await prompt(editor, sessionId, "/check the spelling");
    expect(fake.requests.at(-1)!.messages.at(-1)).toEqual({ role: "user", content: "Please check the spelling now.\n" });
  });

  it("stdout carries only ACP frames with 10 sessions prompting at once", async () => {
    const sessions = await Promise.all(Array.from({ length: 10 }, () => newSession(editor)));
    const results = await Promise.all(sessions.map((id, i) => prompt(editor, id, `hello ${i}`)));
    expect(results.map((r) => r.stopReason)).toEqual(Array(10).fill("end_turn"));
    for (const id of sessions) expect(agentText(editor.updates(id))).toBe("Hello from the fake.");
    const lines = editor.stdout().split("\n");
    expect(lines.at(-1)).toBe("");
    for (const line of lines.slice(0, -1)) expect(JSON.parse(line)).toMatchObject({ jsonrpc: "2.0" });
  });

  let historySession = "";
  it("when stdin closes the process ends with 0, taking its embedded server and a running tool with it", async () => {
    fake.enqueue({ kind: "reply", text: ["First answer."] });
    historySession = await newSession(editor);
    await prompt(editor, historySession, "first question");
    // A call still waiting for the editor when it goes away: stored pending, asked again after the restart.
    await writeFile(join(workspace, "notes.txt"), "line one\nline two\n");
    editor.answer = (_request, signal) => new Promise((resolve) => signal.addEventListener("abort", () => resolve({ outcome: { outcome: "cancelled" } })));
    fake.enqueue({ kind: "reply", toolCalls: [{ id: "call_later", name: "edit_file", args: JSON.stringify({ path: "notes.txt", old_string: "line two", new_string: "line 2" }) }] });
    void prompt(editor, historySession, "edit the notes").catch(() => {});
    await eventually(() => editor.permissions.some((p) => p.toolCall.toolCallId === "call_later"));
    const other = await newSession(editor);
    editor.answer = async () => ({ outcome: { outcome: "selected", optionId: "allow_once" } });
    fake.enqueue({ kind: "reply", toolCalls: [{ id: "call_sleep", name: "shell", args: JSON.stringify({ command: "echo $$ > tool.pid; exec sleep 30" }) }] });
    void prompt(editor, other, "sleep").catch(() => {});
    await eventually(async () => (await readFile(join(workspace, "tool.pid"), "utf8").catch(() => "")).trim() !== "");
    const pid = Number((await readFile(join(workspace, "tool.pid"), "utf8")).trim());
    expect(isAlive(pid)).toBe(true);
    expect(await editor.close()).toEqual({ code: 0, signal: null });
    expect(await waitGone([pid], 2000)).toEqual([]);
  });

  it("session/load after a restart replays the history, then the session goes on", async () => {
    const sessionId = historySession;
    editor = await startEditor(entry, ["--data-dir", dataDir, "--max-payload", "300000"], env, workspace);
    await initialize(editor);
    const listed = await editor.agent.request("session/list", { cwd: workspace });
    expect(listed.sessions.find((s) => s.sessionId === sessionId)).toMatchObject({ cwd: workspace, title: "first question" });
    editor.answer = async () => ({ outcome: { outcome: "selected", optionId: "allow_once" } });
    fake.enqueue({ kind: "reply", text: ["Edited later."] });
    await editor.agent.request("session/load", { sessionId, cwd: workspace, mcpServers: [] });
    const replayed = editor.updates(sessionId);
    expect(replayed.filter((u) => u.sessionUpdate === "user_message_chunk").map((u) => (u.content.type === "text" ? u.content.text : ""))).toEqual(["first question", "edit the notes"]);
    expect(agentText(replayed)).toBe("First answer.");
    expect(replayed.find((u) => u.sessionUpdate === "tool_call")).toMatchObject({ toolCallId: "call_later", status: "pending", kind: "edit" });
    // The waiting call is asked about once more; allowed, it runs and the generation it resumed goes on.
    await eventually(() => agentText(editor.updates(sessionId)).endsWith("Edited later."));
    expect(editor.permissions.map((p) => p.toolCall.toolCallId)).toEqual(["call_later"]);
    // Replayed once as a tool_call; offered again, it is updated, not added a second time.
    expect(editor.updates(sessionId).filter((u) => u.sessionUpdate === "tool_call" && u.toolCallId === "call_later")).toHaveLength(1);
    expect(await readFile(join(workspace, "notes.txt"), "utf8")).toBe("line one\nline 2\n");
    fake.enqueue({ kind: "reply", text: ["Second."] });
    expect((await prompt(editor, sessionId, "again")).stopReason).toBe("end_turn");
    expect(fake.requests.at(-1)!.messages.map((m: { content: unknown }) => m.content)).toEqual(expect.arrayContaining(["first question", "First answer.", "again"]));
  });
});

describe("agentwire acp --url (a running server)", { timeout: 30_000 }, () => {
  let fx: Awaited<ReturnType<typeof startAgentFixture>>;
  let ws: string;
  let remote: Editor;
  beforeAll(async () => {
    fx = await startAgentFixture({ transport: "websocket" });
    ws = join(dir, "url-ws");
    await (await import("node:fs/promises")).mkdir(ws);
    remote = await startEditor(entry, ["--url", fx.server.url], {}, ws);
    // This editor cannot show forms (no elicitation capability).
    await initialize(remote, {});
  });
  afterAll(async () => {
    await fx?.close();
  });

  it("the editor's session is a conversation a WebSocket client sees and approves on; the editor's question is withdrawn", async () => {
    await writeFile(join(ws, "notes.txt"), "line one\nline two\n");
    let withdrawn = false;
    remote.answer = (_request, signal) =>
      new Promise((resolve) =>
        signal.addEventListener("abort", () => {
          withdrawn = true;
          resolve({ outcome: { outcome: "cancelled" } });
        }),
      );
    const { sessionId } = await remote.agent.request("session/new", { cwd: ws, mcpServers: [] });
    const watcher = fx.client;
    const seen: string[] = [];
    const stopWatching = watcher.on("tool_pending", (n) => {
      if (n.conversationId !== sessionId) return;
      seen.push(n.toolName);
      // Approved once the editor has been asked: confirming before the acp process forwards the
      // question (it can lag under load) would leave nothing to withdraw.
      void eventually(() => remote.permissions.length === 1, 10_000, "the editor asked").then(() =>
        watcher.tool.confirm({ conversationId: n.conversationId, toolCallId: n.toolCallId, action: "confirm" }),
      );
    });
    await watcher.conversation.subscribe({ conversationId: sessionId });
    fx.fake.enqueue(...EDIT_THEN_DONE);
    const { stopReason } = await prompt(remote, sessionId, "edit");
    expect(stopReason).toBe("end_turn");
    expect(seen).toEqual(["edit_file"]);
    expect(remote.permissions).toHaveLength(1);
    await eventually(() => withdrawn);
    expect(await readFile(join(ws, "notes.txt"), "utf8")).toBe("line one\nline 2\n");
    const statuses = remote.updates(sessionId).filter((u) => "toolCallId" in u).map((u) => (u as acp.ToolCallUpdate).status);
    expect(statuses).toEqual(["pending", "in_progress", "completed"]);
    const { conversation } = await watcher.conversation.get({ conversationId: sessionId });
    expect(conversation).toMatchObject({ workspace: ws, title: "edit" });
    stopWatching();
  });

  it("an editor without forms is shown the question; another client answers it", async () => {
    const { sessionId } = await remote.agent.request("session/new", { cwd: ws, mcpServers: [] });
    const stopAnswering = fx.client.on("input_requested", (n) => {
      if (n.conversationId === sessionId) void fx.client.input.respond({ conversationId: sessionId, requestId: n.requestId, answer: "blue" });
    });
    await fx.client.conversation.subscribe({ conversationId: sessionId });
    remote.answer = async () => ({ outcome: { outcome: "selected", optionId: "allow_once" } });
    fx.fake.enqueue({ kind: "reply", toolCalls: [{ id: "call_q", name: "ask_user", args: JSON.stringify({ question: "Favourite colour?" }) }] }, { kind: "reply", text: ["Blue, then."] });
    expect((await prompt(remote, sessionId, "ask me")).stopReason).toBe("end_turn");
    expect(remote.elicitations).toEqual([]);
    expect(agentText(remote.updates(sessionId))).toContain("> Favourite colour?");
    expect(agentText(remote.updates(sessionId))).toContain("Blue, then.");
    stopAnswering();
  });

  it("a step that reaches maxIterations (set by another client) ends with max_turn_requests", async () => {
    const { sessionId } = await remote.agent.request("session/new", { cwd: ws, mcpServers: [] });
    await fx.client.conversation.update({ conversationId: sessionId, settings: { maxIterations: 1 } });
    fx.fake.enqueue({ kind: "reply", toolCalls: [{ id: "call_ls", name: "shell", args: '{"command":"ls"}' }] });
    expect((await prompt(remote, sessionId, "list files")).stopReason).toBe("max_turn_requests");
    const last = remote.updates(sessionId).filter((u) => u.sessionUpdate === "tool_call_update").at(-1);
    expect(last).toMatchObject({ toolCallId: "call_ls", status: "failed" });
  });

  it("the session's MCP servers belong to its conversation: its model is offered their tools, another session's is not", async () => {
    const server = stdioFixture();
    const { sessionId } = await remote.agent.request("session/new", {
      cwd: ws,
      mcpServers: [{ name: "fixture", command: server.command, args: server.args, env: [{ name: "FIXTURE_FLAG", value: "1" }] }],
    });
    const other = (await remote.agent.request("session/new", { cwd: ws, mcpServers: [] })).sessionId;
    // Nothing server-wide: the conversation's own server, listed with it.
    expect((await fx.client.mcp.list()).servers.map((s) => s.name)).not.toContain("fixture");
    expect((await fx.client.mcp.list({ conversationId: sessionId })).servers.find((s) => s.name === "fixture")).toMatchObject({ origin: "conversation", transport: "stdio" });
    const first = fx.fake.requests.length;
    fx.fake.enqueue({ kind: "reply", text: ["mine"] }, { kind: "reply", text: ["theirs"] });
    expect((await prompt(remote, sessionId, "tools?")).stopReason).toBe("end_turn");
    expect((await prompt(remote, other, "tools?")).stopReason).toBe("end_turn");
    const offered = (i: number) => (fx.fake.requests[i]!.tools ?? []).map((t: { function: { name: string } }) => t.function.name);
    expect(offered(first)).toContain("mcp__fixture__pid");
    expect(offered(first + 1).filter((n) => n.startsWith("mcp__fixture__"))).toEqual([]);
    await expect(remote.agent.request("session/new", { cwd: ws, mcpServers: [{ type: "sse", name: "old", url: "http://127.0.0.1:1/sse", headers: [] }] })).rejects.toMatchObject({ code: -32602 });
    // Stopped by a signal, as an editor may stop it: the same orderly end as a closed stdin.
    remote.child.kill("SIGTERM");
    expect(await remote.close()).toEqual({ code: 0, signal: null });
  });
});
