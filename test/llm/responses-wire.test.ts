/**
 * The Responses API wire: how our messages become Responses input items,
 * how a recorded event stream reads, and the shared model call (retries,
 * timeouts, error mapping, interrupt) on this wire against the fake, through
 * the real openai SDK. Last, end to end through the server: encrypted
 * reasoning items stored on the record and sent back on the next model call.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { ConversationRecord } from "../../protocol/index.js";
import { buildLlmContext } from "../../src/context/build-llm-context.js";
import type { ChatMessage } from "../../src/llm/chat-message.js";
import { createWireProvider, type WireProviderOptions } from "../../src/llm/create-provider.js";
import { LlmError, type ChatRequest, type LlmProvider, type StreamEvent } from "../../src/llm/provider.js";
import { chatRequestBody } from "../../src/llm/wires/chat-wire.js";
import { responsesInput, responsesRequestBody } from "../../src/llm/wires/responses-request.js";
import { ResponsesStream } from "../../src/llm/wires/responses-wire.js";
import { DeltaBatch } from "../../src/llm/wires/wire.js";
import { newConversation, useAgentFixture } from "../harness/agent-fixture.js";
import { ENCRYPTED_PREFIX, startFakeOpenAI, validateResponsesRequest, type FakeOpenAI } from "../fake-openai/server.js";

function request(overrides: Partial<ChatRequest> = {}): ChatRequest {
  return { model: "fake-model", messages: [{ role: "user", content: "hi" }], tools: [], signal: new AbortController().signal, ...overrides };
}

const call = (id: string, name = "shell", args = "{}") => ({ id, type: "function" as const, function: { name, arguments: args } });
const reasoningItem = { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "hm" }], encrypted_content: `${ENCRYPTED_PREFIX}x` };

describe("request mapping", () => {
  it("maps each message kind to its item, in order, with the leading system message as instructions", () => {
    const messages: ChatMessage[] = [
      { role: "system", content: "be brief" },
      { role: "user", content: "look" },
      { role: "user", content: [{ type: "text", text: "this:" }, { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }] },
      { role: "assistant", content: "Running.", tool_calls: [call("c1", "shell", '{"command":"ls"}'), call("c2", "read_file")], providerItems: [reasoningItem] },
      { role: "tool", tool_call_id: "c1", content: "a.txt" },
      { role: "tool", tool_call_id: "c2", content: "text" },
      { role: "system", content: "a later note" },
      { role: "assistant", content: "Done." },
    ];
    const { instructions, input } = responsesInput(messages);
    expect(instructions).toBe("be brief");
    expect(input).toEqual([
      { type: "message", role: "user", content: [{ type: "input_text", text: "look" }] },
      {
        type: "message",
        role: "user",
        content: [
          { type: "input_text", text: "this:" },
          { type: "input_image", image_url: "data:image/png;base64,AAAA", detail: "auto" },
        ],
      },
      // The turn's reasoning goes back first, then its text, then its calls.
      reasoningItem,
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "Running.", annotations: [] }] },
      { type: "function_call", call_id: "c1", name: "shell", arguments: '{"command":"ls"}' },
      { type: "function_call", call_id: "c2", name: "read_file", arguments: "{}" },
      { type: "function_call_output", call_id: "c1", output: "a.txt" },
      { type: "function_call_output", call_id: "c2", output: "text" },
      { type: "message", role: "system", content: [{ type: "input_text", text: "a later note" }] },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "Done.", annotations: [] }] },
    ]);
    expect(validateResponsesRequest({ model: "m", instructions, input, stream: true, store: false })).toBeNull();
  });

  it("stays orphan-free: drops an output nobody asked for, answers a call left without one, drops items without a following item", () => {
    const messages: ChatMessage[] = [
      { role: "user", content: "x" },
      { role: "tool", tool_call_id: "ghost", content: "orphan" },
      { role: "assistant", content: null, tool_calls: [call("c1")] },
      { role: "assistant", content: null, providerItems: [reasoningItem] },
      { role: "user", content: "y" },
    ];
    const { input } = responsesInput(messages);
    expect(input.map((item) => item.type)).toEqual(["message", "function_call", "function_call_output", "message"]);
    expect(input[2]).toEqual({ type: "function_call_output", call_id: "c1", output: "[no result]" });
    expect(validateResponsesRequest({ model: "m", input, stream: true, store: false })).toBeNull();
  });

  it("what the context builder makes of a truncated tool history is a valid request", () => {
    const at = "2026-01-01T00:00:00.000Z";
    const records: ConversationRecord[] = [{ type: "message", id: "r0", role: "user", content: "go", timestamp: at }];
    for (let round = 0; round < 4; round++) {
      records.push({
        type: "message",
        id: `a${round}`,
        role: "assistant",
        content: "",
        toolCalls: [{ toolCallId: `t${round}`, toolName: "shell" }],
        providerItems: [{ ...reasoningItem, id: `rs_${round}` }],
        timestamp: at,
      });
      // The last round's call is still pending (interrupted before it ran): it must be answered anyway.
      if (round < 3) {
        records.push({ type: "tool_call", id: `c${round}`, toolCallId: `t${round}`, toolName: "shell", arguments: { command: "ls" }, result: "out", success: true, status: "completed", timestamp: at });
      }
    }
    const messages = buildLlmContext(records, { toolHistoryRounds: 1, system: "sys" });
    const body = responsesRequestBody(request({ messages }));
    expect(validateResponsesRequest(body)).toBeNull();
    const items = body.input as Array<{ type: string; call_id?: string; id?: string; output?: string }>;
    expect(items.filter((i) => i.type === "reasoning").map((i) => i.id)).toEqual(["rs_0", "rs_1", "rs_2", "rs_3"]);
    expect(items.find((i) => i.type === "function_call_output" && i.call_id === "t0")!.output).toContain("output omitted");
    expect(items.find((i) => i.type === "function_call_output" && i.call_id === "t3")!.output).toContain("not run");
  });

  it("maps tools and controls; sends the reasoning summary and encrypted reasoning only when reasoning is asked for", () => {
    const tools = [{ name: "shell", description: "Run", parameters: { type: "object", properties: {} } }];
    const body = responsesRequestBody(request({ tools, temperature: 0.2, maxTokens: 300, reasoning: "high" }));
    expect(body).toMatchObject({
      model: "fake-model",
      stream: true,
      store: false,
      temperature: 0.2,
      max_output_tokens: 300,
      reasoning: { effort: "high", summary: "auto" },
      include: ["reasoning.encrypted_content"],
      tools: [{ type: "function", name: "shell", description: "Run", parameters: tools[0]!.parameters, strict: false }],
    });
    for (const reasoning of [undefined, "off"] as const) {
      const plain = responsesRequestBody(request({ reasoning }));
      expect(plain).not.toHaveProperty("reasoning");
      expect(plain).not.toHaveProperty("include");
      expect(plain).not.toHaveProperty("tools");
    }
    expect(responsesRequestBody(request(), { encryptedReasoning: true }).include).toEqual(["reasoning.encrypted_content"]);
    expect(responsesRequestBody(request({ reasoning: "low" }), { encryptedReasoning: false })).not.toHaveProperty("include");
  });

  it("the chat wire leaves provider items out of its messages", () => {
    const messages: ChatMessage[] = [
      { role: "user", content: "x" },
      { role: "assistant", content: "y", providerItems: [reasoningItem] },
    ];
    expect(chatRequestBody(request({ messages })).messages).toEqual([
      { role: "user", content: "x" },
      { role: "assistant", content: "y" },
    ]);
  });
});

/** Feeds recorded event payloads to a fresh stream reader: the deltas, and the done event or the error. */
function readRecorded(events: object[]): { deltas: StreamEvent[]; done?: StreamEvent; error?: unknown } {
  const stream = new ResponsesStream();
  const batch = new DeltaBatch();
  try {
    for (const event of events) if (stream.feed(JSON.stringify(event), batch)) break;
    return { deltas: batch.take(), done: stream.done() };
  } catch (error) {
    return { deltas: batch.take(), error };
  }
}

