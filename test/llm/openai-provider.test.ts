import { getEventListeners } from "node:events";
import { createServer as createHttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createServer } from "node:net";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import type { ChatMessage } from "../../src/llm/chat-message.js";
import { OpenAIProvider, type OpenAIProviderOptions } from "../../src/llm/openai-provider.js";
import { LlmError, type ChatRequest, type StreamEvent } from "../../src/llm/provider.js";
import { startFakeOpenAI, type FakeOpenAI } from "../fake-openai/server.js";

let fake: FakeOpenAI;

beforeAll(async () => {
  fake = await startFakeOpenAI({ apiKey: "sk-test" });
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  fake.setModels(["fake-model"]);
});

function provider(options: OpenAIProviderOptions = {}): OpenAIProvider {
  return new OpenAIProvider({ apiKey: "sk-test", baseURL: fake.url, retryBaseDelayMs: 5, retryMaxDelayMs: 20, ...options });
}

function request(overrides: Partial<ChatRequest> = {}): ChatRequest {
  return {
    model: "fake-model",
    messages: [{ role: "user", content: "hi" }],
    tools: [],
    signal: new AbortController().signal,
    ...overrides,
  };
}

/**
 * How a test's consumer takes the deltas: yielded by the stream, or handed to ChatRequest.onDelta inside the
 * network read (what the agent loop does); the streaming and failure cases run both ways.
 */
const DELTA_MODES = ["iterated", "inline"] as const;
let deltaMode: (typeof DELTA_MODES)[number] = "iterated";

async function collect(
  p: OpenAIProvider,
  req: ChatRequest,
  onEvent?: (event: StreamEvent) => void,
): Promise<{ events: StreamEvent[]; error: unknown }> {
  const events: StreamEvent[] = [];
  if (deltaMode === "inline") {
    req = {
      ...req,
      onDelta: (type, delta) => {
        const event: StreamEvent = { type, delta };
        events.push(event);
        onEvent?.(event);
      },
    };
  }
  try {
    for await (const event of p.stream(req)) {
      // Handed to onDelta, a delta is never yielded too.
      if (deltaMode === "inline" && (event.type === "text" || event.type === "reasoning")) throw new Error("a delta was yielded");
      events.push(event);
      onEvent?.(event);
    }
    return { events, error: undefined };
  } catch (error) {
    return { events, error };
  }
}

const deltas = (events: StreamEvent[], type: "text" | "reasoning") =>
  events.flatMap((e) => (e.type === type ? [e.delta] : []));
const doneOf = (events: StreamEvent[]) => {
  const done = events.filter((e) => e.type === "done");
  expect(done).toHaveLength(1);
  expect(events.at(-1)).toBe(done[0]);
  return done[0] as Extract<StreamEvent, { type: "done" }>;
};

