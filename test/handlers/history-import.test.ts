/**
 * History import: conversation.create with `records`, and message.append
 * with role assistant.
 *
 * The validator is tested on its own (each refusal and the path it names,
 * and that whatever it accepts builds a model request the API takes), then
 * end to end: the imported history reaches the fake model — which refuses
 * any request the real API would — in order, calls paired with their
 * results.
 */
import { describe, expect, it } from "vitest";
import { MAX_IMPORTED_RECORDS, type ImportedRecord } from "../../protocol/index.js";
import type { z } from "zod";
import { buildLlmContext } from "../../src/context/build-llm-context.js";
import { checkImportedHistory, findHistoryIssues, toStoredRecords } from "../../src/handlers/history-import.js";
import { RpcError } from "../../src/rpc/rpc-error.js";
import { newConversation, startAgentFixture, useAgentFixture } from "../harness/agent-fixture.js";
import { EventRecorder } from "../harness/event-recorder.js";
import { assertValidForOpenAI } from "../harness/openai-rules.js";
import { expectInvalidParams, expectNotFound, rpcError } from "../harness/rpc-errors.js";
import { useStoreDir } from "../harness/store-dir.js";

type Imported = z.input<typeof ImportedRecord>;

const user = (content: string): Imported => ({ type: "message", role: "user", content });
const says = (content: string): Imported => ({ type: "message", role: "assistant", content });
const calls = (content: string, ...ids: Array<[id: string, name: string]>): Imported => ({
  type: "message",
  role: "assistant",
  content,
  toolCalls: ids.map(([toolCallId, toolName]) => ({ toolCallId, toolName })),
});
const ran = (
  toolCallId: string,
  toolName: string,
  result: string,
  status: "completed" | "failed" | "skipped" = "completed",
  args: Record<string, unknown> = {},
): Imported => ({ type: "tool_call", toolCallId, toolName, arguments: args, status, result });

/** Issues of a history as `path: message` lines, for readable failures. */
const issuesOf = (records: Imported[]) => findHistoryIssues(records as never).map((i) => i.path);