describe("stream parsing (recorded event sequences)", () => {
  // Shapes as the real API streams them (sequence numbers and ids trimmed to what matters).
  const recordedToolTurn = [
    { type: "response.created", response: { id: "resp_1", status: "in_progress", output: [] } },
    { type: "response.output_item.added", output_index: 0, item: { id: "rs_1", type: "reasoning", summary: [] } },
    { type: "response.reasoning_summary_text.delta", item_id: "rs_1", output_index: 0, summary_index: 0, delta: "**Plan**" },
    { type: "response.reasoning_summary_text.delta", item_id: "rs_1", output_index: 0, summary_index: 1, delta: "List files." },
    { type: "response.output_item.done", output_index: 0, item: { id: "rs_1", type: "reasoning", summary: [], encrypted_content: "gAAA" } },
    { type: "response.output_item.added", output_index: 1, item: { id: "msg_1", type: "message", role: "assistant", content: [] } },
    { type: "response.output_text.delta", item_id: "msg_1", output_index: 1, content_index: 0, delta: "Look" },
    { type: "response.output_text.delta", item_id: "msg_1", output_index: 1, content_index: 0, delta: "ing." },
    { type: "response.output_item.added", output_index: 2, item: { id: "fc_1", type: "function_call", call_id: "call_A", name: "shell", arguments: "" } },
    { type: "response.function_call_arguments.delta", item_id: "fc_1", output_index: 2, delta: '{"command":' },
    { type: "response.function_call_arguments.delta", item_id: "fc_1", output_index: 2, delta: '"ls"}' },
    { type: "response.output_item.added", output_index: 3, item: { id: "fc_2", type: "function_call", call_id: "call_B", name: "noop", arguments: "" } },
    { type: "response.function_call_arguments.done", item_id: "fc_2", output_index: 3, arguments: "{}" },
    { type: "response.completed", response: { id: "resp_1", status: "completed", usage: { input_tokens: 30, output_tokens: 12, total_tokens: 42 } } },
  ];

  it("text, reasoning summary parts as paragraphs, calls assembled from argument deltas, usage, encrypted reasoning kept", () => {
    const { deltas, done, error } = readRecorded(recordedToolTurn);
    expect(error).toBeUndefined();
    expect(deltas).toEqual([
      { type: "reasoning", delta: "**Plan**\n\nList files." },
      { type: "text", delta: "Looking." },
    ]);
    expect(done).toEqual({
      type: "done",
      finishReason: "tool_calls",
      // The recorded stream has no token details: not reported, so null.
      usage: { promptTokens: 30, cachedPromptTokens: null, completionTokens: 12, reasoningTokens: null, totalTokens: 42 },
      toolCalls: [
        { id: "call_A", name: "shell", arguments: '{"command":"ls"}' },
        { id: "call_B", name: "noop", arguments: "{}" },
      ],
      providerItems: [{ id: "rs_1", type: "reasoning", summary: [], encrypted_content: "gAAA" }],
    });
  });

  it("trusts the completed response's output list over what the deltas assembled", () => {
    const { done } = readRecorded([
      { type: "response.output_item.added", output_index: 0, item: { id: "fc_1", type: "function_call", call_id: "call_A", name: "shell", arguments: "" } },
      { type: "response.function_call_arguments.delta", item_id: "fc_1", output_index: 0, delta: '{"comm' },
      {
        type: "response.completed",
        response: {
          output: [
            { id: "rs_9", type: "reasoning", summary: [] }, // no encrypted content: not resolvable without store, so not kept
            { id: "fc_1", type: "function_call", call_id: "call_A", name: "shell", arguments: '{"command":"pwd"}' },
          ],
          usage: { input_tokens: 1, output_tokens: 2, total_tokens: 3 },
        },
      },
    ]);
    expect(done).toMatchObject({ finishReason: "tool_calls", toolCalls: [{ id: "call_A", name: "shell", arguments: '{"command":"pwd"}' }] });
    expect(done).not.toHaveProperty("providerItems");
  });

  it("response.incomplete at the token limit ends with finish reason length", () => {
    const { deltas, done } = readRecorded([
      { type: "response.output_text.delta", item_id: "m", output_index: 0, delta: "cut sh" },
      { type: "response.incomplete", response: { incomplete_details: { reason: "max_output_tokens" }, usage: { input_tokens: 5, output_tokens: 16, total_tokens: 21 } } },
    ]);
    expect(deltas).toEqual([{ type: "text", delta: "cut sh" }]);
    expect(done).toMatchObject({ finishReason: "length", toolCalls: [] });
  });

  it("response.failed, an error event, garbage and a stream without its end are LlmErrors", () => {
    const failed = readRecorded([
      { type: "response.output_text.delta", item_id: "m", output_index: 0, delta: "par" },
      { type: "response.failed", response: { status: "failed", error: { code: "server_error", message: "The model crashed." } } },
    ]);
    expect(failed.deltas).toEqual([{ type: "text", delta: "par" }]);
    expect(failed.error).toBeInstanceOf(LlmError);
    expect(failed.error).toMatchObject({ kind: "http", message: expect.stringContaining("The model crashed. (server_error)") });

    const errorEvent = readRecorded([{ type: "error", code: "rate_limit_exceeded", message: "Slow down.", param: null }]);
    expect(errorEvent.error).toMatchObject({ kind: "http", message: expect.stringContaining("Slow down. (rate_limit_exceeded)") });

    const stream = new ResponsesStream();
    expect(() => stream.feed("{not json", new DeltaBatch())).toThrow(expect.objectContaining({ kind: "malformed" }));

    const short = readRecorded([{ type: "response.output_text.delta", item_id: "m", output_index: 0, delta: "a" }]);
    expect(short.error).toMatchObject({ kind: "connection", message: expect.stringContaining("no response.completed") });
  });
});

