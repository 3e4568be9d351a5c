/**
 * Restarts: "Pending tool calls are stored, so a restart re-offers them
 * instead of losing them" (DESIGN, data model), and seqs are never reused.
 *
 * A crash is the real thing: `agentwire serve` in a child process, killed
 * with SIGKILL, so nothing gets a chance to settle. The next server is an
 * in-process fixture on the same data dir, its clients on in-memory links.
 * A graceful stop is tested too.
 */
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WebSocket } from "ws";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AgentwireClient } from "../../clients/typescript/index.js";
import { startFakeOpenAI, type FakeOpenAI } from "../fake-openai/server.js";
import { newConversation, startAgentFixture, TOOL_ROUND_FLOW, type AgentFixture } from "../harness/agent-fixture.js";
import { runCli } from "../harness/cli-process.js";
import { EventRecorder } from "../harness/event-recorder.js";

/** What a client sees when a stored pending call is confirmed and the loop resumes. */
const RESUMED_ROUND = TOOL_ROUND_FLOW;

let dataDir: string;
const cleanups: Array<() => Promise<void> | void> = [];

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "agentwire-restart-"));
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await rm(dataDir, { recursive: true, force: true });
});

/**
 * Resolves once the stored records of the conversation hold `status` for a
 * tool call. The loop starts a confirmed tool without waiting for the
 * "executing" write, so a crash test must wait for it before killing.
 */
