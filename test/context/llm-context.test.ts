import { describe, expect, it } from "vitest";
import type { ConversationRecord, MessageRecord, ToolCallRecord, ToolCallStatus } from "../../protocol/index.js";
import {
  DECLINED_TEXT,
  INTERRUPTED_WHILE_RUNNING_TEXT,
  NOT_RUN_TEXT,
  NO_OUTPUT_TEXT,
  buildLlmContext,
  omittedOutputText,
  type LlmContextOptions,
} from "../../src/context/build-llm-context.js";
import type { ChatMessage } from "../../src/llm/chat-message.js";
import { assertValidForOpenAI } from "../harness/openai-rules.js";

let counter = 0;
function nextId(prefix: string): string {
  return `${prefix}_${++counter}`;
}
const timestamp = "2026-01-01T00:00:00.000Z";

function msg(role: MessageRecord["role"], content: string, extra: Partial<MessageRecord> = {}): MessageRecord {
  return { type: "message", id: nextId("r"), role, content, timestamp, ...extra };
}

function asks(content: string, calls: Array<[id: string, name: string]>, extra: Partial<MessageRecord> = {}): MessageRecord {
  return msg("assistant", content, { toolCalls: calls.map(([toolCallId, toolName]) => ({ toolCallId, toolName })), ...extra });
}

function ran(
  toolCallId: string,
  toolName: string,
  args: Record<string, unknown>,
  result: string | null,
  status: ToolCallStatus = "completed",
): ToolCallRecord {
  return {
    type: "tool_call",
    id: nextId("r"),
    toolCallId,
    toolName,
    arguments: args,
    result,
    success: status === "completed" ? true : status === "failed" ? false : null,
    status,
    timestamp,
  };
}

function build(records: ConversationRecord[], options: LlmContextOptions): ChatMessage[] {
  const messages = buildLlmContext(records, options);
  assertValidForOpenAI(messages, options.system ?? undefined);
  return messages;
}

/** Each tool call as sent: id, arguments text and the answering tool message's content. */
function sentCalls(messages: ChatMessage[]): Array<{ id: string; name: string; args: string; output: string }> {
  const out: Array<{ id: string; name: string; args: string; output: string }> = [];
  messages.forEach((message, i) => {
    if (message.role !== "assistant" || !message.tool_calls) return;
    message.tool_calls.forEach((call, k) => {
      const answer = messages[i + 1 + k];
      out.push({
        id: call.id,
        name: call.function.name,
        args: call.function.arguments,
        output: answer.role === "tool" ? answer.content : "",
      });
    });
  });
  return out;
}

/** Which calls went in full: those whose output is not the omitted marker. */
function fullIds(messages: ChatMessage[]): string[] {
  return sentCalls(messages)
    .filter((call) => !call.output.startsWith("[output omitted:"))
    .map((call) => call.id);
}

/** Four tool calls over three rounds, with user messages between rounds. */
function threeRounds(): ConversationRecord[] {
  return [
    msg("user", "list files then read two"),
    asks("Listing.", [["c1", "shell"]]),
    ran("c1", "shell", { command: "ls" }, "a.txt\nb.txt"),
    msg("user", "now read them"),
    asks("", [
      ["c2", "read_file"],
      ["c3", "read_file"],
    ]),
    ran("c2", "read_file", { path: "a.txt" }, "AAA"),
    ran("c3", "read_file", { path: "b.txt" }, "BBB"),
    msg("user", "and the date?"),
    asks("Checking.", [["c4", "shell"]]),
    ran("c4", "shell", { command: "date" }, "Mon"),
    msg("assistant", "It is Monday."),
  ];
}