describe.each(DELTA_MODES)("OpenAIProvider streaming (%s deltas)", (mode) => {
  beforeEach(() => {
    deltaMode = mode;
  });
  afterEach(() => {
    deltaMode = "iterated";
  });
  it("streams text and ends with one done carrying finish reason and camelCase usage", async () => {
    fake.enqueue({ kind: "reply", text: ["Hel", "lo", " world"], usage: { prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 } });
    const { events, error } = await collect(provider(), request());
    expect(error).toBeUndefined();
    // Deltas that arrive in one network read are merged; order and text are kept.
    expect(deltas(events, "text").join("")).toBe("Hello world");
    expect(doneOf(events)).toEqual({
      type: "done",
      finishReason: "stop",
      // The fake sends no token details unless asked: not reported, so null.
      usage: { promptTokens: 11, cachedPromptTokens: null, completionTokens: 3, reasoningTokens: null, totalTokens: 14 },
      toolCalls: [],
    });
    const sent = fake.requests[0];
    expect(sent).toMatchObject({ model: "fake-model", stream: true, stream_options: { include_usage: true } });
    expect(sent).not.toHaveProperty("tools");
  });

  it("reads each answer to its end, so model calls reuse one keep-alive connection", async () => {
    // Leaving the response at [DONE], before its end, would destroy the socket: a new TCP (and,
    // against a real endpoint, TLS) handshake per model call.
    const p = provider();
    const before = fake.connectionsAccepted();
    for (let i = 0; i < 3; i++) {
      fake.enqueue({ kind: "reply", text: ["call ", String(i)] });
      const { events, error } = await collect(p, request());
      expect(error).toBeUndefined();
      expect(deltas(events, "text").join("")).toBe(`call ${i}`);
    }
    expect(fake.connectionsAccepted() - before).toBe(1);
  });

  it("ends the call at its last event when the body's end does not follow: a slow endpoint is not waited on", async () => {
    // The answer's last events come, then the response stays open (no chunked terminator): the call is done at [DONE].
    const chunk = (delta: object, finish: string | null) =>
      `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 0, model: "fake-model", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    const held = createHttpServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(chunk({ role: "assistant", content: "held " }, null));
        setTimeout(() => res.write(chunk({ content: "open" }, null) + chunk({}, "stop") + "data: [DONE]\n\n"), 20);
      });
    });
    await new Promise<void>((resolve) => held.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = held.address() as AddressInfo;
      const started = performance.now();
      const { events, error } = await collect(provider({ baseURL: `http://127.0.0.1:${port}/v1` }), request());
      expect(error).toBeUndefined();
      expect(deltas(events, "text").join("")).toBe("held open");
      expect(events.at(-1)).toMatchObject({ type: "done", finishReason: "stop" });
      // Well under the idle timeout (minutes): nothing waited for an end that never came.
      expect(performance.now() - started).toBeLessThan(2000);
    } finally {
      held.closeAllConnections();
      await new Promise((resolve) => held.close(resolve));
    }
  });

  it.each(["reasoning_content", "reasoning", "both"] as const)("yields reasoning from delta.%s before the text, once", async (field) => {
    fake.enqueue({ kind: "reply", reasoning: ["think", "ing"], reasoningField: field, text: ["answer"] });
    const { events, error } = await collect(provider(), request());
    expect(error).toBeUndefined();
    const kinds = events.map((e) => e.type).filter((t, i, all) => t !== all[i - 1]);
    expect(kinds).toEqual(["reasoning", "text", "done"]);
    expect(deltas(events, "reasoning").join("")).toBe("thinking");
  });

  it("assembles interleaved tool-call fragments by index, in index order", async () => {
    fake.enqueue({
      kind: "reply",
      text: ["Running."],
      toolCalls: [
        { id: "call_a", name: "shell", args: ['{"cmd"', ': "ls', ' -la"}'] },
        { id: "call_b", name: "read_file", args: ['{"path":', ' "README', '.md"}'] },
        { id: "call_c", name: "noop", args: "{}" },
      ],
    });
    const tools = [{ name: "shell", description: "Run a command", parameters: { type: "object", properties: { cmd: { type: "string" } } } }];
    const { events, error } = await collect(provider(), request({ tools }));
    expect(error).toBeUndefined();
    // The fake interleaves fragments across indices by default (checked in fake-openai.test.ts).
    const done = doneOf(events);
    expect(done.finishReason).toBe("tool_calls");
    expect(done.toolCalls).toEqual([
      { id: "call_a", name: "shell", arguments: '{"cmd": "ls -la"}' },
      { id: "call_b", name: "read_file", arguments: '{"path": "README.md"}' },
      { id: "call_c", name: "noop", arguments: "{}" },
    ]);
    expect(fake.requests[0].tools).toEqual([{ type: "function", function: tools[0] }]);
  });

  it("sends a tool-round history the fake accepts as valid", async () => {
    const messages: ChatMessage[] = [
      { role: "system", content: "be brief" },
      { role: "user", content: "list files" },
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "shell", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "c1", content: "a.txt" },
    ];
    const { error } = await collect(provider(), request({ messages }));
    expect(error).toBeUndefined();
    expect(fake.rejected).toEqual([]);
    expect(fake.requests[0].messages).toEqual(messages);
  });

  it("throws on a history the endpoint rejects, with its 400 message, and does not retry", async () => {
    const messages: ChatMessage[] = [{ role: "user", content: "x" }, { role: "tool", tool_call_id: "nope", content: "r" }];
    const { error } = await collect(provider(), request({ messages }));
    expect(error).toBeInstanceOf(LlmError);
    expect(error).toMatchObject({ kind: "http", status: 400 });
    expect((error as Error).message).toContain("must be a response to a preceeding message");
    expect(fake.requests).toHaveLength(1);
  });
});

