/**
 * conversation.fork: a copy of a conversation's records, all or the first
 * `atRecord`, into an independent new conversation — never with an
 * unsettled tool call, read page by page.
 */
import { describe, expect, it } from "vitest";
import type { ConversationRecord } from "../../protocol/index.js";
import type { AgentwireClient } from "../../clients/typescript/index.js";
import { forkPoint } from "../../src/handlers/fork-point.js";
import { RpcError } from "../../src/rpc/rpc-error.js";
import { newConversation, startAgentFixture, useAgentFixture } from "../harness/agent-fixture.js";
import { EventRecorder } from "../harness/event-recorder.js";
import { expectInvalidParams, expectNotFound } from "../harness/rpc-errors.js";
import { useStoreDir } from "../harness/store-dir.js";

const T = "2026-01-01T00:00:00.000Z";

/** A user question, a tool round of two calls, an answer, a follow-up question: 6 records. */
const HISTORY = [
  { type: "message", role: "user", content: "what is here?" },
  {
    type: "message",
    role: "assistant",
    content: "",
    toolCalls: [
      { toolCallId: "c1", toolName: "shell" },
      { toolCallId: "c2", toolName: "shell" },
    ],
  },
  { type: "tool_call", toolCallId: "c1", toolName: "shell", arguments: { command: "ls" }, status: "completed", result: "a b" },
  { type: "tool_call", toolCallId: "c2", toolName: "shell", arguments: { command: "rm b" }, status: "skipped", result: "declined" },
  { type: "message", role: "assistant", content: "a and b." },
  { type: "message", role: "user", content: "thanks" },
] as const;

async function createOriginal(client: AgentwireClient) {
  return client.conversation.create({
    title: "Original",
    model: "m-x",
    system: "sys",
    settings: { maxIterations: 3, toolHistoryRounds: 2 },
    records: HISTORY.map((r) => ({ ...r })) as never,
  });
}

async function recordsOf(client: AgentwireClient, id: string): Promise<ConversationRecord[]> {
  return (await client.conversation.get({ conversationId: id, includeRecords: true })).records!;
}

/** Records without their ids (which a fork renews) for comparing contents. */
const withoutIds = (records: ConversationRecord[]) => records.map(({ id: _id, ...rest }) => rest);

