/**
 * An ask_user question is stored with the conversation: after a restart it
 * is in the snapshot again (state.pendingInputs) and answering it starts a
 * generation that goes on with the answer. A secret answer reaches the
 * model but never the data dir, the event log or the server's log.
 */
import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createWireProvider } from "../../src/llm/create-provider.js";
import { createLogger } from "../../src/logging/logger.js";
import { startFakeOpenAI, type FakeOpenAI } from "../fake-openai/server.js";
import { newConversation } from "../harness/agent-fixture.js";
import { EventRecorder } from "../harness/event-recorder.js";
import { startTestServer, type TestServer } from "../harness/test-server.js";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function start(dataDir: string, fake: FakeOpenAI, logLines: string[]): Promise<TestServer> {
  const server = await startTestServer(
    { model: "fake-model", server: { dataDir, logLevel: "debug" } },
    {
      log: createLogger("debug", (line) => logLines.push(line)),
      provider: async () => createWireProvider("chat", { apiKey: "test-key", baseURL: fake.url, retryBaseDelayMs: 10, retryMaxDelayMs: 20 }),
    },
  );
  return server;
}

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const name of await readdir(dir)) {
    const path = join(dir, name);
    if ((await stat(path)).isDirectory()) out.push(...(await filesUnder(path)));
    else out.push(path);
  }
  return out;
}

describe("ask_user across a restart", () => {
  it("the question is offered again after a restart and answerable; a secret answer is never stored or logged", async () => {
    const SECRET = "hunter2-s3cr3t-value";
    const dataDir = await mkdtemp(join(tmpdir(), "agentwire-ask-restart-"));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const fake = await startFakeOpenAI({ apiKey: "test-key" });
    cleanups.push(() => fake.close());
    const logLines: string[] = [];

    fake.enqueue({ kind: "reply", toolCalls: [{ id: "call_pw", name: "ask_user", args: JSON.stringify({ question: "Database password?", secret: true }) }] });
    const one = await start(dataDir, fake, logLines);
    const client = await one.connect();
    const { id, events } = await newConversation(client);
    await client.step({ conversationId: id });
    const asked = (await events.waitForMethod("input_requested")).params;
    expect(asked).toMatchObject({ secret: true, toolCallId: "call_pw" });
    await one.stop();

    const two = await start(dataDir, fake, logLines);
    cleanups.push(() => two.stop());
    const again = await two.connect();
    const replay = new EventRecorder(again, id);
    const snapshot = await again.conversation.subscribe({ conversationId: id });
    expect(snapshot.state.generating).toBe(false);
    expect(snapshot.state.pendingInputs).toEqual([expect.objectContaining({ requestId: asked.requestId, question: "Database password?", secret: true })]);

    fake.enqueue({ kind: "reply", text: ["Connected."] });
    expect(await again.input.respond({ conversationId: id, requestId: asked.requestId, answer: SECRET })).toEqual({ outcome: "answered" });
    const started = await replay.waitForMethod("generation_started");
    await replay.waitForEnd(started.params.generationId);
    // The model read the real answer in the live request…
    expect(JSON.stringify(fake.requests.at(-1)!.messages)).toContain(SECRET);
    // …while the record, the events and the state hold the redaction.
    const completed = replay.of("tool_completed")[0]!;
    expect(completed.record).toMatchObject({ toolCallId: "call_pw", status: "completed", result: "[secret answer given]" });
    expect(replay.of("input_resolved")[0]).toMatchObject({ requestId: asked.requestId, outcome: "answered" });
    const { state } = await again.conversation.get({ conversationId: id });
    expect(state.pendingInputs).toEqual([]);
    expect(JSON.stringify(replay.events)).not.toContain(SECRET);
    await two.stop();

    for (const file of await filesUnder(dataDir)) expect(await readFile(file, "utf8"), file).not.toContain(SECRET);
    expect(logLines.length).toBeGreaterThan(0);
    expect(logLines.join("\n")).not.toContain(SECRET);
  });
});

describe("an interrupt after a restart", () => {
  it("cancels the stored question: input_resolved cancelled, the call fails saying so, and no model call follows", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "agentwire-ask-restart-"));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const fake = await startFakeOpenAI({ apiKey: "test-key" });
    cleanups.push(() => fake.close());
    fake.enqueue({ kind: "reply", toolCalls: [{ id: "call_q", name: "ask_user", args: JSON.stringify({ question: "Go on?", choices: ["yes", "no"] }) }] });
    const one = await start(dataDir, fake, []);
    const client = await one.connectInMemory();
    const { id, events } = await newConversation(client);
    await client.step({ conversationId: id });
    const asked = (await events.waitForMethod("input_requested")).params;
    await one.stop();

    const two = await start(dataDir, fake, []);
    cleanups.push(() => two.stop());
    const again = await two.connectInMemory();
    const replay = new EventRecorder(again, id);
    await again.conversation.subscribe({ conversationId: id });
    const requests = fake.requests.length;
    expect(await again.interrupt({ conversationId: id })).toEqual({ interrupted: true });
    await replay.waitForMethod("interrupted");
    expect(replay.of("input_resolved")).toEqual([expect.objectContaining({ requestId: asked.requestId, outcome: "cancelled" })]);
    expect(replay.of("tool_failed")[0]!.record).toMatchObject({ toolCallId: "call_q", status: "failed" });
    expect(replay.of("tool_failed")[0]!.record.result).toContain("cancelled");
    expect(fake.requests.length).toBe(requests);
    const { state } = await again.conversation.get({ conversationId: id });
    expect(state.pendingInputs).toEqual([]);
    expect(state.generating).toBe(false);
  });
});
