/**
 * ask_user: the model's question becomes input_requested (no tool.confirm:
 * asking is the approval), a client answers with input.respond, the first
 * answer wins, the answer must fit the choices or the form, an interrupt
 * cancels it, and the answer is the tool result the model reads — on both
 * wires.
 */
import { describe, expect, it } from "vitest";
import { ErrorCodes } from "../../protocol/index.js";
import { newConversation, useAgentFixture } from "../harness/agent-fixture.js";
import { EventRecorder } from "../harness/event-recorder.js";

const askCall = (args: Record<string, unknown>, id = "call_ask") => ({ kind: "reply" as const, toolCalls: [{ id, name: "ask_user", args: JSON.stringify(args) }] });
const done = { kind: "reply" as const, text: ["Thanks."] };

async function rpcError(promise: Promise<unknown>): Promise<{ code: number; message: string; data?: any }> {
  try {
    await promise;
  } catch (error) {
    return error as { code: number; message: string; data?: any };
  }
  throw new Error("expected the request to fail");
}

for (const wire of ["chat", "responses"] as const) {
  describe(`ask_user round trip (${wire} wire)`, () => {
    const fx = useAgentFixture({ wire });

    it("asks without tool.confirm; the answer is the tool result the model reads", async () => {
      fx.fake.enqueue(askCall({ question: "Which branch?" }), done);
      const { id, events } = await newConversation(fx.client);
      const { generationId } = await fx.client.step({ conversationId: id });
      const asked = (await events.waitForMethod("input_requested")).params;
      expect(asked).toMatchObject({ conversationId: id, source: "ask_user", question: "Which branch?", toolCallId: "call_ask", generationId });
      const { state } = await fx.client.conversation.get({ conversationId: id });
      expect(state.pendingInputs).toEqual([expect.objectContaining({ requestId: asked.requestId, question: "Which branch?" })]);
      expect(state.pendingTools).toEqual([]);

      expect(await fx.client.input.respond({ conversationId: id, requestId: asked.requestId, answer: "main" })).toEqual({ outcome: "answered" });
      await events.waitForEnd(generationId);
      expect(events.of("input_resolved")).toEqual([expect.objectContaining({ requestId: asked.requestId, toolCallId: "call_ask", outcome: "answered" })]);
      const completed = events.of("tool_completed")[0]!;
      expect(completed.record.result).toBe("main");
      expect(JSON.stringify(fx.fake.messagesOf(1))).toContain("main");
      expect((await fx.client.conversation.get({ conversationId: id })).state.pendingInputs).toEqual([]);
    });
  });
}

describe("ask_user answers", () => {
  const fx = useAgentFixture();

  it("choices: one of two clients answers; the second answer is refused with INPUT_NOT_PENDING", async () => {
    fx.fake.enqueue(askCall({ question: "Deploy where?", choices: ["staging", "production"] }), done);
    const { id, events } = await newConversation(fx.client);
    const other = await fx.connect();
    const otherEvents = new EventRecorder(other, id);
    await other.conversation.subscribe({ conversationId: id });
    const { generationId } = await fx.client.step({ conversationId: id });
    const asked = (await otherEvents.waitForMethod("input_requested")).params;
    expect(asked.choices).toEqual(["staging", "production"]);

    const bad = await rpcError(other.input.respond({ conversationId: id, requestId: asked.requestId, answer: "prod" }));
    expect(bad.code).toBe(ErrorCodes.INVALID_PARAMS);
    expect(JSON.stringify(bad.data)).toContain('"answer"');
    expect(bad.message).toContain("not one of the choices");

    const [first, second] = await Promise.allSettled([
      other.input.respond({ conversationId: id, requestId: asked.requestId, answer: "staging" }),
      fx.client.input.respond({ conversationId: id, requestId: asked.requestId, action: "decline" }),
    ]);
    expect(first).toEqual({ status: "fulfilled", value: { outcome: "answered" } });
    expect(second.status).toBe("rejected");
    const refused = (second as PromiseRejectedResult).reason;
    expect(refused.code).toBe(ErrorCodes.INPUT_NOT_PENDING);
    expect(refused.data).toEqual({ requestId: asked.requestId, outcome: "answered" });
    await events.waitForEnd(generationId);
    await otherEvents.waitForMethod("input_resolved");
    expect(events.of("tool_completed")[0]!.record.result).toBe("staging");
    await other.close();
  });

  it("a form answer is checked field by field; decline reaches the model as such", async () => {
    const schema = {
      type: "object",
      properties: { port: { type: "integer", minimum: 1, maximum: 65535 }, tls: { type: "boolean" } },
      required: ["port"],
    };
    fx.fake.enqueue(askCall({ question: "Server settings?", schema }), done);
    const { id, events } = await newConversation(fx.client);
    const { generationId } = await fx.client.step({ conversationId: id });
    const asked = (await events.waitForMethod("input_requested")).params;
    expect(asked.schema).toEqual(schema);
    const wrong = await rpcError(fx.client.input.respond({ conversationId: id, requestId: asked.requestId, answer: { port: 1.5 } }));
    expect(wrong.code).toBe(ErrorCodes.INVALID_PARAMS);
    expect(JSON.stringify(wrong.data)).toContain("answer.port");
    const missing = await rpcError(fx.client.input.respond({ conversationId: id, requestId: asked.requestId, answer: { tls: true } }));
    expect(JSON.stringify(missing.data)).toContain("answer.port");
    await fx.client.input.respond({ conversationId: id, requestId: asked.requestId, action: "decline" });
    await events.waitForEnd(generationId);
    expect(events.of("input_resolved")[0]).toMatchObject({ outcome: "declined" });
    expect(events.of("tool_completed")[0]!.record.result).toBe("The user declined to answer.");
  });

  it("bad arguments fail the call with the field named, and nothing is asked", async () => {
    fx.fake.enqueue(askCall({ question: "Pick", choices: ["only"], multiple: true }), done);
    const { id, events } = await newConversation(fx.client);
    const { generationId } = await fx.client.step({ conversationId: id });
    await events.waitForEnd(generationId);
    expect(events.of("input_requested")).toEqual([]);
    expect(events.of("tool_failed")[0]!.record.result).toContain("choices");
  });

  it("an interrupt cancels the question: input_resolved cancelled, and the tool result says so", async () => {
    fx.fake.enqueue(askCall({ question: "Continue?" }));
    const { id, events } = await newConversation(fx.client);
    const { generationId } = await fx.client.step({ conversationId: id });
    const asked = (await events.waitForMethod("input_requested")).params;
    await fx.client.interrupt({ conversationId: id });
    await events.waitForEnd(generationId);
    expect(events.of("input_resolved")).toEqual([expect.objectContaining({ requestId: asked.requestId, outcome: "cancelled" })]);
    expect(events.of("tool_failed")[0]!.record.result).toContain("cancelled");
    expect(events.of("interrupted")).toHaveLength(1);
    const late = await rpcError(fx.client.input.respond({ conversationId: id, requestId: asked.requestId, answer: "yes" }));
    expect(late.code).toBe(ErrorCodes.INPUT_NOT_PENDING);
    expect(late.data.outcome).toBe("cancelled");
    expect((await fx.client.conversation.get({ conversationId: id })).state.pendingInputs).toEqual([]);
  });
});
