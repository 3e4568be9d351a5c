/**
 * Compaction (issue 23), on both wires: conversation.compact runs as the
 * conversation's generation and stores a compaction record; the next
 * request starts with its summary; conversation.get still returns every
 * record; the summary's tokens count in the conversation's usage.
 * Automatic compaction runs before a model call that would pass
 * settings.autoCompact of the declared window, and once after the endpoint
 * refuses a request as too long (the call is then retried). Every request
 * the fake received is valid for the API (useAgentFixture checks it).
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ErrorCodes } from "../../protocol/index.js";
import { compactionSummaryText } from "../../src/context/build-llm-context.js";
import { COMPACTION_PROMPT } from "../../src/generation/compaction.js";
import type { WireName } from "../../src/llm/create-provider.js";
import { newConversation, useAgentFixture } from "../harness/agent-fixture.js";

const providers = {
  default: { baseUrl: "http://127.0.0.1:1/v1", models: { "fake-model": { contextWindow: 1000 }, "no-window": {} } },
};
const usage = (prompt: number, completion: number) => ({ prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion });
/** The messages of request `i` without the system prompt. */
const shown = (fake: { messagesOf(i: number): any[] }, i: number) => fake.messagesOf(i).filter((m) => m.role !== "system");

for (const wire of ["chat", "responses", "anthropic"] as WireName[]) {
  describe(`compaction on the ${wire} wire`, () => {
    const fx = useAgentFixture({ wire, config: { providers } });

    it("conversation.compact stores a summary the next request starts with; nothing is deleted", async () => {
      fx.fake.enqueue(
        { kind: "reply", text: ["Listing."], toolCalls: [{ id: "call_1", name: "shell", args: '{"command":"echo hi"}' }], usage: usage(100, 10) },
        { kind: "reply", text: ["It printed hi."], usage: usage(150, 10) },
      );
      const { id, events } = await newConversation(fx.client, { model: "no-window" }, "run echo hi");
      const first = await fx.client.step({ conversationId: id, autoConfirm: true });
      expect((await events.waitForEnd(first.generationId)).method).toBe("generation_complete");
      const before = (await fx.client.conversation.get({ conversationId: id, includeRecords: true })).records;

      fx.fake.enqueue({ kind: "reply", text: ["The user ran echo hi; it printed hi."], usage: usage(180, 12) });
      const { generationId } = await fx.client.conversation.compact({ conversationId: id, instructions: "Mention the command." });
      const end = await events.waitForEnd(generationId);
      expect(end.method).toBe("generation_complete");
      expect(end.params).toMatchObject({ final: true });

      // The summary request: the whole history, then the fixed prompt with the user's instructions.
      const ask = shown(fx.fake, 2);
      expect(JSON.stringify(ask)).toContain("It printed hi.");
      expect(ask.at(-1)).toEqual({ role: "user", content: `${COMPACTION_PROMPT}\n\nThe user's instructions for this summary:\nMention the command.` });

      const completed = events.of("compaction_completed");
      expect(completed).toHaveLength(1);
      expect(completed[0]).toMatchObject({ generationId, tokensBefore: 180, tokensAfter: 12 });
      expect(completed[0]!.record).toMatchObject({ type: "compaction", trigger: "manual", summary: "The user ran echo hi; it printed hi.", instructions: "Mention the command." });
      const flow = events.flow();
      expect(flow.slice(flow.indexOf("compaction_started"))).toEqual(["compaction_started", "usage_updated", "compaction_completed", "generation_complete"]);

      // Nothing deleted: every record is still there, the compaction record last.
      const after = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
      expect(after.records!.slice(0, before!.length)).toEqual(before);
      expect(after.records!.at(-1)).toEqual(completed[0]!.record);
      // The summary's tokens count in the conversation's usage; the context is now the summary.
      expect(after.conversation.usage).toMatchObject({ modelCalls: 3, promptTokens: 430, completionTokens: 32, contextTokens: 12 });

      // The next model call sees the summary, then what came after it.
      fx.fake.enqueue({ kind: "reply", text: ["Sure."] });
      await fx.client.message.append({ conversationId: id, role: "user", content: "and now?" });
      const next = await fx.client.step({ conversationId: id });
      await events.waitForEnd(next.generationId);
      expect(shown(fx.fake, 3)).toEqual([
        { role: "user", content: compactionSummaryText("The user ran echo hi; it printed hi.") },
        { role: "user", content: "and now?" },
      ]);
    });

    it("is refused with nothing to compact: no records, or none since the last compaction", async () => {
      const empty = await fx.client.conversation.create({});
      await expect(fx.client.conversation.compact({ conversationId: empty.id })).rejects.toMatchObject({
        code: ErrorCodes.INVALID_PARAMS,
        message: expect.stringContaining("nothing to compact"),
      });
      fx.fake.enqueue({ kind: "reply", text: ["Hi."] }, { kind: "reply", text: ["Summary: hi."] });
      const { id, events } = await newConversation(fx.client, { model: "no-window" });
      await events.waitForEnd((await fx.client.step({ conversationId: id })).generationId);
      await events.waitForEnd((await fx.client.conversation.compact({ conversationId: id })).generationId);
      await expect(fx.client.conversation.compact({ conversationId: id })).rejects.toMatchObject({
        code: ErrorCodes.INVALID_PARAMS,
        message: expect.stringContaining("since the last compaction"),
      });
    });

    it("is refused while a generation runs, and interrupt cancels it without storing anything", async () => {
      fx.fake.enqueue({ kind: "reply", text: ["Hello."] });
      const { id, events } = await newConversation(fx.client, { model: "no-window" });
      const first = await fx.client.step({ conversationId: id });
      await events.waitForEnd(first.generationId);

      fx.fake.enqueue({ kind: "hang", when: "after_headers" });
      const { generationId } = await fx.client.conversation.compact({ conversationId: id });
      await expect(fx.client.step({ conversationId: id })).rejects.toMatchObject({ code: ErrorCodes.GENERATION_IN_PROGRESS });
      await expect(fx.client.conversation.compact({ conversationId: id })).rejects.toMatchObject({ code: ErrorCodes.GENERATION_IN_PROGRESS });
      await events.waitForMethod("compaction_started");
      await fx.client.interrupt({ conversationId: id });
      expect((await events.waitForEnd(generationId)).method).toBe("interrupted");
      expect(events.of("compaction_completed")).toEqual([]);
      const { records } = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
      expect(records!.map((r) => r.type)).toEqual(["message", "message"]);
    });

    it("compacts by itself before a call that would pass autoCompact of the model's window", async () => {
      fx.fake.enqueue({ kind: "reply", text: ["A long answer."], usage: usage(880, 20) });
      const { id, events } = await newConversation(fx.client, {}, "tell me everything");
      const first = await fx.client.step({ conversationId: id });
      await events.waitForEnd(first.generationId);
      expect(events.of("compaction_started")).toEqual([]); // 880 + 20 of 1000 is over 0.85, but nothing asked for another call

      fx.fake.enqueue({ kind: "reply", text: ["Summary: the user asked for everything."], usage: usage(920, 15) }, { kind: "reply", text: ["Go on, then."] });
      await fx.client.message.append({ conversationId: id, role: "user", content: "more" });
      const second = await fx.client.step({ conversationId: id });
      expect((await events.waitForEnd(second.generationId)).method).toBe("generation_complete");

      expect(events.of("compaction_started")).toMatchObject([{ generationId: second.generationId, trigger: "threshold" }]);
      expect(events.of("compaction_completed")).toMatchObject([{ tokensBefore: 920, tokensAfter: 15 }]);
      expect(shown(fx.fake, 1).at(-1)).toEqual({ role: "user", content: COMPACTION_PROMPT });
      // The question waiting for an answer is not summarized: it follows the summary verbatim.
      expect(shown(fx.fake, 1).map((m) => m.content)).toEqual(["tell me everything", "A long answer.", COMPACTION_PROMPT]);
      expect(shown(fx.fake, 2)).toEqual([
        { role: "user", content: compactionSummaryText("Summary: the user asked for everything.") },
        { role: "user", content: "more" },
      ]);
      const { records } = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
      expect(records!.map((r) => r.type)).toEqual(["message", "message", "message", "compaction", "message"]);
    });

    it("compacts between a tool round and the next model call, never between a call and its result", async () => {
      fx.fake.enqueue(
        { kind: "reply", text: ["Running it."], toolCalls: [{ id: "call_9", name: "shell", args: '{"command":"echo big"}' }], usage: usage(860, 20) },
        { kind: "reply", text: ["Summary: ran echo big, it printed big."], usage: usage(900, 12) },
        { kind: "reply", text: ["Done."] },
      );
      const { id, events } = await newConversation(fx.client, {}, "run echo big");
      const { generationId } = await fx.client.step({ conversationId: id, autoConfirm: true });
      expect((await events.waitForEnd(generationId)).method).toBe("generation_complete");
      expect(events.of("compaction_started")).toMatchObject([{ generationId, trigger: "threshold" }]);
      // The summary request carried the call and its result; the call after it starts from the summary alone.
      expect(JSON.stringify(shown(fx.fake, 1))).toContain("call_9");
      expect(shown(fx.fake, 2)).toEqual([{ role: "user", content: compactionSummaryText("Summary: ran echo big, it printed big.") }]);
      const { records } = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
      expect(records!.map((r) => r.type)).toEqual(["message", "message", "tool_call", "compaction", "message"]);
    });

    it("does not compact with autoCompact null", async () => {
      fx.fake.enqueue({ kind: "reply", text: ["A long answer."], usage: usage(880, 20) }, { kind: "reply", text: ["ok"] });
      const { id, events } = await newConversation(fx.client, { settings: { autoCompact: null } });
      await events.waitForEnd((await fx.client.step({ conversationId: id })).generationId);
      await fx.client.message.append({ conversationId: id, role: "user", content: "more" });
      await events.waitForEnd((await fx.client.step({ conversationId: id })).generationId);
      expect(events.of("compaction_started")).toEqual([]);
      expect(fx.fake.requests).toHaveLength(2);
    });

    it("compacts once after the endpoint answers that the context is too long, then retries the call", async () => {
      fx.fake.enqueue({ kind: "reply", text: ["First answer."] });
      const { id, events } = await newConversation(fx.client, { model: "no-window" });
      await events.waitForEnd((await fx.client.step({ conversationId: id })).generationId);

      fx.fake.enqueue(
        {
          kind: "error",
          status: 400,
          code: "context_length_exceeded",
          type: "invalid_request_error",
          message: "This model's maximum context length is 1000 tokens. However, your messages resulted in 1200 tokens.",
        },
        { kind: "reply", text: ["Summary: one question, one answer."] },
        { kind: "reply", text: ["Second answer."] },
      );
      await fx.client.message.append({ conversationId: id, role: "user", content: "again" });
      const second = await fx.client.step({ conversationId: id });
      expect((await events.waitForEnd(second.generationId)).method).toBe("generation_complete");
      expect(events.of("compaction_started")).toMatchObject([{ trigger: "context_length" }]);
      expect(fx.fake.requests).toHaveLength(4);
      expect(shown(fx.fake, 3)).toEqual([
        { role: "user", content: compactionSummaryText("Summary: one question, one answer.") },
        { role: "user", content: "again" },
      ]);
      const { records } = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
      expect(records!.at(-1)).toMatchObject({ type: "message", role: "assistant", content: "Second answer." });
    });

    it("asks for the summary again with tool outputs reduced to their names when even that request is too long", async () => {
      fx.fake.enqueue(
        { kind: "reply", text: ["Looking."], toolCalls: [{ id: "call_5", name: "shell", args: '{"command":"echo HUGE-OUTPUT"}' }] },
        { kind: "reply", text: ["Seen."] },
      );
      const { id, events } = await newConversation(fx.client, { model: "no-window" });
      await events.waitForEnd((await fx.client.step({ conversationId: id, autoConfirm: true })).generationId);
      const tooLong = { kind: "error" as const, status: 400, code: "context_length_exceeded", message: "maximum context length exceeded" };
      fx.fake.enqueue(tooLong, tooLong, { kind: "reply", text: ["Summary: echoed."] }, { kind: "reply", text: ["Next."] });
      await fx.client.message.append({ conversationId: id, role: "user", content: "next" });
      const second = await fx.client.step({ conversationId: id });
      expect((await events.waitForEnd(second.generationId)).method).toBe("generation_complete");
      // Request 3 is the first summary request (the full output), 4 the second (the output dropped).
      expect(JSON.stringify(shown(fx.fake, 3))).toContain("HUGE-OUTPUT");
      expect(JSON.stringify(shown(fx.fake, 4))).not.toContain("HUGE-OUTPUT");
      expect(shown(fx.fake, 5)).toEqual([
        { role: "user", content: compactionSummaryText("Summary: echoed.") },
        { role: "user", content: "next" },
      ]);
    });

    it("fails the generation when the endpoint refuses again after compacting (once per generation)", async () => {
      fx.fake.enqueue({ kind: "reply", text: ["First answer."] });
      const { id, events } = await newConversation(fx.client, { model: "no-window" });
      await events.waitForEnd((await fx.client.step({ conversationId: id })).generationId);
      const tooLong = { kind: "error" as const, status: 400, code: "context_length_exceeded", message: "maximum context length exceeded" };
      fx.fake.enqueue(tooLong, { kind: "reply", text: ["Summary."] }, tooLong);
      await fx.client.message.append({ conversationId: id, role: "user", content: "again" });
      const second = await fx.client.step({ conversationId: id });
      const end = await events.waitForEnd(second.generationId);
      expect(end.method).toBe("error");
      expect(end.params).toMatchObject({ code: ErrorCodes.LLM_ERROR, status: 400 });
      expect(events.of("compaction_completed")).toHaveLength(1);
    });
  });
}

describe("the summary prompt", () => {
  it("is quoted word for word in docs/clients.md", () => {
    const docs = readFileSync(new URL("../../docs/clients.md", import.meta.url), "utf8");
    expect(docs).toContain(`\`\`\`text\n${COMPACTION_PROMPT}\n\`\`\``);
  });
});