describe.each(DELTA_MODES)("OpenAIProvider failures (%s deltas)", (mode) => {
  beforeEach(() => {
    deltaMode = mode;
  });
  afterEach(() => {
    deltaMode = "iterated";
  });
  it("surfaces 401 with the provider's message, without retrying", async () => {
    const { events, error } = await collect(provider({ apiKey: "sk-wrong" }), request());
    expect(events).toEqual([]);
    expect(error).toMatchObject({ name: "LlmError", kind: "http", status: 401 });
    expect((error as Error).message).toContain("Incorrect API key provided");
    expect(fake.rejected).toHaveLength(1);
  });

  it("surfaces 404 model not found with the provider's message, without retrying", async () => {
    fake.enqueue({ kind: "error", status: 404 }, { kind: "reply", text: ["never"] });
    const { error } = await collect(provider(), request({ model: "gpt-nope" }));
    expect(error).toMatchObject({ kind: "http", status: 404 });
    expect((error as Error).message).toContain("The model `gpt-nope` does not exist");
    expect(fake.requests).toHaveLength(1);
  });

  it("retries 429 up to maxRetries, then fails with the last status and message", async () => {
    const limited = { kind: "error", status: 429, message: "Slow down, please." } as const;
    fake.enqueue(limited, limited, limited, { kind: "reply", text: ["too late"] });
    const { events, error } = await collect(provider({ maxRetries: 2 }), request());
    // Each retry is told (a model_retry notice event); nothing else came.
    expect(events.map((e) => (e.type === "notice" ? [e.code, e.data.attempt, e.data.status] : e.type))).toEqual([
      ["model_retry", 1, 429],
      ["model_retry", 2, 429],
    ]);
    expect(error).toMatchObject({ kind: "http", status: 429 });
    expect((error as Error).message).toContain("Slow down, please.");
    expect(fake.requests).toHaveLength(3);
  });

  it("retries a 500 and succeeds on the second attempt", async () => {
    fake.enqueue({ kind: "error", status: 500 }, { kind: "reply", text: ["ok"] });
    const { events, error } = await collect(provider(), request());
    expect(error).toBeUndefined();
    expect(deltas(events, "text")).toEqual(["ok"]);
    expect(fake.requests).toHaveLength(2);
  });

  it("backs off between attempts", async () => {
    fake.enqueue({ kind: "error", status: 503 }, { kind: "reply", text: ["ok"] });
    const started = Date.now();
    const { error } = await collect(provider({ retryBaseDelayMs: 150, retryMaxDelayMs: 150 }), request());
    expect(error).toBeUndefined();
    expect(Date.now() - started).toBeGreaterThanOrEqual(110); // 150 ms −20 % jitter, minus timer slack
  });

  it("reports connection refused as a connection error", async () => {
    const port = await closedPort();
    const p = new OpenAIProvider({ baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 1, retryBaseDelayMs: 1 });
    const { events, error } = await collect(p, request());
    expect(events).toEqual([expect.objectContaining({ type: "notice", code: "model_retry", data: expect.objectContaining({ attempt: 1, status: null }) })]);
    expect(error).toMatchObject({ name: "LlmError", kind: "connection" });
    expect((error as Error).message).toContain("ECONNREFUSED");
    expect((error as Error).message).toContain(`127.0.0.1:${port}`);
  });

  it("turns a stream cut after the first token into an error, without retrying", async () => {
    fake.enqueue({ kind: "reply", text: ["Hel", "lo", " world"], cutAfter: 1 }, { kind: "reply", text: ["duplicate"] });
    const { events, error } = await collect(provider(), request());
    expect(deltas(events, "text")).toEqual(["Hel"]);
    expect(events.some((e) => e.type === "done")).toBe(false);
    expect(error).toMatchObject({ name: "LlmError", kind: "connection" });
    expect(fake.requests).toHaveLength(1);
    expect(await fake.exchanges[0].ended).toBe("server_cut");
  });

  it("retries a stream cut before any token was yielded", async () => {
    fake.enqueue({ kind: "reply", text: ["lost"], cutAfter: 0 }, { kind: "reply", text: ["kept"] });
    const { events, error } = await collect(provider(), request());
    expect(error).toBeUndefined();
    expect(deltas(events, "text")).toEqual(["kept"]);
    expect(fake.requests).toHaveLength(2);
  });

  it("does not pass off a stream without finish_reason as a short answer", async () => {
    fake.enqueue({ kind: "reply", text: ["partial"], finishReason: null });
    const { events, error } = await collect(provider(), request());
    expect(deltas(events, "text")).toEqual(["partial"]);
    expect(error).toMatchObject({ kind: "connection" });
    expect((error as Error).message).toContain("stream ended before completion");
  });

  it("reports a malformed chunk as malformed, without retrying", async () => {
    fake.enqueue({ kind: "reply", text: ["a", "b"], malformedAfter: 1 }, { kind: "reply", text: ["never"] });
    const { events, error } = await collect(provider(), request());
    expect(deltas(events, "text")).toEqual(["a"]);
    expect(error).toMatchObject({ name: "LlmError", kind: "malformed" });
    expect(fake.requests).toHaveLength(1);
  });

  it("reports an error chunk mid-stream after the text before it, without retrying", async () => {
    fake.enqueue({ kind: "reply", text: ["a", "b"], streamError: { after: 1, message: "Overloaded mid-answer." } }, { kind: "reply", text: ["never"] });
    const { events, error } = await collect(provider(), request());
    expect(deltas(events, "text")).toEqual(["a"]);
    expect(error).toMatchObject({ name: "LlmError", kind: "http", message: expect.stringContaining("Overloaded mid-answer.") });
    expect(fake.requests).toHaveLength(1);
  });

  it.each(["before_headers", "after_headers"] as const)("times out a server that hangs %s", async (when) => {
    fake.enqueue({ kind: "hang", when }, { kind: "reply", text: ["never"] });
    const started = Date.now();
    const { events, error } = await collect(provider({ idleTimeoutMs: 300 }), request());
    const elapsed = Date.now() - started;
    expect(events).toEqual([]);
    expect(error).toMatchObject({ name: "LlmError", kind: "timeout" });
    expect((error as Error).message).toContain("no data from the model endpoint for 300 ms");
    expect(elapsed).toBeGreaterThanOrEqual(280);
    expect(elapsed).toBeLessThan(2000);
    expect(fake.requests).toHaveLength(1);
    expect(await fake.exchanges[0].ended).toBe("client_closed");
  });

  it("times out a stream that goes silent after the first token", async () => {
    fake.enqueue({ kind: "reply", text: ["a", "b"], hangAfter: 1 });
    const { events, error } = await collect(provider({ idleTimeoutMs: 300 }), request());
    expect(deltas(events, "text")).toEqual(["a"]);
    expect(error).toMatchObject({ kind: "timeout" });
  });

  it("keeps a stream whose reads come closer than the idle timeout, however long it lasts", async () => {
    fake.enqueue({ kind: "paced", tokens: 12, delayMs: 60 });
    const { events, error } = await collect(provider({ idleTimeoutMs: 150 }), request());
    expect(error).toBeUndefined();
    expect(deltas(events, "text")).toHaveLength(12);
    expect(doneOf(events).finishReason).toBe("stop");
  });

  it("does not count a slow consumer against the idle timeout", async () => {
    fake.enqueue({ kind: "reply", text: ["a", "b", "c"] });
    const events: StreamEvent[] = [];
    for await (const event of provider({ idleTimeoutMs: 100 }).stream(request())) {
      events.push(event);
      await new Promise((r) => setTimeout(r, 150));
    }
    expect(deltas(events, "text").join("")).toBe("abc");
    expect(doneOf(events).finishReason).toBe("stop");
  });

  it("enforces the overall request timeout on a lively but endless stream", async () => {
    fake.enqueue({ kind: "paced", tokens: 1000, delayMs: 20 });
    const { events, error } = await collect(provider({ requestTimeoutMs: 300 }), request());
    expect(deltas(events, "text").length).toBeGreaterThan(3);
    expect(error).toMatchObject({ kind: "timeout" });
    expect((error as Error).message).toContain("within 300 ms");
  });
});

