/**
 * The fake's Responses API endpoint over plain HTTP (no SDK): it refuses
 * what the real API refuses, with an OpenAI-shaped error body naming the
 * parameter, and streams a script as typed events in the real order.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "./server.js";

let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => fake.reset());

async function post(body: unknown): Promise<{ status: number; text: string; json?: any }> {
  const response = await fetch(`${fake.url}/responses`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // an event stream
  }
  return { status: response.status, text, json };
}

const base = { model: "fake-model", stream: true, store: false };
const user = { type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] };
const fnCall = (callId: string) => ({ type: "function_call", call_id: callId, name: "shell", arguments: "{}" });
const fnOutput = (callId: string) => ({ type: "function_call_output", call_id: callId, output: "ok" });

describe("fake Responses API validation", () => {
  it.each([
    ["an unknown top-level parameter", { ...base, input: [user], messages: [] }, 400, "Unknown parameter: 'messages'.", "messages"],
    ["an orphan function_call_output", { ...base, input: [user, fnOutput("call_x")] }, 400, "No tool call found for function call output with call_id call_x.", "input"],
    ["a function_call without its output", { ...base, input: [user, fnCall("call_y")] }, 400, "No tool output found for function call call_y.", "input"],
    ["a function_call without a call id", { ...base, input: [user, { type: "function_call", name: "shell", arguments: "{}" }] }, 400, "Missing required parameter: 'input[1].call_id'.", "input[1].call_id"],
    ["a bad item type", { ...base, input: [user, { type: "tool_result", call_id: "c" }] }, 400, "Invalid value: 'tool_result'.", "input[1].type"],
    ["input_text in an assistant message", { ...base, input: [user, { type: "message", role: "assistant", content: [{ type: "input_text", text: "x" }] }] }, 400, "Supported values are: 'output_text', 'refusal'.", "input[1].content[0].type"],
    ["a chat-shaped tool", { ...base, input: [user], tools: [{ type: "function", function: { name: "shell" } }] }, 400, "Missing required parameter: 'tools[0].name'.", "tools[0].name"],
    ["max_output_tokens under 16", { ...base, input: [user], max_output_tokens: 5 }, 400, "Expected a value >= 16", "max_output_tokens"],
    ["a reasoning item without its following item", { ...base, input: [user, { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "enc_fake_x" }] }, 400, "without its required following item", "input"],
    ["a reasoning id with store false and no encrypted content", { ...base, input: [user, { type: "reasoning", id: "rs_2", summary: [] }, fnCall("c"), fnOutput("c")] }, 404, "Items are not persisted when `store` is set to false", "input"],
    ["encrypted content the fake never issued", { ...base, input: [user, { type: "reasoning", id: "rs_3", summary: [], encrypted_content: "forged" }, fnCall("c"), fnOutput("c")] }, 400, "could not be verified", "input"],
  ])("refuses %s", async (_name, body, status, message, param) => {
    const answer = await post(body);
    expect(answer.status).toBe(status);
    expect(answer.json).toEqual({ error: { message: expect.stringContaining(message), type: "invalid_request_error", param, code: null } });
    expect(fake.rejected).toHaveLength(1);
    expect(fake.rejected[0]).toMatchObject({ wire: "responses", status });
    expect(fake.requests).toHaveLength(1);
  });

  it("accepts a valid tool round with reasoning sent back, and streams typed events in order", async () => {
    fake.enqueue({ kind: "reply", reasoning: ["r"], text: ["Hi", "!"], toolCalls: [{ id: "c9", name: "shell", args: ['{"a"', ":1}"] }] });
    const answer = await post({
      ...base,
      instructions: "sys",
      include: ["reasoning.encrypted_content"],
      input: [user, { type: "reasoning", id: "rs_0", summary: [], encrypted_content: "enc_fake_earlier" }, fnCall("c1"), fnOutput("c1")],
      tools: [{ type: "function", name: "shell", description: "d", parameters: { type: "object" }, strict: false }],
    });
    expect(answer.status).toBe(200);
    expect(fake.rejected).toEqual([]);
    const frames = answer.text.trim().split("\n\n").map((frame) => {
      const [eventLine, dataLine] = frame.split("\n");
      const data = JSON.parse(dataLine!.slice("data: ".length));
      expect(eventLine).toBe(`event: ${data.type}`);
      return data;
    });
    expect(frames.map((f) => f.sequence_number)).toEqual(frames.map((_, i) => i));
    const types = frames.map((f) => f.type);
    expect(types[0]).toBe("response.created");
    expect(types.at(-1)).toBe("response.completed");
    expect(types.filter((t) => t.endsWith(".delta"))).toEqual([
      "response.reasoning_summary_text.delta",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.delta",
    ]);
    const completed = frames.at(-1).response;
    expect(completed.output.map((item: any) => item.type)).toEqual(["reasoning", "message", "function_call"]);
    expect(completed.output[0].encrypted_content).toMatch(/^enc_fake_/);
    expect(completed.output[2]).toMatchObject({ call_id: "c9", name: "shell", arguments: '{"a":1}' });
    expect(completed.usage).toMatchObject({ input_tokens: expect.any(Number), output_tokens: 5 });
    expect(fake.messagesOf(0)).toEqual([
      { role: "system", content: "sys" },
      { role: "user", content: "hi" },
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "shell", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "c1", content: "ok" },
    ]);
  });

  it("leaves encrypted content out unless it is asked for", async () => {
    fake.enqueue({ kind: "reply", reasoning: ["r"], text: ["x"] });
    const answer = await post({ ...base, input: [user] });
    expect(answer.status).toBe(200);
    expect(answer.text).not.toContain("encrypted_content");
  });
});
