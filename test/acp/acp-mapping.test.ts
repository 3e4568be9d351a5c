/**
 * The pure half of `agentwire acp`: agentwire's diffs, usage and records as
 * ACP shapes (src/acp/tool-call-updates.ts, session-updates.ts). The whole
 * command is driven in acp-agent.test.ts.
 */
import { describe, expect, it } from "vitest";
import { elicitationOf, respondOf } from "../../src/acp/input-requests.js";
import { replayRecord, usageUpdate } from "../../src/acp/session-updates.js";
import { diffContent, settledUpdate } from "../../src/acp/tool-call-updates.js";

describe("ACP mapping", () => {
  it("a unified diff becomes old and new text of its hunks (with context); a new file has no old side, a deleted one no new text", () => {
    const diff = ["--- a/src/a.ts", "+++ b/src/a.ts", "@@ -1,3 +1,3 @@", " one", "-two", "+2", " three", "@@ -10,2 +10,3 @@", " ten", "+ten and a half", " eleven", "\\ No newline at end of file"].join("\n");
    expect(diffContent({ path: "src/a.ts", kind: "modify", diff }, "/ws")).toEqual({
      type: "diff",
      path: "/ws/src/a.ts",
      oldText: "one\ntwo\nthree\n…\nten\neleven",
      newText: "one\n2\nthree\n…\nten\nten and a half\neleven",
    });
    const added = ["--- /dev/null", "+++ b/new.txt", "@@ -0,0 +1,2 @@", "+hello", "+world"].join("\n");
    expect(diffContent({ path: "new.txt", kind: "add", diff: added }, "/ws")).toMatchObject({ oldText: null, newText: "hello\nworld" });
    const removed = ["--- a/old.txt", "+++ /dev/null", "@@ -1 +0,0 @@", "-bye"].join("\n");
    expect(diffContent({ path: "old.txt", kind: "delete", diff: removed }, "/ws")).toMatchObject({ oldText: "bye", newText: "" });
  });

  it("a skipped call ends as failed saying why; a completed file edit shows its diff", () => {
    const base = { type: "tool_call" as const, id: "r_1", toolCallId: "call_1", toolName: "edit_file", arguments: {}, timestamp: "2026-01-01T00:00:00.000Z" };
    expect(settledUpdate({ ...base, status: "skipped", result: "declined", success: false }, "/ws", "user")).toMatchObject({
      status: "failed",
      content: [{ type: "content", content: { type: "text", text: "Skipped (user): declined" } }],
    });
    const diff = ["--- a/n.txt", "+++ b/n.txt", "@@ -1 +1 @@", "-a", "+b"].join("\n");
    expect(settledUpdate({ ...base, status: "completed", result: "ok", success: true, diff }, "/ws")).toMatchObject({
      status: "completed",
      content: [{ type: "diff", path: "/ws/n.txt", oldText: "a", newText: "b" }],
      rawOutput: { result: "ok", success: true },
    });
  });

  it("usage_update needs the context window: none without one, the conversation's cost with it", () => {
    const totals = { modelCalls: 1, promptTokens: 10, cachedPromptTokens: 0, completionTokens: 5, reasoningTokens: 0, totalTokens: 15, unpricedModelCalls: 0 };
    const event = {
      conversationId: "c_1", seq: 3, timestamp: "2026-01-01T00:00:00.000Z", generationId: "g_1", model: "m", last: null, cost: null,
      generation: { ...totals, cost: null },
      conversation: { ...totals, cost: { amount: 0.5, currency: "USD" }, contextTokens: 15 },
      context: { usedTokens: 15, windowTokens: null as number | null },
    };
    expect(usageUpdate(event)).toBeUndefined();
    event.context.windowTokens = 1000;
    expect(usageUpdate(event)).toEqual({ sessionUpdate: "usage_update", used: 15, size: 1000, cost: { amount: 0.5, currency: "USD" } });
  });

  it("replayed records: a command message as /NAME ARGS, an answer's reasoning before its text, system messages left out", () => {
    const at = "2026-01-01T00:00:00.000Z";
    expect(replayRecord({ type: "message", id: "r_1", role: "user", content: "Expanded.", command: { name: "check", arguments: "it", source: "workspace" }, timestamp: at }, "/ws")).toEqual([
      { sessionUpdate: "user_message_chunk", content: { type: "text", text: "/check it" }, messageId: "r_1" },
    ]);
    expect(replayRecord({ type: "message", id: "r_2", role: "assistant", content: "Done.", reasoning: "Hmm.", timestamp: at }, "/ws").map((u) => u.sessionUpdate)).toEqual([
      "agent_thought_chunk",
      "agent_message_chunk",
    ]);
    expect(replayRecord({ type: "message", id: "r_3", role: "system", content: "Be brief.", timestamp: at }, "/ws")).toEqual([]);
  });

  it("questions as elicitation forms: a form's enumNames become titled options; answers come back in input.respond's shapes", () => {
    const base = { conversationId: "c_1", seq: 1, timestamp: "2026-01-01T00:00:00.000Z", requestId: "in_1", source: "ask_user" as const, question: "Deploy?" };
    const form = {
      ...base,
      schema: {
        type: "object" as const,
        properties: { target: { type: "string" as const, title: "Target", enum: ["prod", "dev"], enumNames: ["Production", "Development"] }, count: { type: "integer" as const, minimum: 1 } },
        required: ["target"],
      },
    };
    expect(elicitationOf("c_1", form)).toHaveProperty("requestedSchema", {
      type: "object",
      properties: {
        target: { type: "string", title: "Target", oneOf: [{ const: "prod", title: "Production" }, { const: "dev", title: "Development" }] },
        count: { type: "integer", minimum: 1 },
      },
      required: ["target"],
    });
    expect(respondOf(form, { action: "accept", content: { target: "dev", count: 2 } })).toEqual({ action: "answer", answer: { target: "dev", count: 2 } });
    const several = { ...base, choices: ["a", "b", "c"], multiple: true };
    expect(elicitationOf("c_1", several)).toHaveProperty("requestedSchema.properties.answer", { type: "array", title: "Answer", items: { type: "string", enum: ["a", "b", "c"] } });
    expect(respondOf(several, { action: "accept", content: { answer: ["a", "c"] } })).toEqual({ action: "answer", answer: ["a", "c"] });
    expect(respondOf(base, { action: "decline" })).toEqual({ action: "decline" });
    expect(respondOf(base, { action: "cancel" })).toEqual({ action: "cancel" });
  });
});