describe("the responses wire against the fake", () => {
  let fake: FakeOpenAI;
  beforeAll(async () => {
    fake = await startFakeOpenAI({ apiKey: "sk-test" });
  });
  afterAll(async () => {
    await fake.close();
  });
  beforeEach(() => fake.reset());

  const provider = (options: WireProviderOptions = {}): LlmProvider =>
    createWireProvider("responses", { apiKey: "sk-test", baseURL: fake.url, retryBaseDelayMs: 5, retryMaxDelayMs: 20, ...options });

  async function collect(p: LlmProvider, req: ChatRequest, onEvent?: (e: StreamEvent) => void) {
    const events: StreamEvent[] = [];
    try {
      for await (const event of p.stream(req)) {
        events.push(event);
        onEvent?.(event);
      }
      return { events, error: undefined as unknown };
    } catch (error) {
      return { events, error };
    }
  }
  const text = (events: StreamEvent[]) => events.flatMap((e) => (e.type === "text" ? [e.delta] : [])).join("");

  it("posts to /responses with the extra headers, streams text and ends with usage", async () => {
    fake.enqueue({ kind: "reply", text: ["Hel", "lo"], usage: { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 } });
    const { events, error } = await collect(provider({ headers: { "x-gateway-route": "team-a" } }), request());
    expect(error).toBeUndefined();
    expect(text(events)).toBe("Hello");
    expect(events.at(-1)).toEqual({ type: "done", finishReason: "stop", usage: { promptTokens: 7, cachedPromptTokens: 0, completionTokens: 2, reasoningTokens: 0, totalTokens: 9 }, toolCalls: [] });
    expect(fake.wires).toEqual(["responses"]);
    expect(fake.exchanges[0]!.headers["x-gateway-route"]).toBe("team-a");
    expect(fake.requests[0]).toMatchObject({ stream: true, store: false, input: [{ type: "message", role: "user" }] });
  });

  it("maps HTTP errors to LlmError with their status; retries 429/5xx before the first token only", async () => {
    const unauthorized = await collect(provider({ apiKey: "sk-wrong" }), request());
    expect(unauthorized.error).toMatchObject({ name: "LlmError", kind: "http", status: 401 });

    // A request the real API refuses: the fake's 400 comes back with its message, not retried.
    const badTool = await collect(provider(), request({ tools: [{ name: "bad name", description: "", parameters: {} }] }));
    expect(badTool.error).toMatchObject({ kind: "http", status: 400, message: expect.stringContaining("tools[0].name") });

    fake.reset();
    fake.enqueue({ kind: "error", status: 500 }, { kind: "error", status: 429 }, { kind: "reply", text: ["ok"] });
    const retried = await collect(provider(), request());
    expect(retried.error).toBeUndefined();
    expect(text(retried.events)).toBe("ok");
    expect(fake.requests).toHaveLength(3);

    fake.reset();
    fake.enqueue({ kind: "reply", text: ["Hel", "lo"], cutAfter: 1 }, { kind: "reply", text: ["duplicate"] });
    const cut = await collect(provider(), request());
    expect(text(cut.events)).toBe("Hel");
    expect(cut.error).toMatchObject({ kind: "connection" });
    expect(fake.requests).toHaveLength(1);
  });

  it("response.failed mid-stream keeps the text before it and is not retried", async () => {
    fake.enqueue({ kind: "reply", text: ["a", "b"], streamError: { after: 1, message: "Overloaded mid-answer." } }, { kind: "reply", text: ["never"] });
    const { events, error } = await collect(provider(), request());
    expect(text(events)).toBe("a");
    expect(error).toMatchObject({ kind: "http", message: expect.stringContaining("Overloaded mid-answer.") });
    expect(fake.requests).toHaveLength(1);
  });

  it("times out an endpoint that goes silent", async () => {
    fake.enqueue({ kind: "reply", text: ["a", "b"], hangAfter: 1 });
    const started = Date.now();
    const { events, error } = await collect(provider({ idleTimeoutMs: 200 }), request());
    expect(text(events)).toBe("a");
    expect(error).toMatchObject({ kind: "timeout", message: expect.stringContaining("no data from the model endpoint for 200 ms") });
    expect(Date.now() - started).toBeLessThan(1500);
    expect(await fake.exchanges[0]!.ended).toBe("client_closed");
  });

  it("an interrupt ends the stream quietly and closes the HTTP request", async () => {
    fake.enqueue({ kind: "paced", tokens: 200, delayMs: 10 });
    const controller = new AbortController();
    const { events, error } = await collect(provider(), request({ signal: controller.signal }), (e) => {
      if (e.type === "text") controller.abort();
    });
    expect(error).toBeUndefined();
    expect(events.some((e) => e.type === "done")).toBe(false);
    expect(await fake.exchanges[0]!.ended).toBe("client_closed");
  });
});

