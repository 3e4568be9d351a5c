/**
 * Model endpoint failures during a generation: each ends the generation with
 * exactly one `error` notification (LLM_ERROR, the HTTP status when there was
 * one, the provider's message), sets state.lastError, writes no assistant
 * record, and leaves the conversation usable.
 */
import { createServer } from "node:net";
import { performance } from "node:perf_hooks";
import { describe, expect, it } from "vitest";
import type { FakeScript } from "../fake-openai/server.js";
import { newConversation, startAgentFixture, useAgentFixture } from "../harness/agent-fixture.js";
import type { EventRecorder } from "../harness/event-recorder.js";

const LLM_ERROR = -32030;

const fx = useAgentFixture({ provider: { maxRetries: 1, idleTimeoutMs: 300 } });

function ofMethod(events: EventRecorder, method: string) {
  return events.events.filter((e) => e.method === method);
}

function assistantRecords(records: readonly any[]) {
  return records.filter((r) => r.type === "message" && r.role === "assistant");
}

/** Step once, expect it to end with one LLM error; returns that error's params. */
async function stepExpectingError(id: string, events: EventRecorder, model?: string, autoConfirm?: boolean) {
  const { generationId } = await fx.client.step({ conversationId: id, ...(model ? { model } : {}), ...(autoConfirm ? { autoConfirm } : {}) });
  const end = await events.waitForEnd(generationId, 8000);
  expect(end.method).toBe("error");
  const errors = ofMethod(events, "error");
  expect(errors).toHaveLength(1);
  expect(errors[0]!.params).toMatchObject({ generationId, code: LLM_ERROR });
  // Exactly one ending: no final generation_complete, no interrupted.
  expect(events.events.filter((e) => e.method === "generation_complete" && e.params.final)).toEqual([]);
  expect(events.methods()).not.toContain("interrupted");
  return { generationId, error: errors[0]!.params };
}

/** The conversation recovers: a good reply completes and clears lastError. */
async function recovers(id: string, events: EventRecorder) {
  const requestsBefore = fx.fake.requests.length;
  fx.fake.enqueue({ kind: "reply", text: ["recovered"] });
  const { generationId } = await fx.client.step({ conversationId: id });
  const end = await events.waitForEnd(generationId);
  expect(end.method).toBe("generation_complete");
  expect(end.params.final).toBe(true);
  expect(fx.fake.requests.length).toBe(requestsBefore + 1);
  const { records, state } = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
  expect(state.lastError).toBeNull();
  expect(state.generating).toBe(false);
  expect(assistantRecords(records!).at(-1)).toMatchObject({ content: "recovered" });
  return fx.fake.requests.at(-1)!;
}

describe("HTTP errors from the endpoint", () => {
  const cases: Array<{
    name: string;
    scripts: FakeScript[];
    status: number;
    message: RegExp;
    attempts: number;
    model?: string;
  }> = [
    {
      name: "401 (bad key), not retried",
      scripts: [{ kind: "error", status: 401 }],
      status: 401,
      message: /Incorrect API key provided/,
      attempts: 1,
    },
    {
      name: "404 (unknown model), not retried",
      scripts: [{ kind: "error", status: 404 }],
      status: 404,
      message: /The model `no-such-model` does not exist/,
      attempts: 1,
      model: "no-such-model",
    },
    {
      name: "429, after its retry",
      scripts: [
        { kind: "error", status: 429 },
        { kind: "error", status: 429, message: "Rate limit reached, second time." },
      ],
      status: 429,
      message: /Rate limit reached, second time\./,
      attempts: 2,
    },
    {
      name: "500, after its retry",
      scripts: [
        { kind: "error", status: 500 },
        { kind: "error", status: 500, message: "Still broken on attempt two." },
      ],
      status: 500,
      message: /Still broken on attempt two\./,
      attempts: 2,
    },
  ];

  for (const c of cases) {
    it(`${c.name}: one error event with the status and the provider's message; no record; usable after`, async () => {
      fx.fake.enqueue(...c.scripts);
      const { id, events } = await newConversation(fx.client);
      const { error } = await stepExpectingError(id, events, c.model);
      // generation_started is told once the request is on its way, or at the call's end: before the error in any case.
      const methods = events.methods();
      expect(methods.filter((m) => m === "generation_started")).toHaveLength(1);
      expect(methods.indexOf("generation_started")).toBeLessThan(methods.indexOf("error"));
      expect(error.status).toBe(c.status);
      expect(error.message).toMatch(c.message);
      expect(error.message).toContain(String(c.status));
      expect(fx.fake.exchanges).toHaveLength(c.attempts);
      if (c.model) expect(fx.fake.requests[0]!.model).toBe(c.model);

      const { records, state } = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
      expect(state.generating).toBe(false);
      expect(state.lastError).toMatchObject({ code: LLM_ERROR, status: c.status, message: error.message });
      expect(typeof state.lastError!.timestamp).toBe("string");
      expect(assistantRecords(records!)).toEqual([]);
      expect(ofMethod(events, "message_added")).toHaveLength(1); // the user's message only

      await recovers(id, events);
      expect(ofMethod(events, "error")).toHaveLength(1);
    });
  }

  it("a 500 followed by success on the retry completes normally with no error event", async () => {
    fx.fake.enqueue({ kind: "error", status: 500 }, { kind: "reply", text: ["second ", "try"] });
    const { id, events } = await newConversation(fx.client);
    const { generationId } = await fx.client.step({ conversationId: id });
    const end = await events.waitForEnd(generationId);
    expect(end.method).toBe("generation_complete");
    expect(end.params.final).toBe(true);
    expect(events.methods()).not.toContain("error");
    expect(fx.fake.exchanges).toHaveLength(2);
    // The retry is invisible to the client: one generation_started, before the text, and the text once.
    expect(ofMethod(events, "generation_started")).toHaveLength(1);
    expect(events.methods().indexOf("generation_started")).toBeLessThan(events.methods().indexOf("generation_progress"));
    const text = ofMethod(events, "generation_progress").map((e) => e.params.delta).join("");
    expect(text).toBe("second try");
    const { records, state } = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
    expect(state.lastError).toBeNull();
    expect(assistantRecords(records!)).toEqual([expect.objectContaining({ content: "second try" })]);
  });

  it("lastError set by a failure is cleared by the next successful generation, and a new failure replaces it", async () => {
    fx.fake.enqueue({ kind: "error", status: 401 });
    const { id, events } = await newConversation(fx.client);
    await stepExpectingError(id, events);
    await recovers(id, events);
    fx.fake.enqueue({ kind: "error", status: 403, message: "Not for you." });
    const { generationId } = await fx.client.step({ conversationId: id });
    await events.waitForEnd(generationId);
    const { state } = await fx.client.conversation.get({ conversationId: id });
    expect(state.lastError).toMatchObject({ code: LLM_ERROR, status: 403 });
    expect(state.lastError!.message).toContain("Not for you.");
  });
});