describe("OpenAIProvider cleanup", () => {
  it("leaves no listener on the caller's signal, whether the stream succeeds or fails", async () => {
    const controller = new AbortController();
    fake.enqueue({ kind: "reply", text: ["ok"] }, { kind: "error", status: 401 }, { kind: "hang" });
    expect((await collect(provider(), request({ signal: controller.signal }))).error).toBeUndefined();
    expect((await collect(provider(), request({ signal: controller.signal }))).error).toMatchObject({ status: 401 });
    expect((await collect(provider({ idleTimeoutMs: 50 }), request({ signal: controller.signal }))).error).toMatchObject({ kind: "timeout" });
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });
});

describe.each(DELTA_MODES)("OpenAIProvider completion (%s deltas)", (mode) => {
  beforeEach(() => {
    deltaMode = mode;
  });
  afterEach(() => {
    deltaMode = "iterated";
  });
  it("aborts nothing once an answer was read to its end (an abort at every turn's end cost an AbortError and its listeners)", async () => {
    // The second answer is paced: its last events and the body's end come in a network read of their own.
    // Asked inside that read's 'data' event, the HTTP parser had not yet marked the body complete, so every
    // inline read was cut and its request aborted.
    const abort = vi.spyOn(AbortController.prototype, "abort");
    try {
      fake.enqueue({ kind: "reply", text: ["Hel", "lo"] }, { kind: "reply", text: ["paced ", "answer"], delayMs: 20 });
      for (const text of ["Hello", "paced answer"]) {
        const { events, error } = await collect(provider(), request());
        expect(error).toBeUndefined();
        expect(deltas(events, "text").join("")).toBe(text);
      }
      expect(abort).not.toHaveBeenCalled();
    } finally {
      abort.mockRestore();
    }
  });
});