describe("the import validator", () => {
  it("accepts a history whose every call is answered right after its message, and a reused id in a later round", () => {
    const records = [
      user("list and read"),
      calls("", ["c1", "shell"], ["c2", "read_file"]),
      ran("c1", "shell", "a.txt"),
      ran("c2", "read_file", "", "skipped"),
      says("done"),
      user("again"),
      calls("once more", ["c1", "shell"]), // some models number calls per reply
      ran("c1", "shell", "b.txt", "failed"),
      says("ok"),
    ];
    expect(issuesOf(records)).toEqual([]);
  });

  it("refuses a tool result no assistant message announced, naming records[i].toolCallId", () => {
    expect(issuesOf([user("hi"), ran("c9", "shell", "x")])).toEqual(["records[1].toolCallId"]);
    // Announced, but the round was closed by a message in between.
    expect(issuesOf([calls("", ["c1", "shell"]), ran("c1", "shell", "x"), user("hi"), ran("c1", "shell", "y")])).toEqual([
      "records[3].toolCallId",
    ]);
  });

  it("refuses an announced call that never gets a settled record (refused, not stored as skipped)", () => {
    expect(issuesOf([user("go"), calls("", ["c1", "shell"], ["c2", "shell"]), ran("c1", "shell", "x")])).toEqual([
      "records[1].toolCalls[1].toolCallId",
    ]);
    // A message between the announcement and the result is refused too: the result must follow its message.
    const [problem, orphan] = findHistoryIssues([calls("", ["c1", "shell"]), user("wait"), ran("c1", "shell", "x")] as never);
    expect(problem).toMatchObject({ path: "records[0].toolCalls[0].toolCallId", code: "custom" });
    expect(problem.message).toContain("before records[1]");
    expect(orphan.path).toBe("records[2].toolCallId");
  });

  it("refuses duplicate toolCallIds: twice in one message, or answered twice", () => {
    expect(issuesOf([calls("", ["c1", "shell"], ["c1", "shell"]), ran("c1", "shell", "x")])).toEqual(["records[0].toolCalls[1].toolCallId"]);
    const twice = findHistoryIssues([calls("", ["c1", "shell"]), ran("c1", "shell", "x"), ran("c1", "shell", "y")] as never);
    expect(twice).toHaveLength(1);
    expect(twice[0].path).toBe("records[2].toolCallId");
    expect(twice[0].message).toContain("already answered by records[1]");
  });

  it("refuses a result naming another tool than its announcement, and tool calls on a non-assistant message", () => {
    expect(issuesOf([calls("", ["c1", "shell"]), ran("c1", "read_file", "x")])).toEqual(["records[1].toolName"]);
    expect(issuesOf([{ type: "message", role: "user", content: "x", toolCalls: [{ toolCallId: "c1", toolName: "shell" }] }])).toEqual([
      "records[0].toolCalls",
    ]);
  });

  it("refuses a text over maxMessageBytes with LIMIT_EXCEEDED naming the field, arguments included", () => {
    const limitOf = (records: Imported[]) => {
      try {
        checkImportedHistory(records as never, 100);
      } catch (error) {
        expect(error).toBeInstanceOf(RpcError);
        return { code: (error as RpcError).code, message: (error as RpcError).message, data: (error as RpcError).data };
      }
      return undefined;
    };
    const big = "é".repeat(60); // 120 bytes, 60 characters
    expect(limitOf([user("ok"), calls("", ["c1", "shell"]), ran("c1", "shell", big)])).toMatchObject({
      code: -32050,
      message: expect.stringContaining("records[2].result"),
      data: { limit: "maxMessageBytes", max: 100, actual: 120 },
    });
    expect(limitOf([user(big)])?.message).toContain("records[0].content");
    expect(limitOf([calls("", ["c1", "shell"]), ran("c1", "shell", "", "completed", { command: big })])?.message).toContain(
      "records[1].arguments",
    );
    expect(limitOf([user("fine")])).toBeUndefined();
  });

  it("gives stored records new unique ids, keeps toolCallIds, fills absent timestamps and derives success", () => {
    const now = "2026-05-01T00:00:00.000Z";
    const stored = toStoredRecords(
      [
        { type: "message", role: "user", content: "hi", timestamp: "2025-01-01T00:00:00.000Z" },
        calls("", ["c1", "shell"], ["c2", "shell"], ["c3", "shell"]),
        ran("c1", "shell", "x"),
        ran("c2", "shell", "y", "failed"),
        { type: "tool_call", toolCallId: "c3", toolName: "shell", arguments: {}, status: "skipped" },
      ] as never,
      now,
    );
    expect(new Set(stored.map((r) => r.id)).size).toBe(5);
    for (const record of stored) expect(record.id).toMatch(/^r_/);
    expect(stored.map((r) => r.timestamp)).toEqual(["2025-01-01T00:00:00.000Z", now, now, now, now]);
    expect(stored.slice(2).map((r) => r.type === "tool_call" && [r.toolCallId, r.status, r.success, r.result])).toEqual([
      ["c1", "completed", true, "x"],
      ["c2", "failed", false, "y"],
      ["c3", "skipped", false, ""],
    ]);
  });

  it("whatever it accepts builds a request the API takes, every call answered by its own imported result", () => {
    // Random histories: the validator is the gate, the OpenAI rules the judge.
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    let accepted = 0;
    for (let trial = 0; trial < 400; trial++) {
      const records: Imported[] = [];
      const length = 1 + random(12);
      for (let i = 0; i < length; i++) {
        const kind = random(5);
        if (kind === 0) records.push(user(`u${i}`));
        else if (kind === 1) records.push(says(random(3) ? `a${i}` : ""));
        else if (kind === 2) records.push(calls(random(2) ? "" : `t${i}`, ...Array.from({ length: 1 + random(2) }, (_, k) => [`c${random(3)}${k}`, "shell"] as [string, string])));
        else records.push(ran(`c${random(3)}${random(2)}`, "shell", `out${i}`, (["completed", "failed", "skipped"] as const)[random(3)]));
      }
      if (findHistoryIssues(records as never).length > 0) continue;
      accepted++;
      const stored = toStoredRecords(records as never, "2026-05-01T00:00:00.000Z");
      const messages = buildLlmContext(stored, { toolHistoryRounds: 1000, system: "sys" });
      assertValidForOpenAI(messages, "sys");
      // No invented answer: each tool message carries the result imported for that call.
      const results = records.filter((r) => r.type === "tool_call").map((r) => (r.type === "tool_call" ? r.result : ""));
      expect(messages.filter((m) => m.role === "tool").map((m) => m.content)).toEqual(results);
    }
    expect(accepted).toBeGreaterThan(40);
  });
});