describe("connection failures", () => {
  it("connection refused: an error without status, naming the endpoint; the conversation stays usable", async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer();
      probe.listen(0, "127.0.0.1", () => {
        const p = (probe.address() as { port: number }).port;
        probe.close(() => resolve(p));
      });
    });
    const dead = await startAgentFixture({ provider: { maxRetries: 1, baseURL: `http://127.0.0.1:${port}/v1` } });
    try {
      const { id, events } = await newConversation(dead.client);
      const { generationId } = await dead.client.step({ conversationId: id });
      const end = await events.waitForEnd(generationId, 8000);
      expect(end.method).toBe("error");
      // A request that never left still told its start, before its error and the retry's notice.
      const methods = events.methods();
      expect(methods.indexOf("generation_started")).toBeGreaterThanOrEqual(0);
      expect(methods.indexOf("generation_started")).toBeLessThan(Math.min(...["error", "notice"].map((m) => methods.indexOf(m)).filter((i) => i >= 0)));
      const errors = ofMethod(events, "error");
      expect(errors).toHaveLength(1);
      expect(errors[0]!.params.code).toBe(LLM_ERROR);
      expect(errors[0]!.params).not.toHaveProperty("status");
      expect(errors[0]!.params.message).toContain(`127.0.0.1:${port}`);
      expect(errors[0]!.params.message).toMatch(/ECONNREFUSED|connect/i);
      const { records, state } = await dead.client.conversation.get({ conversationId: id, includeRecords: true });
      expect(state.lastError).toMatchObject({ code: LLM_ERROR, message: errors[0]!.params.message });
      expect(state.lastError).not.toHaveProperty("status");
      expect(assistantRecords(records!)).toEqual([]);
      // Nothing is running any more: a new step is accepted (and fails the same way).
      const again = await dead.client.step({ conversationId: id });
      expect((await events.waitForEnd(again.generationId, 8000)).method).toBe("error");
      // The fixture's own fake was never asked.
      expect(dead.fake.requests).toHaveLength(0);
    } finally {
      await dead.close();
    }
  });

  it("a stream cut mid-way: one error, no assistant record, no retry after tokens were shown", async () => {
    fx.fake.enqueue({ kind: "reply", text: ["one ", "two ", "three ", "four"], cutAfter: 2 });
    const { id, events } = await newConversation(fx.client);
    const { error } = await stepExpectingError(id, events);
    expect(error).not.toHaveProperty("status");
    expect(error.message.length).toBeGreaterThan(0);
    expect(await fx.fake.exchanges[0]!.ended).toBe("server_cut");
    expect(fx.fake.exchanges).toHaveLength(1);
    // The client saw some tokens, but nothing was stored.
    expect(ofMethod(events, "generation_progress").length).toBeGreaterThan(0);
    const { records } = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
    expect(assistantRecords(records!)).toEqual([]);
    const request = await recovers(id, events);
    expect(request.messages.at(-1)).toEqual({ role: "user", content: "hello" });
  });

  it("a cut before any token is retried transparently", async () => {
    fx.fake.enqueue({ kind: "reply", text: ["lost"], cutAfter: 0 }, { kind: "reply", text: ["kept"] });
    const { id, events } = await newConversation(fx.client);
    const { generationId } = await fx.client.step({ conversationId: id });
    const end = await events.waitForEnd(generationId);
    expect(end.method).toBe("generation_complete");
    expect(events.methods()).not.toContain("error");
    expect(fx.fake.exchanges).toHaveLength(2);
    const text = ofMethod(events, "generation_progress").map((e) => e.params.delta).join("");
    expect(text).toBe("kept");
  });

  it("a malformed chunk: one error, no record", async () => {
    fx.fake.enqueue({ kind: "reply", text: ["fine ", "then ", "garbage"], malformedAfter: 1 });
    const { id, events } = await newConversation(fx.client);
    const { error } = await stepExpectingError(id, events);
    expect(error).not.toHaveProperty("status");
    expect(error.message).toMatch(/JSON|malformed|parse/i);
    expect(fx.fake.exchanges).toHaveLength(1);
    const { records, state } = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
    expect(assistantRecords(records!)).toEqual([]);
    expect(state.lastError).toMatchObject({ code: LLM_ERROR, message: error.message });
    await recovers(id, events);
  });

  for (const when of ["before_headers", "after_headers"] as const) {
    it(`an endpoint that hangs (${when}) fails by the idle timeout within a few seconds`, async () => {
      fx.fake.enqueue({ kind: "hang", when });
      const { id, events } = await newConversation(fx.client);
      const started = performance.now();
      const { error } = await stepExpectingError(id, events);
      const ms = performance.now() - started;
      expect(ms).toBeLessThan(4000);
      expect(ms).toBeGreaterThanOrEqual(250);
      expect(error).not.toHaveProperty("status");
      // The message says what happened: nothing came for the configured idle time.
      expect(error.message).toMatch(/300 ms/);
      expect(error.message).toMatch(/no data|time/i);
      // Timeouts are not retried, and the hanging request was closed by us.
      expect(fx.fake.exchanges).toHaveLength(1);
      expect(await fx.fake.exchanges[0]!.ended).toBe("client_closed");
      const { records } = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
      expect(assistantRecords(records!)).toEqual([]);
      await recovers(id, events);
    });
  }

  it("a stream that stops mid-way (hangAfter) fails by the idle timeout; no record", async () => {
    fx.fake.enqueue({ kind: "reply", text: ["a", "b", "c"], hangAfter: 1 });
    const { id, events } = await newConversation(fx.client);
    const { error } = await stepExpectingError(id, events);
    expect(error.message).toMatch(/300 ms/);
    expect(await fx.fake.exchanges[0]!.ended).toBe("client_closed");
    const { records } = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
    expect(assistantRecords(records!)).toEqual([]);
  });
});