describe("OpenAIProvider abort", () => {
  it("ends quietly mid-stream and closes the HTTP connection", async () => {
    fake.enqueue({ kind: "paced", tokens: 200, delayMs: 10 });
    const controller = new AbortController();
    const { events, error } = await collect(provider(), request({ signal: controller.signal }), (event) => {
      if (event.type === "text") controller.abort();
    });
    expect(error).toBeUndefined();
    expect(events.filter((e) => e.type === "text").length).toBeGreaterThanOrEqual(1);
    expect(events.filter((e) => e.type === "text").length).toBeLessThan(5);
    expect(events.some((e) => e.type === "done")).toBe(false);
    expect(await fake.exchanges[0].ended).toBe("client_closed");
  });

  it("ends quietly when aborted before the response headers", async () => {
    fake.enqueue({ kind: "hang" });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const started = Date.now();
    const { events, error } = await collect(provider(), request({ signal: controller.signal }));
    expect(error).toBeUndefined();
    expect(events).toEqual([]);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(await fake.exchanges[0].ended).toBe("client_closed");
  });

  it("ends quietly when aborted during a retry backoff", async () => {
    fake.enqueue({ kind: "error", status: 500 }, { kind: "reply", text: ["never"] });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const started = Date.now();
    const { events, error } = await collect(provider({ retryBaseDelayMs: 5000, retryMaxDelayMs: 5000 }), request({ signal: controller.signal }));
    expect(error).toBeUndefined();
    expect(events.map((e) => e.type)).toEqual(["notice"]); // the retry it was waiting for was told

    expect(Date.now() - started).toBeLessThan(1000);
    expect(fake.requests).toHaveLength(1);
  });

  it("sends nothing when the signal is already aborted", async () => {
    const { events, error } = await collect(provider(), request({ signal: AbortSignal.abort() }));
    expect(error).toBeUndefined();
    expect(events).toEqual([]);
    expect(fake.requests).toHaveLength(0);
  });

  it("closes the HTTP connection when the consumer stops iterating", async () => {
    fake.enqueue({ kind: "paced", tokens: 200, delayMs: 10 });
    for await (const event of provider().stream(request())) {
      if (event.type === "text") break;
    }
    expect(await fake.exchanges[0].ended).toBe("client_closed");
  });
});

describe("OpenAIProvider.listModels", () => {
  it("maps the endpoint's models", async () => {
    fake.setModels([{ id: "m1", ownedBy: "acme" }, "m2"]);
    expect(await provider().listModels()).toEqual([
      { id: "m1", ownedBy: "acme" },
      { id: "m2", ownedBy: "fake-openai" },
    ]);
  });

  it("throws an http 404 LlmError when the endpoint lists no models", async () => {
    fake.setModels(null);
    const error = await provider().listModels().catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "LlmError", kind: "http", status: 404 });
    expect((error as Error).message).toContain(`the endpoint at ${fake.url} lists no models`);
  });

  it("treats an empty list like a 404", async () => {
    fake.setModels([]);
    const error = await provider().listModels().catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: "http", status: 404 });
  });

  it("surfaces a wrong key as 401", async () => {
    const error = await provider({ apiKey: "sk-wrong" }).listModels().catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: "http", status: 401 });
  });
});

/** A port that was just free: listen on 0, note it, close. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