describe("conversation.create with records, end to end", () => {
  const fx = useAgentFixture();

  it("the model receives the imported history in order, each call paired with its result", async () => {
    const created = await fx.client.conversation.create({
      title: "imported",
      system: "Be brief.",
      records: [
        { type: "message", role: "user", content: "What is in the repo?", timestamp: "2025-12-01T10:00:00.000Z" },
        {
          type: "message",
          role: "assistant",
          content: "Looking.",
          reasoning: "list first",
          toolCalls: [
            { toolCallId: "call_ls", toolName: "shell" },
            { toolCallId: "call_cat", toolName: "shell" },
          ],
        },
        { type: "tool_call", toolCallId: "call_ls", toolName: "shell", arguments: { command: "ls" }, status: "completed", result: "README.md\nsrc", exitCode: 0 },
        { type: "tool_call", toolCallId: "call_cat", toolName: "shell", arguments: { command: "cat secrets" }, status: "skipped", result: "The user declined." },
        { type: "message", role: "assistant", content: "A README and src." },
        { type: "message", role: "system", content: "Answer in one word from now on." },
        { type: "message", role: "user", content: "And now?" },
      ],
    });
    expect(created.recordCount).toBe(7);
    // The records' old timestamps do not make the conversation older than its creation.
    expect(created.updatedAt >= created.createdAt).toBe(true);

    const events = new EventRecorder(fx.client, created.id);
    await fx.client.conversation.subscribe({ conversationId: created.id });
    fx.fake.enqueue({ kind: "reply", text: ["Same."] });
    const { generationId } = await fx.client.step({ conversationId: created.id });
    await events.waitForEnd(generationId);

    expect(fx.fake.requests).toHaveLength(1);
    expect(fx.fake.requests[0]!.messages).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "What is in the repo?" },
      {
        role: "assistant",
        content: "Looking.",
        tool_calls: [
          { id: "call_ls", type: "function", function: { name: "shell", arguments: JSON.stringify({ command: "ls" }) } },
          { id: "call_cat", type: "function", function: { name: "shell", arguments: JSON.stringify({ command: "cat secrets" }) } },
        ],
      },
      { role: "tool", tool_call_id: "call_ls", content: "README.md\nsrc" },
      { role: "tool", tool_call_id: "call_cat", content: "The user declined." },
      { role: "assistant", content: "A README and src." },
      { role: "system", content: "Answer in one word from now on." },
      { role: "user", content: "And now?" },
    ]);

    const { records } = await fx.client.conversation.get({ conversationId: created.id, includeRecords: true });
    expect(records).toHaveLength(8);
    expect(records![0]).toMatchObject({ type: "message", role: "user", timestamp: "2025-12-01T10:00:00.000Z" });
    expect(records![1]).toMatchObject({ reasoning: "list first", toolCalls: [{ toolCallId: "call_ls" }, { toolCallId: "call_cat" }] });
    expect(records![2]).toMatchObject({ type: "tool_call", status: "completed", success: true, exitCode: 0 });
    expect(records![3]).toMatchObject({ type: "tool_call", status: "skipped", success: false });
    expect(records![7]).toMatchObject({ role: "assistant", content: "Same." });
  });

  it("refuses invalid histories naming the record, and creates nothing", async () => {
    const before = (await fx.client.conversation.list({ limit: 500 })).data.length;
    const pending = await expectInvalidParams(
      fx.client.conversation.create({
        records: [
          { type: "message", role: "assistant", content: "", toolCalls: [{ toolCallId: "c1", toolName: "shell" }] },
          { type: "tool_call", toolCallId: "c1", toolName: "shell", arguments: {}, status: "pending" as never },
        ],
      }),
      "records[1].status",
    );
    expect(pending.message).toContain("only settled tool calls can be imported");
    await expectInvalidParams(
      fx.client.conversation.create({
        records: [{ type: "message", role: "user", content: "hi" }, { type: "tool_call", toolCallId: "c1", toolName: "shell", arguments: {}, status: "completed" }],
      }),
      "records[1].toolCallId",
    );
    await expectInvalidParams(
      fx.client.conversation.create({
        records: [{ type: "message", role: "assistant", content: "", toolCalls: [{ toolCallId: "c1", toolName: "shell" }] }],
      }),
      "records[0].toolCalls[0].toolCallId",
    );
    // Client ids are not taken: the server assigns record ids.
    await expectInvalidParams(
      fx.client.conversation.create({ records: [{ type: "message", role: "user", content: "hi", id: "r_mine" } as never] }),
      "records[0]",
    );
    const many = Array.from({ length: MAX_IMPORTED_RECORDS + 1 }, () => ({ type: "message" as const, role: "user" as const, content: "" }));
    await expectInvalidParams(fx.client.conversation.create({ records: many }), "records");
    expect((await fx.client.conversation.list({ limit: 500 })).data.length).toBe(before);
  });

  it("refuses a record over maxMessageBytes with LIMIT_EXCEEDED naming it", async () => {
    const small = await startAgentFixture({ config: { limits: { maxMessageBytes: 1000 } } });
    try {
      const error = await rpcError(
        small.client.conversation.create({
          records: [
            { type: "message", role: "user", content: "short" },
            { type: "message", role: "assistant", content: "x".repeat(1001) },
          ],
        }),
      );
      expect(error.code).toBe(-32050);
      expect(error.message).toContain("records[1].content");
      expect(error.data).toMatchObject({ limit: "maxMessageBytes", max: 1000, actual: 1001 });
      expect((await small.client.conversation.list()).data).toEqual([]);
    } finally {
      await small.close();
    }
  });
});

