/**
 * `agentwire acp` under the conditions an editor rarely creates on purpose:
 * it stops reading stdout (the updates waiting for it stay bounded), it quits
 * with a prompt running on a `--url` server (that generation is
 * interrupted), another client changes the session (config_option_update),
 * the server has something to say (notices, compaction), and bad input.
 * One child on one --url server serves the tests in order; the last one
 * closes it.
 */
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type * as acp from "@agentclientprotocol/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentwireClient } from "../../clients/typescript/index.js";
import { compactionUpdate, noticeUpdate } from "../../src/acp/session-updates.js";
import { parseCli } from "../../src/cli-options.js";
import { UnsentBytes, UpdateOutbox } from "../../src/acp/update-outbox.js";
import { startAgentFixture } from "../harness/agent-fixture.js";
import { eventually } from "../harness/eventually.js";
import { shippedBundle } from "../harness/shipped-bundle.js";
import { agentText, type Editor, killEditors, startEditor } from "./acp-editor.js";

const BOUND = 256 * 1024;

let fx: Awaited<ReturnType<typeof startAgentFixture>>;
let dir: string;
let ws: string;
let editor: Editor;

const newSession = async () => (await editor.agent.request("session/new", { cwd: ws, mcpServers: [] })).sessionId;
const prompt = (sessionId: string, text: string) => editor.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });
/** How the generation of a conversation ended, seen by a WebSocket client of the same server. */
function endOf(client: AgentwireClient, conversationId: string): Promise<string> {
  return new Promise((resolve) => {
    const stops = [
      client.on("generation_complete", (n) => n.conversationId === conversationId && n.final && done("complete")),
      client.on("interrupted", (n) => n.conversationId === conversationId && done("interrupted")),
      client.on("error", (n) => n.conversationId === conversationId && done("error")),
    ];
    function done(how: string) {
      for (const stop of stops) stop();
      resolve(how);
    }
  });
}
/** Every line of stdout is one JSON-RPC frame. */
function framesValid(): void {
  const lines = editor.stdout().split("\n");
  expect(lines.at(-1)).toBe("");
  for (const line of lines.slice(0, -1)) expect(JSON.parse(line)).toMatchObject({ jsonrpc: "2.0" });
}

beforeAll(async () => {
  const entry = shippedBundle();
  fx = await startAgentFixture({ transport: "websocket" });
  dir = await mkdtemp(join(tmpdir(), "agentwire-acp-hard-"));
  ws = join(dir, "ws");
  await mkdir(ws);
  editor = await startEditor(entry, ["--url", fx.server.url, "--max-unsent-bytes", String(BOUND)], {}, ws);
  await editor.agent.request("initialize", {
    protocolVersion: 1,
    clientCapabilities: { session: { notices: {}, compaction: {} } },
    clientInfo: { name: "test", version: "1" },
  });
});