async function storedStatus(conversationId: string, status: string, timeoutMs = 5000): Promise<void> {
  const dir = join(dataDir, "conversations", conversationId);
  const pattern = new RegExp(`"status":\\s*"${status}"`);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const name of await readdir(dir)) {
      // The segments, and the journal beside them (src/store/lowdb-journal.ts).
      if (!(name.startsWith("records-") && name.endsWith(".json")) && name !== "replaced.jsonl") continue;
      if (pattern.test(await readFile(join(dir, name), "utf8").catch(() => ""))) return;
    }
    if (Date.now() > deadline) throw new Error(`no record with status ${status} stored within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** `agentwire serve` in a child process on `dataDir`, talking to `fake`. */
async function spawnServer(fake: FakeOpenAI): Promise<{ url: string; crash(): Promise<void> }> {
  const server = runCli(["serve", "--port", "0", "--data-dir", dataDir, "--log-level", "silent"], {
    OPENAI_BASE_URL: fake.url,
    OPENAI_API_KEY: "test-key",
    AGENTWIRE_MODEL: "fake-model",
  });
  const crash = async () => {
    if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill("SIGKILL");
    await server.exited;
  };
  cleanups.push(crash);
  return { url: await server.listening(20_000), crash };
}

async function fakeServer(): Promise<FakeOpenAI> {
  const fake = await startFakeOpenAI({ apiKey: "test-key" });
  cleanups.push(() => fake.close());
  return fake;
}

async function fixtureOnDataDir(): Promise<AgentFixture> {
  const fx = await startAgentFixture({ config: { server: { dataDir } } });
  cleanups.push(() => fx.close());
  return fx;
}

async function connect(url: string): Promise<AgentwireClient> {
  const client = await AgentwireClient.connect(url, { WebSocket: WebSocket as never });
  cleanups.push(() => client.close().catch(() => {}));
  return client;
}

const shellCall = (command: string, id: string) => ({ id, name: "shell", args: JSON.stringify({ command }) });

/**
 * On a crashing server: a conversation whose model proposed `call` and which
 * is waiting for its confirmation when the server is killed.
 */
async function crashWithPendingCall(command: string) {
  const fake = await fakeServer();
  fake.enqueue({ kind: "reply", text: ["I will run it."], toolCalls: [shellCall(command, "keep_1")] });
  const first = await spawnServer(fake);
  const client = await connect(first.url);
  const { id, events } = await newConversation(client, {}, "run something");
  await client.step({ conversationId: id });
  await events.waitForMethod("tool_pending", 10_000);
  const before = await client.conversation.get({ conversationId: id });
  expect(before.state.pendingTools.map((t) => t.toolCallId)).toEqual(["keep_1"]);
  await first.crash();
  expect(fake.rejected).toEqual([]);
  return { id, seqBefore: before.state.seq };
}

// Each test starts the real CLI twice: on a busy 2-core machine that alone can pass 5 s.
describe("after a crash with a tool call waiting for confirmation", { timeout: 30_000 }, () => {
  it("conversation.get shows it pending; step offers it again, and confirming it runs it and calls the model", async () => {
    const { id, seqBefore } = await crashWithPendingCall("echo resumed-after-crash");
    const fx = await fixtureOnDataDir();

    const got = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
    expect(got.state.generating).toBe(false);
    expect(got.state.pendingTools).toEqual([
      { toolCallId: "keep_1", toolName: "shell", arguments: { command: "echo resumed-after-crash" }, kind: "execute", title: "Run echo resumed-after-crash", locations: [], rememberAs: { tool: "shell", prefix: "echo" } },
    ]);
    expect(got.records!.find((r) => r.type === "tool_call")).toMatchObject({ toolCallId: "keep_1", status: "pending" });
    // Seqs continue above everything the crashed server could have handed out.
    expect(got.state.seq).toBeGreaterThan(seqBefore);

    const events = new EventRecorder(fx.client, id);
    await fx.client.conversation.subscribe({ conversationId: id });
    fx.fake.enqueue({ kind: "reply", text: ["It printed the word."] });
    const { generationId } = await fx.client.step({ conversationId: id });
    const offered = await events.waitForMethod("tool_pending");
    expect(offered.params).toMatchObject({
      generationId,
      toolCallId: "keep_1",
      toolName: "shell",
      arguments: { command: "echo resumed-after-crash" },
      autoConfirmed: false,
    });
    expect(offered.params.seq).toBeGreaterThan(seqBefore);
    // It waits for a decision: no model call yet.
    expect((await fx.client.conversation.get({ conversationId: id })).state.pendingTools.map((t) => t.toolCallId)).toEqual(["keep_1"]);
    expect(fx.fake.requests).toHaveLength(0);

    await fx.client.tool.confirm({ conversationId: id, toolCallId: "keep_1", action: "confirm" });
    const end = await events.waitForEnd(generationId);
    expect(end.method).toBe("generation_complete");
    expect(end.params.final).toBe(true);
    expect(events.flow()).toEqual(RESUMED_ROUND);
    const seqs = events.events.map((e) => e.params.seq);
    expect(seqs.every((s, i) => s > seqBefore && (i === 0 || s > seqs[i - 1]!))).toBe(true);

    expect(fx.fake.requests).toHaveLength(1);
    expect(fx.fake.rejected).toEqual([]);
    const messages = fx.fake.requests[0]!.messages;
    expect(messages.at(-2)).toMatchObject({ role: "assistant", content: "I will run it.", tool_calls: [{ id: "keep_1" }] });
    expect(messages.at(-1)).toMatchObject({ role: "tool", tool_call_id: "keep_1" });
    expect(messages.at(-1).content).toContain("resumed-after-crash");
    const { records } = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
    expect(records!.map((r) => (r.type === "message" ? r.role : r.type === "tool_call" ? `tool:${r.status}` : r.type))).toEqual([
      "user",
      "assistant",
      "tool:completed",
      "assistant",
    ]);
  });

  it("tool.confirm with no step resumes the loop: the call runs, then the model is called", async () => {
    const { id, seqBefore } = await crashWithPendingCall("echo confirmed-directly");
    const fx = await fixtureOnDataDir();
    const events = new EventRecorder(fx.client, id);
    await fx.client.conversation.subscribe({ conversationId: id });
    fx.fake.enqueue({ kind: "reply", text: ["Saw it."] });

    const result = await fx.client.tool.confirm({ conversationId: id, toolCallId: "keep_1", action: "confirm" });
    expect(result.status).toBe("executing");
    const first = await events.waitForMethod("tool_pending");
    const generationId = first.params.generationId;
    expect(first.params.seq).toBeGreaterThan(seqBefore);
    const end = await events.waitForEnd(generationId);
    expect(end.method).toBe("generation_complete");
    expect(end.params.final).toBe(true);
    expect(events.flow()).toEqual(RESUMED_ROUND);
    expect(events.events.find((e) => e.method === "tool_completed")!.params.record.result).toContain("confirmed-directly");
    expect(fx.fake.requests).toHaveLength(1);
    expect(fx.fake.requests[0]!.messages.at(-1)).toMatchObject({ role: "tool", tool_call_id: "keep_1" });
    expect(fx.fake.rejected).toEqual([]);
    // Settled now: a second decision is refused.
    const again = await fx.client.tool.confirm({ conversationId: id, toolCallId: "keep_1", action: "confirm" }).catch((e) => e);
    expect(again.code).toBe(-32022);
  });

  it("tool.confirm skip with no step: stored as skipped by the user, and the model is told", async () => {
    const { id } = await crashWithPendingCall("echo never");
    const fx = await fixtureOnDataDir();
    const events = new EventRecorder(fx.client, id);
    await fx.client.conversation.subscribe({ conversationId: id });
    fx.fake.enqueue({ kind: "reply", text: ["Understood."] });
    const result = await fx.client.tool.confirm({ conversationId: id, toolCallId: "keep_1", action: "skip" });
    expect(result.status).toBe("skipped");
    const skipped = await events.waitForMethod("tool_skipped");
    expect(skipped.params.reason).toBe("user");
    await events.waitForEnd(skipped.params.generationId);
    expect(events.methods()).not.toContain("tool_executing");
    expect(fx.fake.requests[0]!.messages.at(-1).content).toMatch(/declined/i);
    expect(fx.fake.rejected).toEqual([]);
  });
});

describe("after a crash while a tool was running", { timeout: 30_000 }, () => {
  it("the stale call is reported failed (never left executing) and the next request is valid", async () => {
    const fake = await fakeServer();
    fake.enqueue({ kind: "reply", toolCalls: [shellCall("echo BASH:$$; sleep 30", "run_1")] });
    const first = await spawnServer(fake);
    const client = await connect(first.url);
    const { id, events } = await newConversation(client);
    await client.step({ conversationId: id, autoConfirm: true });
    const out = await events.waitFor((e) => e.method === "tool_output" && /BASH:\d+/.test(e.params.chunk), 10_000);
    const bashPid = Number(/BASH:(\d+)/.exec(out.params.chunk)![1]);
    // The tool's group is detached: it outlives a SIGKILLed server. End it when the test is over.
    cleanups.push(() => {
      try {
        process.kill(-bashPid, "SIGKILL");
      } catch {
        // already gone
      }
    });
    await storedStatus(id, "executing");
    const seqBefore = (await client.conversation.get({ conversationId: id })).state.seq;
    await first.crash();

    const fx = await fixtureOnDataDir();
    const got = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
    expect(got.state.generating).toBe(false);
    expect(got.state.pendingTools).toEqual([]);
    expect(got.state.seq).toBeGreaterThan(seqBefore);

    const recorder = new EventRecorder(fx.client, id);
    await fx.client.conversation.subscribe({ conversationId: id });
    fx.fake.enqueue({ kind: "reply", text: ["The server restarted."] });
    const { generationId } = await fx.client.step({ conversationId: id });
    const end = await recorder.waitForEnd(generationId);
    expect(end.method).toBe("generation_complete");
    // The call was not offered again: it had started once.
    expect(recorder.methods()).not.toContain("tool_pending");
    const { records } = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
    expect(records!.find((r) => r.type === "tool_call")).toMatchObject({ toolCallId: "run_1", status: "failed", success: false });
    expect(fx.fake.rejected).toEqual([]);
    const answer = fx.fake.requests[0]!.messages.find((m: any) => m.role === "tool" && m.tool_call_id === "run_1");
    expect(answer.content).toMatch(/server stopped/i);
  });
});

describe("after a graceful stop", { timeout: 30_000 }, () => {
  it("seq continues above the old one and a stored conversation is intact", async () => {
    const fx1 = await startAgentFixture({ config: { server: { dataDir } } });
    cleanups.push(() => fx1.close());
    fx1.fake.enqueue({ kind: "reply", text: ["first life"] });
    const { id, events } = await newConversation(fx1.client);
    const { generationId } = await fx1.client.step({ conversationId: id });
    await events.waitForEnd(generationId);
    const seqBefore = events.events.at(-1)!.params.seq;
    await fx1.server.stop();
    await fx1.fake.close();

    const fx2 = await fixtureOnDataDir();
    const got = await fx2.client.conversation.get({ conversationId: id, includeRecords: true });
    expect(got.state.seq).toBeGreaterThan(seqBefore);
    expect(got.records!.map((r) => r.type === "message" && r.content)).toEqual(["hello", "first life"]);
    const recorder = new EventRecorder(fx2.client, id);
    await fx2.client.conversation.subscribe({ conversationId: id });
    fx2.fake.enqueue({ kind: "reply", text: ["second life"] });
    const next = await fx2.client.step({ conversationId: id });
    await recorder.waitForEnd(next.generationId);
    expect(recorder.events[0]!.params.seq).toBeGreaterThan(seqBefore);
    const history = fx2.fake.requests[0]!.messages.filter((m: any) => m.role !== "system");
    expect(history.map((m: any) => m.content)).toEqual(["hello", "first life"]);
  });

  it("a tool call waiting for confirmation when the server stops is offered again after the restart", async () => {
    const fx1 = await startAgentFixture({ config: { server: { dataDir } } });
    cleanups.push(() => fx1.close());
    fx1.fake.enqueue({ kind: "reply", toolCalls: [shellCall("echo after-graceful-restart", "grace_1")] });
    const { id, events } = await newConversation(fx1.client);
    await fx1.client.step({ conversationId: id });
    await events.waitForMethod("tool_pending");
    const seqBefore = (await fx1.client.conversation.get({ conversationId: id })).state.seq;
    await fx1.server.stop();
    await fx1.fake.close();

    const fx2 = await fixtureOnDataDir();
    const got = await fx2.client.conversation.get({ conversationId: id, includeRecords: true });
    expect(got.state.seq).toBeGreaterThan(seqBefore);
    // DESIGN: "Pending tool calls are stored, so a restart re-offers them instead of losing them."
    expect(got.state.pendingTools).toEqual([
      { toolCallId: "grace_1", toolName: "shell", arguments: { command: "echo after-graceful-restart" }, kind: "execute", title: "Run echo after-graceful-restart", locations: [], rememberAs: { tool: "shell", prefix: "echo" } },
    ]);
    const recorder = new EventRecorder(fx2.client, id);
    await fx2.client.conversation.subscribe({ conversationId: id });
    fx2.fake.enqueue({ kind: "reply", text: ["ok"] });
    await fx2.client.tool.confirm({ conversationId: id, toolCallId: "grace_1", action: "confirm" });
    const completed = await recorder.waitForMethod("tool_completed");
    expect(completed.params.record.result).toContain("after-graceful-restart");
  });
});