describe("a failure after a tool round", () => {
  it("leaves the tool records intact and the next request valid", async () => {
    fx.fake.enqueue(
      { kind: "reply", text: ["Checking."], toolCalls: [{ id: "t1", name: "shell", args: JSON.stringify({ command: "echo tool-ran" }) }] },
      { kind: "error", status: 500 },
      { kind: "error", status: 500, message: "Second model call broke." },
    );
    const { id, events } = await newConversation(fx.client);
    const { generationId, error } = await stepExpectingError(id, events, undefined, true);
    expect(error).toMatchObject({ status: 500 });
    expect(error.message).toContain("Second model call broke.");
    // The first model call completed (not final), the tool ran, then the second call failed.
    const completes = ofMethod(events, "generation_complete");
    expect(completes).toHaveLength(1);
    expect(completes[0]!.params).toMatchObject({ generationId, iteration: 1, final: false });
    expect(ofMethod(events, "generation_started").map((e) => e.params.iteration)).toEqual([1, 2]);
    expect(ofMethod(events, "tool_completed")).toHaveLength(1);

    const { records, state } = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
    expect(state.lastError).toMatchObject({ status: 500 });
    expect(state.pendingTools).toEqual([]);
    expect(records!.map((r) => (r.type === "message" ? r.role : r.type === "tool_call" ? `tool:${r.status}` : r.type))).toEqual(["user", "assistant", "tool:completed"]);
    const tool = records!.find((r) => r.type === "tool_call")!;
    expect(tool).toMatchObject({ toolCallId: "t1", success: true, arguments: { command: "echo tool-ran" } });
    expect(tool.type === "tool_call" && tool.result).toContain("tool-ran");

    const request = await recovers(id, events);
    expect(request.messages.slice(-3)).toEqual([
      expect.objectContaining({ role: "user", content: "hello" }),
      expect.objectContaining({ role: "assistant", content: "Checking.", tool_calls: [expect.objectContaining({ id: "t1" })] }),
      expect.objectContaining({ role: "tool", tool_call_id: "t1", content: expect.stringContaining("tool-ran") }),
    ]);
  });
});