afterAll(async () => {
  await killEditors();
  await fx?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("agentwire acp hardening (--url)", { timeout: 20_000 }, () => {
  it("bad params get -32602 naming the field; an unknown or closed session gets -32002", async () => {
    const sessionId = await newSession();
    const bad: [string, Record<string, unknown>][] = [
      ["session/new", { mcpServers: [] }],
      ["session/new", { cwd: "relative", mcpServers: [] }],
      ["session/load", { cwd: ws, mcpServers: [] }],
      ["session/resume", { sessionId, cwd: 7 }],
      ["session/list", { cwd: "relative" }],
      ["session/prompt", { sessionId, prompt: "not blocks" }],
      ["session/set_mode", { sessionId }],
      ["session/set_config_option", { sessionId, configId: "nope", value: "x" }],
      ["session/set_config_option", { sessionId, configId: "reasoning", value: true }],
      ["session/close", {}],
      ["session/delete", { sessionId: 12 }],
    ];
    for (const [method, params] of bad) {
      const error = await (editor.agent.request as (m: string, p: unknown) => Promise<unknown>)(method, params).then(
        () => ({ code: 0 }),
        (e: { code: number; message: string; data?: unknown }) => e,
      );
      expect({ method, code: (error as { code: number }).code }).toEqual({ method, code: -32602 });
      expect(JSON.stringify(error)).toMatch(/cwd|sessionId|prompt|modeId|configId|value/);
    }
    const unknown = "c_unknown";
    for (const [method, params] of [
      ["session/prompt", { sessionId: unknown, prompt: [{ type: "text", text: "hi" }] }],
      ["session/set_mode", { sessionId: unknown, modeId: "plan" }],
      ["session/set_config_option", { sessionId: unknown, configId: "reasoning", value: "low" }],
      ["session/load", { sessionId: unknown, cwd: ws, mcpServers: [] }],
      ["session/resume", { sessionId: unknown, cwd: ws }],
      ["session/close", { sessionId: unknown }],
      ["session/delete", { sessionId: unknown }],
      ["session/load", { sessionId: "../../etc/passwd", cwd: ws, mcpServers: [] }],
    ] as [string, Record<string, unknown>][]) {
      const code = await (editor.agent.request as (m: string, p: unknown) => Promise<unknown>)(method, params).then(
        () => 0,
        (e: { code: number }) => e.code,
      );
      // The SDK's client takes -32002 to session/close and session/delete as done (ACP: the same end state); the frame says -32002.
      expect({ method, params, code }).toEqual({ method, params, code: /close|delete/.test(method) ? 0 : -32002 });
    }
    const notFound = editor.stdout().split("\n").filter((line) => line.includes('"code":-32002') && line.includes('"data":{"sessionId":"'));
    expect(notFound).toHaveLength(8);
    expect(await editor.agent.request("session/close", { sessionId })).toEqual({});
    await expect(prompt(sessionId, "still there?")).rejects.toMatchObject({ code: -32002, data: { sessionId } });
    await expect(editor.agent.request("session/set_mode", { sessionId, modeId: "plan" })).rejects.toMatchObject({ code: -32002 });
    framesValid();
  });

  it("another client's model or reasoning change reaches the editor as config_option_update", async () => {
    const sessionId = await newSession();
    await fx.client.conversation.update({ conversationId: sessionId, settings: { reasoning: "low" } });
    await eventually(() => editor.updates(sessionId).some((u) => u.sessionUpdate === "config_option_update"));
    const update = editor.updates(sessionId).find((u) => u.sessionUpdate === "config_option_update") as acp.ConfigOptionUpdate;
    expect(update.configOptions.find((o) => o.id === "reasoning")).toMatchObject({ currentValue: "low" });
    // A title change alone is a session_info_update, not a config_option_update.
    await fx.client.conversation.update({ conversationId: sessionId, title: "renamed" });
    await eventually(() => editor.updates(sessionId).some((u) => u.sessionUpdate === "session_info_update" && u.title === "renamed"));
    expect(editor.updates(sessionId).filter((u) => u.sessionUpdate === "config_option_update")).toHaveLength(1);
  });

  it("a retried model call is a notice; a compaction is a compaction_update from in_progress to completed with its summary", async () => {
    const sessionId = await newSession();
    fx.fake.enqueue({ kind: "error", status: 503, message: "busy" }, { kind: "reply", text: ["Answered."] });
    expect((await prompt(sessionId, "hello")).stopReason).toBe("end_turn");
    expect(editor.updates(sessionId).find((u) => u.sessionUpdate === "notice")).toMatchObject({ severity: "info", title: expect.any(String), _meta: { agentwire: { code: "model_retry" } } });
    fx.fake.enqueue({ kind: "reply", text: ["The user said hello."] });
    await fx.client.conversation.compact({ conversationId: sessionId });
    await eventually(() => editor.updates(sessionId).some((u) => u.sessionUpdate === "compaction_update" && u.status === "completed"));
    const compactions = editor.updates(sessionId).filter((u) => u.sessionUpdate === "compaction_update") as (acp.CompactionUpdate & { sessionUpdate: string })[];
    expect(compactions.map((c) => c.status)).toEqual(["in_progress", "completed"]);
    expect(compactions[1]!.compactionId).toBe(compactions[0]!.compactionId);
    expect(compactions[1]!.summary).toEqual([{ type: "text", text: expect.stringContaining("The user said hello.") }]);
  });

  it("without the capabilities, notices and compactions are thoughts", () => {
    expect(noticeUpdate({ level: "warning", code: "rate_limited", message: "Rate limited." }, false)).toEqual({
      sessionUpdate: "agent_thought_chunk",
      content: { type: "text", text: "\n[warning: Rate limited.]\n" },
    });
    expect(compactionUpdate({ compactionId: "x", status: "completed", summary: "S." }, false)).toEqual({
      sessionUpdate: "agent_thought_chunk",
      content: { type: "text", text: "[earlier conversation compacted]\nS.\n" },
    });
  });

  it("an editor that stops reading during a long answer: the waiting updates merge, and when it reads again the frames are valid and the text complete", async () => {
    const sessionId = await newSession();
    await fx.client.conversation.subscribe({ conversationId: sessionId });
    const deltas = Array.from({ length: 300 }, (_, i) => `${String(i).padStart(4, "0")}:${"a".repeat(495)}`);
    fx.fake.enqueue({ kind: "reply", text: deltas });
    editor.child.stdout!.pause();
    const ended = endOf(fx.client, sessionId);
    const running = prompt(sessionId, "a long answer");
    const how = await ended;
    editor.child.stdout!.resume();
    expect(how).toBe("complete");
    expect((await running).stopReason).toBe("end_turn");
    expect(agentText(editor.updates(sessionId))).toBe(deltas.join(""));
    expect(editor.stderr()).not.toContain("has not read");
    framesValid();
  });

  it("past --max-unsent-bytes the editor's generation is interrupted (said on stderr) and the rest dropped with a marker; the bytes stay bounded", async () => {
    const sessionId = await newSession();
    await fx.client.conversation.subscribe({ conversationId: sessionId });
    // Paced, as a model streams: the bound is passed while the answer still runs.
    const deltas = Array.from({ length: 400 }, (_, i) => `${String(i).padStart(4, "0")}:${"b".repeat(4995)}`);
    fx.fake.enqueue({ kind: "reply", text: deltas, delayMs: 2 });
    const before = editor.stdout().length;
    editor.child.stdout!.pause();
    const ended = endOf(fx.client, sessionId);
    const running = prompt(sessionId, "a huge answer");
    const how = await ended;
    editor.child.stdout!.resume();
    expect(how).toBe("interrupted");
    expect(editor.stderr()).toContain(`interrupting session ${sessionId}'s generation`);
    expect((await running).stopReason).toBe("cancelled");
    // What reached the editor: the answer's start, then (when something came after the bound) the marker; never all of it.
    const text = agentText(editor.updates(sessionId));
    const marker = /\n\n\[agentwire acp: \d+ bytes of streamed output not shown: the editor was not reading\]\n\n/.exec(text);
    const shown = marker ? text.slice(0, marker.index) + text.slice(marker.index + marker[0].length) : text;
    expect(deltas.join("").startsWith(shown.slice(0, marker?.index ?? shown.length))).toBe(true);
    expect(shown.length < deltas.join("").length).toBe(true);
    // What was written while the editor did not read: the bound, what the pipes held, and little more.
    expect(editor.stdout().length - before).toBeLessThan(BOUND + 512 * 1024);
    framesValid();
  });

  it("when the editor quits with a prompt running on a --url server, that generation is interrupted", async () => {
    const sessionId = await newSession();
    await fx.client.conversation.subscribe({ conversationId: sessionId });
    fx.fake.enqueue({ kind: "reply", text: ["Partial", " never", " ends"], hangAfter: 1 });
    const ended = endOf(fx.client, sessionId);
    void prompt(sessionId, "go on forever").catch(() => {});
    await eventually(() => agentText(editor.updates(sessionId)) === "Partial");
    expect(await editor.close()).toEqual({ code: 0, signal: null });
    expect(await ended).toBe("interrupted");
    expect((await fx.client.conversation.get({ conversationId: sessionId })).state.generationId).toBeNull();
    expect(editor.stderr()).toContain("interrupting 1 running prompt");
  });
});

describe("the update outbox", () => {
  it("--max-unsent-bytes takes an integer ≥ 65536, with --url too", () => {
    expect(parseCli(["acp", "--url", "ws://127.0.0.1:1", "--max-unsent-bytes", "1048576"], {}, { discover: false }).acp).toMatchObject({ maxUnsentBytes: 1048576, target: { url: "ws://127.0.0.1:1" } });
    expect(() => parseCli(["acp", "--max-unsent-bytes", "100"], {}, { discover: false })).toThrow("--max-unsent-bytes must be an integer ≥ 65536, got \"100\"");
  });

  it("while a write waits, chunks merge and a tool's output replaces the waiting one; past the bound the owner is told once and chunks become one marker", async () => {
    const written: acp.SessionUpdate[] = [];
    let release!: () => void;
    let gate = new Promise<void>((resolve) => (release = resolve));
    const budget = new UnsentBytes(65536);
    const overflows: number[] = [];
    const outbox = new UpdateOutbox(
      async (update) => {
        written.push(structuredClone(update));
        await gate;
      },
      budget,
      (unsent) => overflows.push(unsent),
    );
    const text = (t: string): acp.SessionUpdate => ({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: t } });
    const output = (t: string): acp.SessionUpdate => ({ sessionUpdate: "tool_call_update", toolCallId: "call_1", content: [{ type: "content", content: { type: "text", text: t } }] });
    void outbox.push(text("first")); // being written: the pipe is full
    for (let i = 0; i < 50; i++) void outbox.push(text(`${i},`));
    void outbox.push(output("out 1"));
    void outbox.push(output("out 1 2"));
    void outbox.push({ sessionUpdate: "tool_call_update", toolCallId: "call_1", status: "completed" });
    expect(overflows).toEqual([]);
    for (let i = 0; i < 20; i++) void outbox.push(text("x".repeat(5000)));
    expect(overflows).toHaveLength(1);
    expect(budget.total).toBeLessThan(65536 + 6000);
    release();
    gate = Promise.resolve();
    await outbox.flushed();
    const texts = written.filter((u) => u.sessionUpdate === "agent_message_chunk").map((u) => (u as acp.ContentChunk).content as acp.TextContent);
    expect(texts[0]!.text).toBe("first");
    expect(texts[1]!.text).toBe(Array.from({ length: 50 }, (_, i) => `${i},`).join(""));
    expect(written.filter((u) => u.sessionUpdate === "tool_call_update")).toEqual([output("out 1 2"), { sessionUpdate: "tool_call_update", toolCallId: "call_1", status: "completed" }]);
    expect(texts.at(-1)!.text).toMatch(/^\n\n\[agentwire acp: \d+ bytes of streamed output not shown: the editor was not reading\]\n\n$/);
    expect(budget.total).toBe(0);
  });
});