describe("message.append with role assistant", () => {
  const fx = useAgentFixture();

  it("stores it, announces it, and the model sees it as its own earlier reply", async () => {
    const { id, events } = await newConversation(fx.client, {}, "2+2?");
    const record = await fx.client.message.append({ conversationId: id, role: "assistant", content: "4." });
    expect(record).toMatchObject({ type: "message", role: "assistant", content: "4.", id: expect.stringMatching(/^r_/) });
    await events.waitFor((e) => e.method === "message_added" && e.params.record.id === record.id);
    await fx.client.message.append({ conversationId: id, role: "user", content: "and 3+3?" });
    fx.fake.enqueue({ kind: "reply", text: ["6."] });
    const { generationId } = await fx.client.step({ conversationId: id });
    await events.waitForEnd(generationId);
    // After the default system prompt (the template), the history as appended.
    expect(fx.fake.requests[0]!.messages.filter((m: { role: string }) => m.role !== "system")).toEqual([
      { role: "user", content: "2+2?" },
      { role: "assistant", content: "4." },
      { role: "user", content: "and 3+3?" },
    ]);
  });

  it("is refused while a generation runs (user messages are not), and for an unknown conversation", async () => {
    fx.fake.enqueue({ kind: "reply", toolCalls: [{ id: "call_1", name: "shell", args: JSON.stringify({ command: "echo hi" }) }] }, { kind: "reply", text: ["ok"] });
    const { id, events } = await newConversation(fx.client);
    const { generationId } = await fx.client.step({ conversationId: id });
    await events.waitForMethod("tool_pending");
    const busy = await rpcError(fx.client.message.append({ conversationId: id, role: "assistant", content: "I am not the model" }));
    expect(busy.code).toBe(-32020);
    expect(busy.data).toEqual({ generationId });
    await fx.client.message.append({ conversationId: id, role: "user", content: "a user note mid-generation" });
    await fx.client.interrupt({ conversationId: id });
    await events.waitForEnd(generationId);
    const { records } = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
    expect(records!.some((r) => r.type === "message" && r.content === "I am not the model")).toBe(false);
    await expectNotFound(fx.client.message.append({ conversationId: "c_missing", role: "assistant", content: "x" }), "c_missing");
  });
});

describe("message.append role assistant after a restart with pending calls", () => {
  const store = useStoreDir("history");

  it("is refused naming role while stored calls are pending, so their round is not closed under them", async () => {
    const first = await startAgentFixture({ config: { server: { dataDir: store.path } } });
    let id: string;
    try {
      first.fake.enqueue({ kind: "reply", toolCalls: [{ id: "call_p", name: "shell", args: JSON.stringify({ command: "echo later" }) }] });
      const conversation = await newConversation(first.client);
      id = conversation.id;
      await first.client.step({ conversationId: id });
      await conversation.events.waitForMethod("tool_pending");
    } finally {
      await first.close(); // a graceful stop keeps the pending call pending on disk
    }
    const second = await startAgentFixture({ config: { server: { dataDir: store.path } } });
    try {
      const error = await expectInvalidParams(second.client.message.append({ conversationId: id, role: "assistant", content: "x" }), "role");
      expect(error.message).toContain('"call_p"');
      await second.client.message.append({ conversationId: id, role: "user", content: "still fine" });
      const { state } = await second.client.conversation.get({ conversationId: id });
      expect(state.pendingTools.map((t) => t.toolCallId)).toEqual(["call_p"]);
    } finally {
      await second.close();
    }
  });
});