describe("encrypted reasoning through the server", () => {
  const fx = useAgentFixture({ wire: "responses" });

  it("is stored on the assistant record (its summary as the reasoning record before it) and sent back, verbatim and before the turn's calls, on the next model call", async () => {
    fx.fake.enqueue(
      { kind: "reply", reasoning: ["Need to ", "look."], toolCalls: [{ id: "call_1", name: "shell", args: '{"command":"echo hi"}' }] },
      { kind: "reply", text: ["Done."] },
    );
    const { id, events } = await newConversation(fx.client, { settings: { reasoning: "high" } });
    const { generationId } = await fx.client.step({ conversationId: id, autoConfirm: true });
    await events.waitForEnd(generationId);

    const { records } = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
    const turnAt = records!.findIndex((r) => r.type === "message" && r.role === "assistant" && r.toolCalls);
    const turn = records![turnAt]!;
    expect(records![turnAt - 1]).toMatchObject({ type: "reasoning", content: "Need to look.", generationId });
    const items = turn.type === "message" ? turn.providerItems! : [];
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ type: "reasoning", encrypted_content: expect.stringMatching(new RegExp(`^${ENCRYPTED_PREFIX}`)) });

    expect(fx.fake.requests[0]).toMatchObject({ include: ["reasoning.encrypted_content"], reasoning: { effort: "high", summary: "auto" } });
    const second = fx.fake.requests[1]!.input as Array<Record<string, unknown>>;
    const at = second.findIndex((item) => item.type === "reasoning");
    expect(second[at]).toEqual(items[0]);
    expect(second.slice(at + 1).map((item) => item.type)).toEqual(["function_call", "function_call_output"]);
    expect(second[at + 1]).toMatchObject({ call_id: "call_1", name: "shell" });
    // The fake checked the request as the real API would (afterEach asserts nothing was refused).
  });
});