describe("conversation.fork", () => {
  const fx = useAgentFixture();

  it("copies every record with new ids, keeps model, system, workspace and settings, and titles it \"(fork)\"", async () => {
    const original = await createOriginal(fx.client);
    const fork = await fx.client.conversation.fork({ conversationId: original.id });
    expect(fork.id).not.toBe(original.id);
    expect(fork).toMatchObject({
      title: "Original (fork)",
      model: "m-x",
      system: "sys",
      workspace: original.workspace,
      settings: original.settings,
      recordCount: 6,
    });
    const [source, copy] = [await recordsOf(fx.client, original.id), await recordsOf(fx.client, fork.id)];
    expect(withoutIds(copy)).toEqual(withoutIds(source));
    const ids = new Set([...source, ...copy].map((r) => r.id));
    expect(ids.size).toBe(12);
    expect((await fx.client.conversation.fork({ conversationId: original.id, title: "Mine" })).title).toBe("Mine");
  });

  it("at a point: the first atRecord records; 0 gives an empty copy", async () => {
    const original = await createOriginal(fx.client);
    const fork = await fx.client.conversation.fork({ conversationId: original.id, atRecord: 4 });
    expect(fork.recordCount).toBe(4);
    expect(withoutIds(await recordsOf(fx.client, fork.id))).toEqual(withoutIds((await recordsOf(fx.client, original.id)).slice(0, 4)));
    expect((await fx.client.conversation.fork({ conversationId: original.id, atRecord: 0 })).recordCount).toBe(0);
    // The model gets the fork's history and nothing after the cut.
    fx.fake.enqueue({ kind: "reply", text: ["forked answer"] });
    const events = new EventRecorder(fx.client, fork.id);
    await fx.client.conversation.subscribe({ conversationId: fork.id });
    const { generationId } = await fx.client.step({ conversationId: fork.id });
    await events.waitForEnd(generationId);
    const sent = fx.fake.requests[0]!.messages;
    expect(sent.map((m: { role: string }) => m.role)).toEqual(["system", "user", "assistant", "tool", "tool"]);
    expect(fx.fake.requests[0]!.model).toBe("m-x");
  });

  it("is independent: appending to either changes only that one", async () => {
    const original = await createOriginal(fx.client);
    const fork = await fx.client.conversation.fork({ conversationId: original.id });
    await fx.client.message.append({ conversationId: fork.id, role: "user", content: "only in the fork" });
    await fx.client.message.append({ conversationId: original.id, role: "assistant", content: "only in the original" });
    await fx.client.conversation.update({ conversationId: fork.id, title: "renamed fork" });
    const [source, copy] = [await recordsOf(fx.client, original.id), await recordsOf(fx.client, fork.id)];
    expect(source.at(-1)).toMatchObject({ content: "only in the original" });
    expect(copy.at(-1)).toMatchObject({ content: "only in the fork" });
    expect(source).toHaveLength(7);
    expect(copy).toHaveLength(7);
    expect((await fx.client.conversation.get({ conversationId: original.id })).conversation.title).toBe("Original");
  });

  it("refuses an atRecord that splits a tool round or is past the end, naming atRecord; unknown ids get CONVERSATION_NOT_FOUND", async () => {
    const original = await createOriginal(fx.client);
    const count = async () => (await fx.client.conversation.list({ limit: 500 })).data.length;
    const before = await count();
    for (const atRecord of [2, 3]) {
      const error = await expectInvalidParams(fx.client.conversation.fork({ conversationId: original.id, atRecord }), "atRecord");
      expect(error.message).toContain("position 1");
    }
    const past = await expectInvalidParams(fx.client.conversation.fork({ conversationId: original.id, atRecord: 7 }), "atRecord");
    expect(past.message).toContain("6 records");
    await expectNotFound(fx.client.conversation.fork({ conversationId: "c_nobody" }), "c_nobody");
    // Nothing was created by the refusals.
    expect(await count()).toBe(before);
  });

  it("during a generation waiting on a tool call: copies only the settled records, never the pending call", async () => {
    fx.fake.enqueue(
      { kind: "reply", text: ["Checking."], toolCalls: [{ id: "call_live", name: "shell", args: JSON.stringify({ command: "echo hi" }) }] },
      { kind: "reply", text: ["done"] },
    );
    const { id, events } = await newConversation(fx.client, { title: "live" }, "run it");
    const { generationId } = await fx.client.step({ conversationId: id });
    await events.waitForMethod("tool_pending");
    expect((await fx.client.conversation.get({ conversationId: id })).conversation.recordCount).toBe(3);

    const fork = await fx.client.conversation.fork({ conversationId: id });
    expect(fork.recordCount).toBe(1); // the user message: the open round is cut off
    expect(await recordsOf(fx.client, fork.id)).toMatchObject([{ role: "user", content: "run it" }]);
    const forkState = (await fx.client.conversation.get({ conversationId: fork.id })).state;
    expect(forkState).toMatchObject({ generating: false, pendingTools: [] });
    // Asking for the whole conversation explicitly names the unsettled call instead.
    const error = await expectInvalidParams(fx.client.conversation.fork({ conversationId: id, atRecord: 3 }), "atRecord");
    expect(error.message).toContain('"call_live" is pending');

    await fx.client.tool.confirm({ conversationId: id, toolCallId: "call_live", action: "confirm" });
    await events.waitForEnd(generationId);
    // Settled now: the whole conversation is copied.
    const after = await fx.client.conversation.fork({ conversationId: id });
    expect(after.recordCount).toBe(4);
    expect((await recordsOf(fx.client, after.id))[2]).toMatchObject({ type: "tool_call", toolCallId: "call_live", status: "completed" });
  });

  it("copies a conversation longer than one page", async () => {
    const records = Array.from({ length: 1234 }, (_, i) => ({ type: "message" as const, role: i % 2 ? ("assistant" as const) : ("user" as const), content: `m${i}` }));
    const original = await fx.client.conversation.create({ records });
    const fork = await fx.client.conversation.fork({ conversationId: original.id, atRecord: 1201 });
    expect(fork.recordCount).toBe(1201);
    const tail = (await fx.client.conversation.get({ conversationId: fork.id, includeRecords: true, recordsFrom: 1195 })).records!;
    expect(tail.map((r) => (r.type === "message" ? r.content : ""))).toEqual(["m1195", "m1196", "m1197", "m1198", "m1199", "m1200"]);
  });
});

