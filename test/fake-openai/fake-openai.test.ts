import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { parseStamps, startFakeOpenAI, type FakeOpenAI } from "./server.js";

let fake: FakeOpenAI;

beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.reset();
});

async function post(body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: any; text: string }> {
  const res = await fetch(`${fake.url}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {
    // SSE or garbage: the caller looks at text.
  }
  return { status: res.status, json, text };
}

const user = (content: string) => ({ role: "user", content });
const call = (id: string, name = "shell", args = "{}") => ({ id, type: "function", function: { name, arguments: args } });
const asstCalls = (...ids: string[]) => ({ role: "assistant", content: null, tool_calls: ids.map((id) => call(id)) });
const toolMsg = (id: string) => ({ role: "tool", tool_call_id: id, content: "ok" });
const chat = (messages: unknown[], extra: Record<string, unknown> = {}) => ({ model: "fake-model", messages, ...extra });

const tool = (name: string) => ({ type: "function", function: { name, description: "d", parameters: { type: "object" } } });

describe("fake-openai request validation", () => {
  const invalid: Array<[string, unknown, RegExp]> = [
    ["messages missing", { model: "m" }, /messages/],
    ["messages empty", chat([]), /empty array/],
    ["model missing", { messages: [user("hi")] }, /model/],
    ["unknown role", chat([{ role: "robot", content: "hi" }]), /Invalid value: 'robot'/],
    ["tool message without a preceding tool_calls", chat([user("hi"), toolMsg("a")]), /must be a response to a preceeding/],
    ["tool message with an id the block does not have", chat([user("hi"), asstCalls("a"), toolMsg("b")]), /must be a response/],
    [
      "tool message answering an earlier block, not the immediately preceding one",
      chat([user("hi"), asstCalls("a"), toolMsg("a"), asstCalls("b"), toolMsg("a"), toolMsg("b")]),
      /must be a response/,
    ],
    [
      "tool message after the block was closed by a user message",
      chat([user("hi"), asstCalls("a"), toolMsg("a"), user("next"), toolMsg("a")]),
      /must be a response/,
    ],
    ["tool call answered twice", chat([user("hi"), asstCalls("a"), toolMsg("a"), toolMsg("a")]), /must be a response/],
    ["tool_calls unanswered before the next user message", chat([user("hi"), asstCalls("a"), user("again")]), /did not have response messages: a/],
    ["tool_calls unanswered at the end", chat([user("hi"), asstCalls("a")]), /did not have response messages: a/],
    ["one of two tool_calls unanswered", chat([user("hi"), asstCalls("a", "b"), toolMsg("b"), user("x")]), /response messages: a$/],
    [
      "tool_calls followed by another assistant message",
      chat([user("hi"), asstCalls("a"), { role: "assistant", content: "x" }]),
      /did not have response messages/,
    ],
    ["tool call without id", chat([user("hi"), { role: "assistant", content: null, tool_calls: [{ type: "function", function: { name: "x", arguments: "{}" } }] }]), /tool_calls\[0\]\.id/],
    ["tool call without type", chat([user("hi"), { role: "assistant", content: null, tool_calls: [{ id: "a", function: { name: "x", arguments: "{}" } }] }]), /type/],
    ["tool call without function.name", chat([user("hi"), { role: "assistant", content: null, tool_calls: [{ id: "a", type: "function", function: { arguments: "{}" } }] }]), /function\.name/],
    ["tool call with object arguments", chat([user("hi"), { role: "assistant", content: null, tool_calls: [{ id: "a", type: "function", function: { name: "x", arguments: {} } }] }]), /function\.arguments/],
    ["empty tool_calls array", chat([user("hi"), { role: "assistant", content: "x", tool_calls: [] }]), /empty array/],
    ["duplicate tool call ids in one message", chat([user("hi"), asstCalls("a", "a"), toolMsg("a")]), /Duplicate/],
    ["duplicate tool call ids across messages", chat([user("hi"), asstCalls("a"), toolMsg("a"), asstCalls("a"), toolMsg("a")]), /Duplicate/],
    ["assistant with neither content nor tool_calls", chat([user("hi"), { role: "assistant", content: null }]), /content/],
    ["user content not a string", chat([{ role: "user", content: 42 }]), /content/],
    ["tool message without tool_call_id", chat([user("hi"), asstCalls("a"), { role: "tool", content: "x" }]), /tool_call_id/],
    ["tools empty", chat([user("hi")], { tools: [] }), /'tools': empty array/],
    ["tool without function name", chat([user("hi")], { tools: [{ type: "function", function: { parameters: {} } }] }), /function\.name/],
    ["tool with a name the API refuses", chat([user("hi")], { tools: [tool("has space")] }), /does not match pattern/],
    ["tool with a type other than function", chat([user("hi")], { tools: [{ type: "shell", function: { name: "x" } }] }), /tools\[0\]\.type/],
    ["tool with parameters not an object", chat([user("hi")], { tools: [{ type: "function", function: { name: "x", parameters: "{}" } }] }), /parameters/],
    ["duplicate tool names", chat([user("hi")], { tools: [tool("x"), tool("x")] }), /duplicate function name/],
    ["stream_options without stream", chat([user("hi")], { stream_options: { include_usage: true } }), /stream_options/],
    ["a body that is not JSON", "{nope", /could not parse the JSON/],
  ];

  it.each(invalid)("rejects %s with 400", async (_name, body, message) => {
    const res = await post(body);
    expect(res.status).toBe(400);
    expect(res.json.error.type).toBe("invalid_request_error");
    expect(res.json.error.message).toMatch(message);
    expect(fake.rejected).toHaveLength(1);
    expect(fake.rejected[0].status).toBe(400);
    expect(fake.exchanges).toHaveLength(0);
  });

  const valid: Array<[string, unknown]> = [
    ["a single user message", chat([user("hi")])],
    ["system first, in the middle and last", chat([{ role: "system", content: "s" }, user("hi"), { role: "system", content: "s2" }, user("x"), { role: "system", content: "s3" }])],
    ["developer role and content parts", chat([{ role: "developer", content: "d" }, { role: "user", content: [{ type: "text", text: "hi" }] }])],
    [
      "a full tool round answered out of order",
      chat([user("hi"), { role: "assistant", content: "let me look", tool_calls: [call("a"), call("b")] }, toolMsg("b"), toolMsg("a"), { role: "assistant", content: "done" }, user("thanks")]),
    ],
    ["a history ending with tool results", chat([user("hi"), asstCalls("a"), toolMsg("a")])],
    ["two consecutive tool rounds", chat([user("hi"), asstCalls("a"), toolMsg("a"), asstCalls("b", "c"), toolMsg("b"), toolMsg("c")])],
    ["tools well formed, with and without description", chat([user("hi")], { tools: [tool("shell"), { type: "function", function: { name: "read_file" } }] })],
    ["stream with stream_options", chat([user("hi")], { stream: true, stream_options: { include_usage: true } })],
  ];

  it.each(valid)("accepts %s", async (_name, body) => {
    const res = await post(body);
    expect(res.status).toBe(200);
    expect(fake.rejected).toHaveLength(0);
    expect(fake.requests).toEqual([body]);
  });
});

describe("fake-openai answers", () => {
  it("streams OpenAI-shaped chunks, a usage chunk with no choices, then [DONE]", async () => {
    fake.enqueue({ kind: "reply", text: ["Hel", "lo"], usage: { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 } });
    const res = await post(chat([user("hi")], { stream: true, stream_options: { include_usage: true } }));
    const events = res.text.split("\n\n").filter(Boolean);
    expect(events.at(-1)).toBe("data: [DONE]");
    const chunks = events.slice(0, -1).map((e) => {
      expect(e.startsWith("data: ")).toBe(true);
      return JSON.parse(e.slice(6));
    });
    for (const chunk of chunks) {
      expect(chunk).toMatchObject({ object: "chat.completion.chunk", model: "fake-model" });
      expect(typeof chunk.id).toBe("string");
      expect(typeof chunk.created).toBe("number");
    }
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? null)).toEqual(["", "Hel", "lo", null, null]);
    expect(chunks[3].choices[0].finish_reason).toBe("stop");
    expect(chunks[4].choices).toEqual([]);
    expect(chunks[4].usage).toEqual({ prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 });
  });

  it("interleaves tool-call fragments across indices, with id/type/name only in each first fragment", async () => {
    fake.enqueue({
      kind: "reply",
      toolCalls: [
        { id: "a", name: "one", args: ["{", '"x":1', "}"] },
        { id: "b", name: "two", args: ["{", "}"] },
      ],
    });
    const res = await post(chat([user("hi")], { stream: true }));
    const fragments = res.text
      .split("\n\n")
      .filter((e) => e.startsWith("data: {"))
      .flatMap((e) => JSON.parse(e.slice(6)).choices[0].delta.tool_calls ?? []);
    expect(fragments.map((f: any) => f.index)).toEqual([0, 1, 0, 1, 0]);
    expect(fragments[0]).toEqual({ index: 0, id: "a", type: "function", function: { name: "one", arguments: "{" } });
    expect(fragments[1]).toEqual({ index: 1, id: "b", type: "function", function: { name: "two", arguments: "{" } });
    expect(fragments.slice(2)).toEqual([
      { index: 0, function: { arguments: '"x":1' } },
      { index: 1, function: { arguments: "}" } },
      { index: 0, function: { arguments: "}" } },
    ]);
    expect(res.text).toContain('"finish_reason":"tool_calls"');
  });

  it("answers a plain completion when stream is off", async () => {
    fake.enqueue({ kind: "reply", text: ["a", "b"], toolCalls: [{ id: "c1", name: "x", args: ["{", "}"] }] });
    const res = await post(chat([user("hi")]));
    expect(res.json.object).toBe("chat.completion");
    expect(res.json.choices[0].message).toMatchObject({ content: "ab", tool_calls: [call("c1", "x", "{}")] });
    expect(res.json.choices[0].finish_reason).toBe("tool_calls");
  });

  it("stamps bench tokens with the monotonic clock, paced as the model name says", async () => {
    const before = process.hrtime.bigint();
    const res = await post(chat([user("hi")], { model: "bench-paced-4-20", stream: true }));
    const after = process.hrtime.bigint();
    const stamps = parseStamps(res.text);
    expect(stamps).toHaveLength(4);
    expect(stamps[0]).toBeGreaterThanOrEqual(before);
    expect(stamps[3]).toBeLessThanOrEqual(after);
    for (let i = 1; i < 4; i++) expect(Number(stamps[i] - stamps[i - 1]) / 1e6).toBeGreaterThanOrEqual(15);
  });

  it("bursts bench-burst-N tokens", async () => {
    const res = await post(chat([user("hi")], { model: "bench-burst-500", stream: true }));
    expect(parseStamps(res.text)).toHaveLength(500);
  });

  it("takes a script from the x-fake-script header", async () => {
    const res = await post(chat([user("hi")]), { "x-fake-script": JSON.stringify({ kind: "error", status: 429 }) });
    expect(res.status).toBe(429);
    expect(res.json.error.code).toBe("rate_limit_exceeded");
  });

  it("lists models, and answers 404 once models are unset", async () => {
    fake.setModels(["a", { id: "b", ownedBy: "me" }]);
    const ok = await fetch(`${fake.url}/models`);
    expect(await ok.json()).toMatchObject({
      object: "list",
      data: [{ id: "a", object: "model", owned_by: "fake-openai" }, { id: "b", object: "model", owned_by: "me" }],
    });
    fake.setModels(null);
    expect((await fetch(`${fake.url}/models`)).status).toBe(404);
    fake.setModels(["fake-model"]);
  });

  it("checks the API key when it has one", async () => {
    const locked = await startFakeOpenAI({ apiKey: "sk-right" });
    try {
      const body = JSON.stringify(chat([user("hi")]));
      const wrong = await fetch(`${locked.url}/chat/completions`, { method: "POST", headers: { authorization: "Bearer sk-wrong" }, body });
      expect(wrong.status).toBe(401);
      expect((await wrong.json()).error.code).toBe("invalid_api_key");
      const right = await fetch(`${locked.url}/chat/completions`, { method: "POST", headers: { authorization: "Bearer sk-right" }, body });
      expect(right.status).toBe(200);
      expect(locked.rejected.map((r) => r.status)).toEqual([401]);
    } finally {
      await locked.close();
    }
  });
});
