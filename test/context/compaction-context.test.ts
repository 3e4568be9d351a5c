/**
 * Compaction in the context (issue 23): the model sees the last compaction's
 * summary, then the records after it; the records before stay out, a tool
 * record whose call was before the compaction is not orphaned in the
 * request, and the request stays valid for the API. readContextRecords
 * (what the loop reads page by page) starts afresh at a compaction, and
 * builds the same context as the full records.
 */
import { describe, expect, it } from "vitest";
import type { CompactionRecord, ConversationRecord, MessageRecord, ToolCallRecord } from "../../protocol/index.js";
import { buildLlmContext, compactionSummaryText } from "../../src/context/build-llm-context.js";
import { readContextRecords } from "../../src/context/context-records.js";
import { autoCompactLimit, estimateRequestTokens } from "../../src/generation/compaction.js";
import { DEFAULT_CONVERSATION_SETTINGS } from "../../protocol/index.js";
import { assertValidForOpenAI } from "../harness/openai-rules.js";

const timestamp = "2026-01-01T00:00:00.000Z";
let n = 0;
const msg = (role: MessageRecord["role"], content: string, extra: Partial<MessageRecord> = {}): MessageRecord => ({
  type: "message",
  id: `r_${++n}`,
  role,
  content,
  timestamp,
  ...extra,
});
const call = (toolCallId: string, result: string): ToolCallRecord => ({
  type: "tool_call",
  id: `r_${++n}`,
  toolCallId,
  toolName: "shell",
  arguments: { command: "ls" },
  result,
  success: true,
  status: "completed",
  timestamp,
});
const compaction = (summary: string): CompactionRecord => ({
  type: "compaction",
  id: `r_${++n}`,
  summary,
  trigger: "manual",
  model: "m",
  tokensBefore: 1000,
  tokensAfter: 50,
  timestamp,
});

describe("a compaction record in the context", () => {
  const history: ConversationRecord[] = [
    msg("user", "first question"),
    msg("assistant", "", { toolCalls: [{ toolCallId: "call_1", toolName: "shell" }] }),
    call("call_1", "old output"),
    msg("assistant", "first answer"),
    compaction("SUMMARY ONE"),
    msg("user", "second question"),
    msg("assistant", "", { toolCalls: [{ toolCallId: "call_2", toolName: "shell" }] }),
    // An answer to a call from before the compaction (e.g. imported history): nobody asked for it now.
    call("call_1", "stray"),
    call("call_2", "new output"),
    msg("assistant", "second answer"),
    compaction("SUMMARY TWO"),
    msg("user", "third question"),
  ];

  it("starts the model's view at the last compaction's summary, after the system prompt", () => {
    const messages = buildLlmContext(history, { toolHistoryRounds: 8, system: "be brief" });
    assertValidForOpenAI(messages, "be brief");
    expect(messages).toEqual([
      { role: "system", content: "be brief" },
      { role: "user", content: compactionSummaryText("SUMMARY TWO") },
      { role: "user", content: "third question" },
    ]);
  });

  it("keeps the records after a compaction whole, and drops an answer whose call came before it", () => {
    const upToSecond = history.slice(0, 10);
    const messages = buildLlmContext(upToSecond, { toolHistoryRounds: 8 });
    assertValidForOpenAI(messages);
    expect(messages[0]).toEqual({ role: "user", content: compactionSummaryText("SUMMARY ONE") });
    const text = JSON.stringify(messages);
    expect(text).not.toContain("first question");
    expect(text).not.toContain("old output");
    expect(text).not.toContain("stray");
    expect(messages.filter((m) => m.role === "tool")).toEqual([{ role: "tool", tool_call_id: "call_2", content: "new output" }]);
  });

  it("is read page by page from the last compaction on, building the same request", async () => {
    const read = async (from: number, to: number) => history.slice(from, to);
    const records = await readContextRecords(read, history.length, 8, 1_000_000);
    expect(records.map((r) => r.id)).toEqual(history.slice(10).map((r) => r.id));
    expect(buildLlmContext(records, { toolHistoryRounds: 8 })).toEqual(buildLlmContext(history, { toolHistoryRounds: 8 }));
  });

  it("puts the user's messages that were waiting when it ran after the summary, page by page too", async () => {
    const records = [msg("user", "one"), msg("assistant", "answer"), msg("user", "two"), msg("user", "three"), compaction("S"), msg("user", "four")];
    const messages = buildLlmContext(records, { toolHistoryRounds: 8 });
    assertValidForOpenAI(messages);
    expect(messages.map((m) => m.content)).toEqual([compactionSummaryText("S"), "two", "three", "four"]);
    const read = async (from: number, to: number) => records.slice(from, to);
    const paged = await readContextRecords(read, records.length, 8, 1_000_000);
    expect(buildLlmContext(paged, { toolHistoryRounds: 8 })).toEqual(messages);
  });

  it("counts the byte limit from the last compaction: a huge history before it no longer fails the request", async () => {
    const huge = [msg("user", "x".repeat(5000)), msg("assistant", "ok"), compaction("short"), msg("user", "go on")];
    const read = async (from: number, to: number) => huge.slice(from, to);
    await expect(readContextRecords(read, huge.length, 8, 1000)).resolves.toHaveLength(2);
  });
});

describe("when automatic compaction runs", () => {
  it("is off without a declared context window, or with autoCompact null or 0; defaults to 0.85 of the window", () => {
    const settings = { ...DEFAULT_CONVERSATION_SETTINGS, toolPolicy: {} };
    expect(autoCompactLimit(settings, undefined)).toBeNull();
    expect(autoCompactLimit({ ...settings, autoCompact: null }, 1000)).toBeNull();
    expect(autoCompactLimit({ ...settings, autoCompact: 0 }, 1000)).toBeNull();
    expect(autoCompactLimit({ ...settings, autoCompact: undefined }, 1000)).toBe(850);
    expect(autoCompactLimit({ ...settings, autoCompact: 0.5 }, 1000)).toBe(500);
  });

  it("estimates the next request from the last call's context plus what came after its answer", () => {
    const messages = [
      { role: "user" as const, content: "a".repeat(4000) },
      { role: "assistant" as const, content: "b".repeat(4000) },
      { role: "user" as const, content: "c".repeat(400) },
    ];
    const after = estimateRequestTokens(messages, 2000);
    // The reported 2000 plus about 100 tokens of new input; the earlier text is not counted twice.
    expect(after).toBeGreaterThan(2100);
    expect(after).toBeLessThan(2150);
    // Nothing reported yet: all of it is estimated.
    expect(estimateRequestTokens(messages, null)).toBeGreaterThan(2100);
  });
});