describe("a fork on disk", () => {
  const store = useStoreDir("fork");

  it("survives a restart with the lowdb store, and stays apart from the original", async () => {
    const first = await startAgentFixture({ config: { server: { dataDir: store.path } } });
    let originalId: string;
    let forkId: string;
    let expected: ConversationRecord[];
    try {
      originalId = (await createOriginal(first.client)).id;
      forkId = (await first.client.conversation.fork({ conversationId: originalId, atRecord: 5 })).id;
      await first.client.message.append({ conversationId: forkId, role: "user", content: "fork only" });
      expected = await recordsOf(first.client, forkId);
    } finally {
      await first.close();
    }
    const second = await startAgentFixture({ config: { server: { dataDir: store.path } } });
    try {
      expect(await recordsOf(second.client, forkId)).toEqual(expected);
      expect(expected).toHaveLength(6);
      const original = await recordsOf(second.client, originalId);
      expect(original).toHaveLength(6);
      expect(original.some((r) => r.type === "message" && r.content === "fork only")).toBe(false);
      expect((await second.client.conversation.get({ conversationId: forkId })).conversation.title).toBe("Original (fork)");
    } finally {
      await second.close();
    }
  });
});

describe("forkPoint", () => {
  const message = (role: "user" | "assistant", extra: object = {}): ConversationRecord =>
    ({ type: "message", id: "r", role, content: "x", timestamp: T, ...extra }) as ConversationRecord;
  const call = (toolCallId: string, status: string): ConversationRecord =>
    ({ type: "tool_call", id: "r", toolCallId, toolName: "shell", arguments: {}, result: null, success: null, status, timestamp: T }) as ConversationRecord;

  /** A reader over `records` that notes every page it is asked for. */
  function reader(records: ConversationRecord[]) {
    const reads: Array<[number, number]> = [];
    return { reads, read: async (from: number, to: number) => (reads.push([from, to]), records.slice(from, to)) };
  }

  it("reads backwards only as far as the last assistant message, a page at a time", async () => {
    const records = Array.from({ length: 2000 }, (_, i) => message(i === 1700 ? "assistant" : "user"));
    const { reads, read } = reader(records);
    expect(await forkPoint(read, 2000)).toBe(2000);
    expect(reads).toEqual([[1500, 2000]]);
  });

  it("cuts before an unsettled last round, whatever its state, and refuses an explicit cut inside it", async () => {
    const asks = message("assistant", { toolCalls: [{ toolCallId: "a", toolName: "shell" }, { toolCallId: "b", toolName: "shell" }] });
    const cases: Array<[ConversationRecord[], number]> = [
      [[message("user"), asks, call("a", "completed"), call("b", "pending")], 1],
      [[message("user"), asks, call("a", "executing"), call("b", "pending"), message("user")], 1],
      [[message("user"), asks, call("a", "completed")], 1], // b not stored yet
      [[message("user"), asks, call("a", "completed"), call("b", "skipped"), message("user")], 5],
    ];
    for (const [records, expected] of cases) {
      expect(await forkPoint(reader(records).read, records.length)).toBe(expected);
      if (expected !== records.length) {
        const refused = await forkPoint(reader(records).read, records.length, records.length).catch((e: unknown) => e);
        expect(refused).toBeInstanceOf(RpcError);
        expect((refused as RpcError).data).toMatchObject({ issues: [{ path: "atRecord" }] });
      }
    }
  });
});