describe("buildLlmContext", () => {
  it("keeps the message order, puts the system option first and leaves system records in place", () => {
    const records = [msg("user", "hi"), msg("assistant", "hello"), msg("system", "be brief"), msg("user", "ok")];
    const messages = build(records, { toolHistoryRounds: 8, system: "You are agentwire." });
    expect(messages).toEqual([
      { role: "system", content: "You are agentwire." },
      { role: "user", content: "hi" },
      { role: "assistant", content: "hello" },
      { role: "system", content: "be brief" },
      { role: "user", content: "ok" },
    ]);
  });

  it("sends no system message when the option is null or empty", () => {
    expect(build([msg("user", "hi")], { toolHistoryRounds: 8, system: null })).toEqual([{ role: "user", content: "hi" }]);
    expect(build([msg("user", "hi")], { toolHistoryRounds: 8, system: "" })).toEqual([{ role: "user", content: "hi" }]);
  });

  it("sends tool rounds in full when the history is within toolHistoryRounds", () => {
    const messages = build(threeRounds(), { toolHistoryRounds: 100, system: "sys" });
    expect(messages).toEqual([
      { role: "system", content: "sys" },
      { role: "user", content: "list files then read two" },
      {
        role: "assistant",
        content: "Listing.",
        tool_calls: [{ id: "c1", type: "function", function: { name: "shell", arguments: '{"command":"ls"}' } }],
      },
      { role: "tool", tool_call_id: "c1", content: "a.txt\nb.txt" },
      { role: "user", content: "now read them" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "c2", type: "function", function: { name: "read_file", arguments: '{"path":"a.txt"}' } },
          { id: "c3", type: "function", function: { name: "read_file", arguments: '{"path":"b.txt"}' } },
        ],
      },
      { role: "tool", tool_call_id: "c2", content: "AAA" },
      { role: "tool", tool_call_id: "c3", content: "BBB" },
      { role: "user", content: "and the date?" },
      {
        role: "assistant",
        content: "Checking.",
        tool_calls: [{ id: "c4", type: "function", function: { name: "shell", arguments: '{"command":"date"}' } }],
      },
      { role: "tool", tool_call_id: "c4", content: "Mon" },
      { role: "assistant", content: "It is Monday." },
    ]);
  });

  it("reduces every tool call with toolHistoryRounds 0, keeping names and the message structure", () => {
    const messages = build(threeRounds(), { toolHistoryRounds: 0 });
    expect(fullIds(messages)).toEqual([]);
    expect(sentCalls(messages)).toEqual([
      { id: "c1", name: "shell", args: "{}", output: omittedOutputText("shell", 0) },
      { id: "c2", name: "read_file", args: "{}", output: omittedOutputText("read_file", 0) },
      { id: "c3", name: "read_file", args: "{}", output: omittedOutputText("read_file", 0) },
      { id: "c4", name: "shell", args: "{}", output: omittedOutputText("shell", 0) },
    ]);
    expect(omittedOutputText("shell", 0)).toBe("[output omitted: shell — older than the last 0 tool calls]");
    // Same number of messages as the full context: reduction never drops a message.
    expect(messages.length).toBe(build(threeRounds(), { toolHistoryRounds: 100 }).length);
    expect(messages.length).toBe(11);
  });

  it("keeps only the last tool call in full with toolHistoryRounds 1", () => {
    const messages = build(threeRounds(), { toolHistoryRounds: 1 });
    expect(fullIds(messages)).toEqual(["c4"]);
    const calls = sentCalls(messages);
    expect(calls[3]).toEqual({ id: "c4", name: "shell", args: '{"command":"date"}', output: "Mon" });
    expect(calls[0].output).toBe("[output omitted: shell — older than the last 1 tool calls]");
  });

  it("counts tool calls, not messages: N=2 splits the two calls of one assistant message", () => {
    const messages = build(threeRounds(), { toolHistoryRounds: 2 });
    expect(fullIds(messages)).toEqual(["c3", "c4"]);
    const calls = sentCalls(messages);
    expect(calls.map((call) => call.args)).toEqual(["{}", "{}", '{"path":"b.txt"}', '{"command":"date"}']);
    expect(calls[1].output).toBe(omittedOutputText("read_file", 2));
  });

  it("keeps N=3 and N=4 (= history length) as expected", () => {
    expect(fullIds(build(threeRounds(), { toolHistoryRounds: 3 }))).toEqual(["c2", "c3", "c4"]);
    expect(fullIds(build(threeRounds(), { toolHistoryRounds: 4 }))).toEqual(["c1", "c2", "c3", "c4"]);
  });

  it("answers calls that did not run: skipped, failed, pending, executing and missing records", () => {
    const records: ConversationRecord[] = [
      msg("user", "do things"),
      asks("Trying several.", [
        ["s1", "shell"],
        ["s2", "shell"],
        ["f1", "shell"],
        ["p1", "shell"],
        ["e1", "shell"],
        ["m1", "shell"],
        ["d1", "shell"],
      ]),
      ran("s1", "shell", { command: "rm -rf /" }, "Not allowed: destructive.", "skipped"),
      ran("s2", "shell", { command: "rm x" }, null, "skipped"),
      ran("f1", "shell", { command: "false" }, "exit code 1", "failed"),
      ran("p1", "shell", { command: "sleep 1" }, null, "pending"),
      ran("e1", "shell", { command: "sleep 100" }, null, "executing"),
      // m1 has no record at all (interrupted before it was stored)
      ran("d1", "shell", { command: "true" }, "", "completed"),
    ];
    const calls = sentCalls(build(records, { toolHistoryRounds: 10 }));
    expect(calls.map((call) => [call.id, call.output])).toEqual([
      ["s1", "Not allowed: destructive."],
      ["s2", DECLINED_TEXT],
      ["f1", "exit code 1"],
      ["p1", NOT_RUN_TEXT],
      ["e1", INTERRUPTED_WHILE_RUNNING_TEXT],
      ["m1", NOT_RUN_TEXT],
      ["d1", NO_OUTPUT_TEXT],
    ]);
    expect(DECLINED_TEXT).toBe("The user declined to run this tool.");
    expect(NOT_RUN_TEXT).toBe("[not run: interrupted]");
    // A call without a record has no known arguments.
    expect(calls[5].args).toBe("{}");
    expect(calls[0].args).toBe('{"command":"rm -rf /"}');
  });

  it("drops orphan tool records and duplicate ones, and ignores a repeated id within one message", () => {
    const records: ConversationRecord[] = [
      ran("ghost", "shell", { command: "ls" }, "orphan before anything"),
      msg("user", "go"),
      asks("", [
        ["a", "shell"],
        ["a", "shell"],
        ["b", "read_file"],
      ]),
      ran("a", "shell", { command: "pwd" }, "/home"),
      ran("a", "shell", { command: "pwd" }, "/duplicate"),
      ran("b", "read_file", { path: "x" }, "X"),
      ran("zzz", "shell", {}, "orphan after"),
      msg("assistant", "Done."),
    ];
    const messages = build(records, { toolHistoryRounds: 10 });
    expect(messages).toEqual([
      { role: "user", content: "go" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "a", type: "function", function: { name: "shell", arguments: '{"command":"pwd"}' } },
          { id: "b", type: "function", function: { name: "read_file", arguments: '{"path":"x"}' } },
        ],
      },
      { role: "tool", tool_call_id: "a", content: "/home" },
      { role: "tool", tool_call_id: "b", content: "X" },
      { role: "assistant", content: "Done." },
    ]);
  });

  it("pairs a reused call id with the latest assistant message that asked for it", () => {
    const records: ConversationRecord[] = [
      msg("user", "twice"),
      asks("", [["call_0", "shell"]]),
      ran("call_0", "shell", { command: "echo 1" }, "1"),
      asks("", [["call_0", "shell"]]),
      ran("call_0", "shell", { command: "echo 2" }, "2"),
    ];
    const calls = sentCalls(build(records, { toolHistoryRounds: 10 }));
    expect(calls.map((call) => [call.args, call.output])).toEqual([
      ['{"command":"echo 1"}', "1"],
      ['{"command":"echo 2"}', "2"],
    ]);
  });

  it("answers tool calls before a user message stored while the tools were pending", () => {
    const records: ConversationRecord[] = [
      msg("user", "run it"),
      asks("Running.", [["x1", "shell"]]),
      msg("user", "hurry up"),
      ran("x1", "shell", { command: "make" }, "built"),
    ];
    const messages = build(records, { toolHistoryRounds: 5 });
    expect(messages.map((message) => message.role)).toEqual(["user", "assistant", "tool", "user"]);
    expect(messages[2]).toEqual({ role: "tool", tool_call_id: "x1", content: "built" });
  });

  it("drops empty interrupted assistant messages, keeps partial text as is, and leaves out notices", () => {
    const records: ConversationRecord[] = [
      msg("user", "write a poem"),
      msg("assistant", "", { interrupted: true }),
      msg("user", "again"),
      msg("assistant", "Roses are", { interrupted: true }),
      msg("assistant", "Stopped after 20 model calls.", { notice: "max_iterations" }),
      msg("user", "thanks"),
    ];
    expect(build(records, { toolHistoryRounds: 8 })).toEqual([
      { role: "user", content: "write a poem" },
      { role: "user", content: "again" },
      { role: "assistant", content: "Roses are" },
      { role: "user", content: "thanks" },
    ]);
  });

  it("answers the calls of an interrupted assistant message that has no tool records", () => {
    const records: ConversationRecord[] = [
      msg("user", "go"),
      asks("Let me", [["i1", "shell"]], { interrupted: true }),
      msg("user", "stop"),
    ];
    const messages = build(records, { toolHistoryRounds: 0 });
    // Reduced because toolHistoryRounds is 0: still answered, still valid.
    expect(messages[2]).toEqual({ role: "tool", tool_call_id: "i1", content: omittedOutputText("shell", 0) });
    expect(sentCalls(build(records, { toolHistoryRounds: 1 }))[0].output).toBe(NOT_RUN_TEXT);
  });

  it("validator rejects invalid sequences (so the checks above can fail)", () => {
    expect(() => assertValidForOpenAI([{ role: "tool", tool_call_id: "x", content: "" }])).toThrow();
    expect(() =>
      assertValidForOpenAI([
        { role: "assistant", content: null, tool_calls: [{ id: "a", type: "function", function: { name: "t", arguments: "{}" } }] },
        { role: "user", content: "hi" },
      ]),
    ).toThrow();
    expect(() => assertValidForOpenAI([{ role: "user", content: "hi" }], "sys")).toThrow();
  });

  it("stays valid on a long mixed history for every toolHistoryRounds", () => {
    const records: ConversationRecord[] = [];
    const statuses: ToolCallStatus[] = ["completed", "failed", "skipped", "pending", "executing"];
    for (let round = 0; round < 30; round++) {
      records.push(msg("user", `round ${round}`));
      const calls: Array<[string, string]> = [];
      for (let k = 0; k <= round % 3; k++) calls.push([`t${round}_${k}`, k % 2 ? "read_file" : "shell"]);
      records.push(asks(round % 2 ? "" : `thinking ${round}`, calls, { interrupted: round % 7 === 0 }));
      calls.forEach(([id, name], k) => {
        if ((round + k) % 5 === 4) return; // missing record
        records.push(ran(id, name, { n: round, k }, `out ${id}`, statuses[(round + k) % statuses.length]));
      });
      if (round % 4 === 0) records.push(ran(`orphan${round}`, "shell", {}, "x"));
    }
    const total = records.filter((r) => r.type === "message" && r.toolCalls).reduce((n, r) => n + ((r as MessageRecord).toolCalls?.length ?? 0), 0);
    for (const rounds of [0, 1, 2, 3, 7, total - 1, total, total + 5]) {
      const messages = build(records, { toolHistoryRounds: rounds, system: "sys" });
      const full = fullIds(messages);
      expect(full.length).toBe(Math.min(rounds, total));
      expect(sentCalls(messages).length).toBe(total);
    }
  });
});
