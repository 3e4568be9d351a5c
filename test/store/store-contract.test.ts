/**
 * The ConversationStore contract, run against every store: what the layers
 * above (hub, generation loop, handlers) may rely on, whichever store the
 * server was started with. Store-specific behaviour has its own files
 * (store.test.ts and store-*.test.ts for lowdb, postgres-store.test.ts).
 *
 * The PostgreSQL subject needs a server (see test/harness/postgres-db.ts);
 * without one it is skipped, saying how to run it.
 */
import { describe, expect, it } from "vitest";
import type { ConversationRecord } from "../../protocol/index.js";
import { AssetQuotaError, type AssetLimits } from "../../src/store/asset-quota.js";
import { InvalidCursorError, TruncateConflictError, type AssetInfo, type ConversationStore, type RunState } from "../../src/store/conversation-store.js";
import { compareNewestFirst } from "../../src/store/list-page.js";
import { MemoryConversationStore } from "../../src/store/memory-store.js";
import { postgresReachable, usePostgresDatabase } from "../harness/postgres-db.js";
import { useStoreDir } from "../harness/store-dir.js";
import { assistantMessage, compaction, conversation, message, range, toolCall, userMessage } from "../harness/store-records.js";
import { ConversationExistsError } from "../../src/store/conversation-exists-error.js";

const ids = (records: readonly ConversationRecord[]) => records.map((r) => r.id);

/** One store under test: how to open it, and (for stores that keep data) how to open it again on the same data. */
interface Subject {
  /** `assetLimits`: the asset quotas to enforce (none by default). */
  open(assetLimits?: AssetLimits): Promise<ConversationStore>;
  /** Closes `store` and opens a new one on what it stored; absent for the memory store. */
  reopen?(store: ConversationStore, assetLimits?: AssetLimits): Promise<ConversationStore>;
}

const dir = useStoreDir("contract");
const lowdb: Subject = {
  // Small segments, so every case crosses segment boundaries.
  open: (assetLimits) => dir.open({ segmentSize: 4, assetLimits }),
  async reopen(store, assetLimits) {
    await dir.close(store as Awaited<ReturnType<typeof dir.open>>);
    return dir.open({ segmentSize: 4, assetLimits });
  },
};
const memory: Subject = { open: async (assetLimits) => new MemoryConversationStore({ assetLimits }) };

const pgUp = await postgresReachable("store-contract.test.ts");
const db = pgUp ? usePostgresDatabase("contract", { resetEach: true }) : undefined;
const postgres: Subject = {
  open: (assetLimits) => db!.open({ assetLimits }),
  async reopen(store, assetLimits) {
    await db!.close(store as Awaited<ReturnType<NonNullable<typeof db>["open"]>>);
    return db!.open({ assetLimits });
  },
};

const subjects: [string, Subject, boolean][] = [
  ["LowdbConversationStore", lowdb, true],
  ["MemoryConversationStore", memory, true],
  ["PostgresConversationStore", postgres, pgUp],
];

const png = (n: number): AssetInfo => ({
  assetId: `a_${n}`,
  mimeType: "image/png",
  size: 4,
  name: `picture ${n}.png`,
  createdAt: "2026-01-01T00:00:00.000Z",
});

/** An asset of `n` bytes (the store keeps any bytes; the handler checks they are an image). */
const blob = (n: number) => new Uint8Array(n).fill(7);

/** The AssetQuotaError `write` rejects with. */
async function quotaError(write: Promise<unknown>): Promise<AssetQuotaError> {
  const error = await write.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AssetQuotaError);
  return error as AssetQuotaError;
}

const runState = (n: number): RunState => ({
  lastError: { code: -32030, message: `failed ${n}`, status: 400, timestamp: "2026-01-01T00:00:00.000Z" },
  lastGeneration: {
    generationId: `g_${n}`,
    outcome: "error",
    endedAt: "2026-01-01T00:00:01.000Z",
    error: { code: -32030, message: `failed ${n}`, status: 400 },
    usage: null,
    modelCalls: 1,
    finalRecordId: null,
  },
  autoConfirmRemaining: n,
  plan: { entries: [{ content: `step ${n}`, status: "in_progress", priority: "high" }], generationId: `g_${n}`, updatedAt: "2026-01-01T00:00:00.500Z" },
});

describe.each(subjects)("%s: the ConversationStore contract", (_name, subject, available) => {
  const it_ = it.skipIf(!available);
  // Cases about closing, reopening and unloading mean nothing for the memory store: not registered
  // there at all (a skip would read as a case that could not run).
  const itDurable = subject.reopen ? it_ : (() => {}) as unknown as typeof it_;

  itDurable("stores a compaction record among the others and loads it back after a restart (nothing before it is dropped)", async () => {
    let store = await subject.open();
    const handle = await store.create(conversation("c1"));
    const records: ConversationRecord[] = [userMessage(1), { ...assistantMessage(2), toolCalls: [{ toolCallId: "call_3", toolName: "shell" }] }, toolCall(3, "completed", "three"), assistantMessage(4), compaction(5), userMessage(6), assistantMessage(7)];
    for (const record of records) await handle.append(record);
    expect(await handle.readRecords()).toEqual(records);
    store = await subject.reopen!(store);
    const again = (await store.get("c1"))!;
    expect(again.conversation.recordCount).toBe(records.length);
    expect(await again.readRecords()).toEqual(records);
    expect(await again.readRecords(4, 5)).toEqual([compaction(5)]);
    expect(again.openToolCalls).toEqual([]);
    expect(store.damaged()).toEqual([]);
  });

  it_("appends, replaces, updates and reserves; readers see each change once its promise resolved", async () => {
    const store = await subject.open();
    const handle = await store.create(conversation("c1"));
    expect(handle.recordCount).toBe(0);
    expect(handle.conversation.recordCount).toBe(0);

    const appending = handle.append(userMessage(1));
    // Not visible before it is durable.
    expect(handle.recordCount).toBe(0);
    await appending;
    expect(handle.recordCount).toBe(1);
    expect(handle.conversation).toMatchObject({ recordCount: 1, updatedAt: userMessage(1).timestamp });

    await handle.append(assistantMessage(2));
    await handle.append(toolCall(3, "pending", null));
    await handle.append(toolCall(4, "pending", null));
    expect(handle.openToolCalls).toEqual([toolCall(3, "pending", null), toolCall(4, "pending", null)]);

    const replacing = handle.replaceRecord(toolCall(3, "completed", "three"));
    expect(handle.openToolCalls[0]).toEqual(toolCall(3, "pending", null));
    await replacing;
    expect(handle.openToolCalls).toEqual([toolCall(3, "completed", "three"), toolCall(4, "pending", null)]);
    expect(await handle.findToolCall("call_3")).toEqual(toolCall(3, "completed", "three"));
    expect(await handle.findToolCall("call_99")).toBeUndefined();

    const updating = handle.update({ ...conversation("c1"), title: "renamed", recordCount: 999, createdAt: "1999-01-01T00:00:00.000Z" });
    expect(handle.conversation.title).toBe("title c1");
    await updating;
    expect(handle.conversation).toMatchObject({ title: "renamed", recordCount: 4, createdAt: conversation("c1").createdAt });

    const reserving = handle.reserveSeq(500);
    expect(handle.seqReserved).toBe(0);
    await reserving;
    await handle.reserveSeq(100); // lower: keeps 500
    expect(handle.seqReserved).toBe(500);

    await handle.append(assistantMessage(5));
    expect(handle.openToolCalls).toEqual([]);
    expect(await handle.readRecords()).toEqual([
      userMessage(1),
      assistantMessage(2),
      toolCall(3, "completed", "three"),
      toolCall(4, "pending", null),
      assistantMessage(5),
    ]);
    expect(store.damaged()).toEqual([]);
  });

  it_("readRecords clamps [from, to) to what exists", async () => {
    const store = await subject.open();
    const handle = await store.create(conversation("c1"));
    for (const n of range(10)) await handle.append(message(n));
    expect(ids(await handle.readRecords(0, 3))).toEqual(["m0", "m1", "m2"]);
    expect(ids(await handle.readRecords(3, 9))).toEqual(["m3", "m4", "m5", "m6", "m7", "m8"]);
    expect(ids(await handle.readRecords(8))).toEqual(["m8", "m9"]);
    expect(ids(await handle.readRecords(-5, 2))).toEqual(["m0", "m1"]);
    expect(await handle.readRecords(6, 2)).toEqual([]);
    expect(await handle.readRecords(10, 100)).toEqual([]);
    expect(ids(await handle.readRecords(9, 100))).toEqual(["m9"]);
  });

  it_("keeps all of 200 un-awaited appends, resolved and stored in call order", async () => {
    const store = await subject.open();
    const handle = await store.create(conversation("burst"));
    const resolved: number[] = [];
    const writes = range(200).map((n) => handle.append(message(n)).then(() => resolved.push(n)));
    expect(handle.recordCount).toBe(0);
    await Promise.all(writes);
    expect(resolved).toEqual(range(200));
    expect(handle.recordCount).toBe(200);
    expect(handle.conversation.updatedAt).toBe(message(199).timestamp);
    expect(ids(await handle.readRecords())).toEqual(range(200).map((n) => `m${n}`));
  });

  it_("refuses a record id already in the open round, and a replace of an unknown id, changing nothing", async () => {
    const store = await subject.open();
    const handle = await store.create(conversation("c1"));
    await handle.append(assistantMessage(1));
    await handle.append(toolCall(2, "pending", null));
    await expect(handle.append(toolCall(2, "completed", "again"))).rejects.toThrow(/already in the conversation/);
    await expect(handle.replaceRecord(toolCall(99, "completed", "x"))).rejects.toThrow(/not in the conversation/);
    await expect(handle.update({ ...conversation("other") })).rejects.toThrow(/update of c1 got conversation other/);
    expect(handle.recordCount).toBe(2);
    expect(await handle.readRecords()).toEqual([assistantMessage(1), toolCall(2, "pending", null)]);
  });

  it_("findToolCall returns the latest record of a tool call id, from anywhere in the conversation", async () => {
    const store = await subject.open();
    const handle = await store.create(conversation("c1"));
    await handle.append(assistantMessage(1));
    await handle.append(toolCall(2, "completed", "first", "call_x"));
    for (const n of range(10, 3)) await handle.append(message(n));
    await handle.append(toolCall(13, "failed", "second", "call_x"));
    await handle.append(assistantMessage(15));
    expect(handle.openToolCalls).toEqual([]);
    expect(await handle.findToolCall("call_x")).toEqual(toolCall(13, "failed", "second", "call_x"));
    await handle.replaceRecord(toolCall(2, "completed", "first, edited", "call_x"));
    expect((await handle.findToolCall("call_x"))!.id).toBe("t13");
  });

  it_("lists newest first, ties by id, with a cursor; deletes", async () => {
    const store = await subject.open();
    const handle = await store.create(conversation("a", "2026-01-01T00:00:00.000Z"));
    await store.create(conversation("b", "2026-01-02T00:00:00.000Z"));
    await store.create(conversation("c", "2026-01-02T00:00:00.000Z"));
    await handle.update({ ...handle.conversation, title: "t" });
    const first = await store.list({ limit: 2 });
    expect(first.data.map((c) => c.id)).toEqual(["c", "b"]);
    expect(first.damaged).toBeUndefined();
    const second = await store.list({ limit: 2, cursor: first.nextCursor });
    expect(second).toEqual({ data: [expect.objectContaining({ id: "a", title: "t" })] });
    await expect(store.list({ limit: 2, cursor: "bad!" })).rejects.toBeInstanceOf(InvalidCursorError);
    expect(await store.delete("a")).toBe(true);
    expect(await store.delete("a")).toBe(false);
    expect(await store.get("a")).toBeUndefined();
    expect(store.count()).toBe(2);
  });

  it_("pages by cursor through 23 conversations, newest first, ties by id: none missed, none twice, stable across changes", async () => {
    const store = await subject.open();
    // Four creation times for 23 conversations: most pages end inside a run of ties.
    const made = range(23).map((n) => conversation(`c_${(n * 7) % 23}`, `2026-01-0${1 + (n % 4)}T00:00:00.000Z`));
    for (const c of made) await store.create(c);
    const expected = [...made].sort(compareNewestFirst).map((c) => c.id);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await store.list({ limit: 5, cursor });
      expect(page.data.length).toBeLessThanOrEqual(5);
      seen.push(...page.data.map((c) => c.id));
      cursor = page.nextCursor;
      pages++;
      if (pages === 2) {
        // Between pages: a newer conversation (belongs before the cursor) and a deleted one ahead.
        await store.create(conversation("late", "2026-02-01T00:00:00.000Z"));
        expect(await store.delete(expected[20])).toBe(true);
      }
    } while (cursor);
    expect(seen).toEqual(expected.filter((id) => id !== expected[20]));
    expect(pages).toBe(5);
    expect((await store.list({ limit: 1 })).data[0].id).toBe("late");
    expect(store.count()).toBe(23);
    const all = await store.list({ limit: 100 });
    expect(all.nextCursor).toBeUndefined();
    expect(all.data).toHaveLength(23);
    expect(all.data.every((c) => c.recordCount === 0 && c.settings.maxIterations === 20)).toBe(true);
  });

  it_("lists a parent's sub-agents only (parentConversationId), newest first, paged, and again after a reopen", async () => {
    let store = await subject.open();
    const child = (id: string, parent: string, day: number) => ({
      ...conversation(id, `2026-01-0${day}T00:00:00.000Z`),
      parentConversationId: parent,
      parentToolCallId: `call_${id}`,
      agentDepth: 1,
    });
    await store.create(conversation("p1"));
    await store.create(conversation("p2"));
    for (const [id, day] of [["k1", 2], ["k2", 3], ["k3", 4]] as const) await store.create(child(id, "p1", day));
    await store.create(child("other", "p2", 5));
    const check = async (s: ConversationStore) => {
      const first = await s.list({ limit: 2, parentConversationId: "p1" });
      expect(first.data.map((c) => c.id)).toEqual(["k3", "k2"]);
      expect(first.data[0]).toMatchObject({ parentConversationId: "p1", parentToolCallId: "call_k3", agentDepth: 1 });
      const rest = await s.list({ limit: 2, parentConversationId: "p1", cursor: first.nextCursor });
      expect(rest).toEqual({ data: [expect.objectContaining({ id: "k1" })] });
      expect((await s.list({ limit: 10, parentConversationId: "p2" })).data.map((c) => c.id)).toEqual(["other"]);
      expect((await s.list({ limit: 10, parentConversationId: "k1" })).data).toEqual([]);
      expect((await s.list({ limit: 10 })).data).toHaveLength(6);
    };
    await check(store);
    expect(await store.delete("k2")).toBe(true);
    expect((await store.list({ limit: 10, parentConversationId: "p1" })).data.map((c) => c.id)).toEqual(["k3", "k1"]);
    await store.create(child("k2", "p1", 3));
    if (subject.reopen) store = await subject.reopen(store);
    await check(store);
  });

  it_("throws InvalidCursorError for a cursor it did not hand out", async () => {
    const store = await subject.open();
    await store.create(conversation("c1"));
    for (const cursor of ["garbage!", "bm9waXBl", Buffer.from("x|../etc").toString("base64url"), "%%%", ""]) {
      await expect(store.list({ limit: 10, cursor })).rejects.toBeInstanceOf(InvalidCursorError);
    }
  });

  it_("keeps assets with their conversation: info, bytes, replaced by a second put, unknown ids undefined", async () => {
    const store = await subject.open();
    const handle = await store.create(conversation("pics"));
    const other = await store.create(conversation("other"));
    const bytes = Uint8Array.from([0x89, 0x50, 0x4e, 0x47]);
    await handle.putAsset(png(1), bytes);
    expect(await handle.assetInfo("a_1")).toEqual(png(1));
    const read = await handle.readAsset("a_1");
    expect(read!.info).toEqual(png(1));
    expect([...read!.bytes]).toEqual([0x89, 0x50, 0x4e, 0x47]);
    await handle.putAsset({ ...png(1), size: 2, name: undefined }, Uint8Array.from([1, 2]));
    expect([...(await handle.readAsset("a_1"))!.bytes]).toEqual([1, 2]);
    expect((await handle.assetInfo("a_1"))!.size).toBe(2);
    expect(await handle.assetInfo("a_2")).toBeUndefined();
    expect(await handle.readAsset("a_2")).toBeUndefined();
    expect(await handle.assetInfo("../a_1")).toBeUndefined();
    // Per conversation.
    expect(await other.assetInfo("a_1")).toBeUndefined();
    // A binary asset of every byte value survives.
    const all = Uint8Array.from(range(256));
    await handle.putAsset({ ...png(3), size: 256 }, all);
    expect(Buffer.compare((await handle.readAsset("a_3"))!.bytes, Buffer.from(all))).toBe(0);
  });

  it_("refuses an asset that would pass the conversation's or the store's quota, storing nothing; a replacement counts the difference", async () => {
    const store = await subject.open({ maxConversationAssetBytes: 10, maxTotalAssetBytes: 16 });
    const one = await store.create(conversation("one"));
    const two = await store.create(conversation("two"));
    await one.putAsset({ ...png(1), size: 6 }, blob(6));
    const perConversation = await quotaError(one.putAsset({ ...png(2), size: 5 }, blob(5)));
    expect(perConversation).toMatchObject({ limit: "maxConversationAssetBytes", max: 10, actual: 11 });
    expect(perConversation.message).toBe(
      "this conversation keeps 6 bytes of images; this one (5 bytes) would bring it over limits.maxConversationAssetBytes (10); continue in a new conversation, or raise the limit",
    );
    expect(await one.assetInfo("a_2")).toBeUndefined();
    await one.putAsset({ ...png(2), size: 4 }, blob(4)); // exactly at the limit
    // Replacing a_1 (6 bytes): as large is fine, one byte more is not.
    await one.putAsset({ ...png(1), size: 6 }, blob(6));
    expect(await quotaError(one.putAsset({ ...png(1), size: 7 }, blob(7)))).toMatchObject({ limit: "maxConversationAssetBytes", actual: 11 });
    expect((await one.readAsset("a_1"))!.bytes.length).toBe(6);

    await two.putAsset({ ...png(1), size: 6 }, blob(6)); // 16 in all
    const total = await quotaError(two.putAsset({ ...png(2), size: 1 }, blob(1)));
    expect(total).toMatchObject({ limit: "maxTotalAssetBytes", max: 16, actual: 17 });
    expect(total.message).toBe(
      "the server keeps 16 bytes of images in all; this one (1 bytes) would bring it over limits.maxTotalAssetBytes (16); delete conversations that hold images, or raise the limit",
    );
    expect(await two.assetInfo("a_2")).toBeUndefined();
  });

  it_("uploads racing each other cannot pass the quota together; deleting a conversation frees its share", async () => {
    const store = await subject.open({ maxConversationAssetBytes: 100, maxTotalAssetBytes: 16 });
    const full = await store.create(conversation("full"));
    await full.putAsset({ ...png(1), size: 6 }, blob(6));
    const a = await store.create(conversation("a"));
    const b = await store.create(conversation("b"));
    // 10 bytes of room, 20 asked for at once by two conversations: exactly five of the ten get in.
    const puts = range(10).map((n) => (n % 2 ? a : b).putAsset({ ...png(n), size: 2 }, blob(2)));
    const outcomes = await Promise.allSettled(puts);
    const refused = outcomes.filter((o) => o.status === "rejected").map((o) => (o as PromiseRejectedResult).reason);
    expect(refused).toHaveLength(5);
    for (const error of refused) expect(error).toMatchObject({ limit: "maxTotalAssetBytes", max: 16 });
    const stored = await Promise.all(range(10).map((n) => (n % 2 ? a : b).assetInfo(`a_${n}`)));
    expect(stored.filter((info) => info !== undefined)).toHaveLength(5);
    await quotaError(a.putAsset({ ...png(20), size: 1 }, blob(1)));

    expect(await store.delete("full")).toBe(true);
    await a.putAsset({ ...png(20), size: 6 }, blob(6));
    await quotaError(b.putAsset({ ...png(21), size: 1 }, blob(1)));
  });

  it_("keeps the run state: null at first, replaced by updateRunState once it resolved", async () => {
    const store = await subject.open();
    const handle = await store.create(conversation("run"));
    expect(handle.runState).toBeNull();
    const state = runState(3);
    const writing = handle.updateRunState(state);
    state.autoConfirmRemaining = 99; // the store copied it
    expect(handle.runState).toBeNull();
    await writing;
    expect(handle.runState).toEqual(runState(3));
    await handle.updateRunState({ lastError: null, lastGeneration: null, autoConfirmRemaining: 0 });
    expect(handle.runState).toEqual({ lastError: null, lastGeneration: null, autoConfirmRemaining: 0 });
    // A record write keeps it.
    await handle.append(message(1));
    expect(handle.runState).toEqual({ lastError: null, lastGeneration: null, autoConfirmRemaining: 0 });
  });

  it_("keeps strings a JSON store must escape: NUL, quotes, backslashes, astral and lone surrogates", async () => {
    const store = await subject.open();
    const text = "nul \u0000 quote \" backslash \\ emoji \u{1F600} lone \uD800 end";
    const handle = await store.create({ ...conversation("odd"), title: text });
    await handle.append(message(0, text));
    await handle.append(toolCall(1, "pending", null, `call_${text}`));
    expect((await handle.readRecords())[0]).toEqual(message(0, text));
    expect((await handle.findToolCall(`call_${text}`))!.id).toBe("t1");
    expect((await store.list({ limit: 1 })).data[0].title).toBe(text);
  });

  itDurable("comes back after close and reopen: metadata, records, open round, seq reservation, run state, assets", async () => {
    let store = await subject.open();
    const handle = await store.create(conversation("c1"));
    await handle.append(userMessage(1));
    await handle.append(assistantMessage(2));
    for (const n of range(5, 3)) await handle.append(toolCall(n, "pending", null));
    await handle.replaceRecord(toolCall(4, "completed", "four"));
    await handle.update({ ...handle.conversation, title: "renamed", model: "m1" });
    await handle.reserveSeq(700);
    await handle.updateRunState(runState(2));
    await handle.putAsset(png(1), Uint8Array.from([7, 7, 7, 7]));
    await store.create(conversation("c2", "2026-03-01T00:00:00.000Z"));
    const before = await handle.readRecords();

    store = await subject.reopen!(store);
    expect(store.count()).toBe(2);
    expect(store.loadedCount()).toBe(0);
    const again = (await store.get("c1"))!;
    expect(store.loadedCount()).toBe(1);
    expect(again.conversation).toEqual({ ...handle.conversation });
    expect(again.conversation).toMatchObject({ title: "renamed", model: "m1", recordCount: 7, updatedAt: toolCall(7, "pending", null).timestamp });
    expect(await again.readRecords()).toEqual(before);
    expect(again.openToolCalls).toEqual([toolCall(3, "pending", null), toolCall(4, "completed", "four"), ...range(3, 5).map((n) => toolCall(n, "pending", null))]);
    expect(again.seqReserved).toBe(700);
    expect(again.runState).toEqual(runState(2));
    expect([...(await again.readAsset("a_1"))!.bytes]).toEqual([7, 7, 7, 7]);
    expect((await store.list({ limit: 10 })).data.map((c) => c.id)).toEqual(["c2", "c1"]);
    // And goes on: appends continue after the stored ones.
    await again.append(assistantMessage(8));
    expect(again.openToolCalls).toEqual([]);
    expect(ids(await again.readRecords(6))).toEqual(["t7", "m8"]);
  });

  itDurable("keeps a conversation's usage totals with its metadata: back after a reopen, in get and in list", async () => {
    const usage = {
      modelCalls: 3,
      promptTokens: 2300,
      cachedPromptTokens: 1400,
      completionTokens: 300,
      reasoningTokens: 50,
      totalTokens: 2600,
      cost: { amount: 0.0049, currency: "USD" },
      unpricedModelCalls: 1,
      contextTokens: 1400,
    };
    let store = await subject.open();
    const handle = await store.create(conversation("u1"));
    await handle.append(userMessage(1));
    await handle.update({ ...handle.conversation, usage });
    store = await subject.reopen!(store);
    expect((await store.get("u1"))!.conversation.usage).toEqual(usage);
    expect((await store.list({ limit: 10 })).data.find((c) => c.id === "u1")?.usage).toEqual(usage);
  });

  itDurable("counts the stored assets again after a reopen: the quota goes on where it was, and a deletion before it freed its share", async () => {
    const limits = { maxConversationAssetBytes: 10, maxTotalAssetBytes: 12 };
    let store = await subject.open(limits);
    await (await store.create(conversation("one"))).putAsset({ ...png(1), size: 8 }, blob(8));
    await (await store.create(conversation("two"))).putAsset({ ...png(1), size: 2 }, blob(2));
    await (await store.create(conversation("three"))).putAsset({ ...png(1), size: 2 }, blob(2));
    expect(await store.delete("three")).toBe(true);

    store = await subject.reopen!(store, limits);
    const one = (await store.get("one"))!;
    const two = (await store.get("two"))!;
    expect(await quotaError(one.putAsset({ ...png(2), size: 3 }, blob(3)))).toMatchObject({ limit: "maxConversationAssetBytes", actual: 11 });
    expect(await quotaError(two.putAsset({ ...png(2), size: 3 }, blob(3)))).toMatchObject({ limit: "maxTotalAssetBytes", actual: 13 });
    await two.putAsset({ ...png(2), size: 2 }, blob(2)); // 12 in all

    expect(await store.delete("one")).toBe(true);
    store = await subject.reopen!(store, limits);
    await (await store.get("two"))!.putAsset({ ...png(3), size: 6 }, blob(6)); // 10 in all
  });

  itDurable("deletes a conversation with its records and assets; its handle refuses further use", async () => {
    let store = await subject.open();
    const handle = await store.create(conversation("gone"));
    await handle.append(message(1));
    await handle.putAsset(png(1), Uint8Array.from([1, 2, 3, 4]));
    await store.create(conversation("kept"));
    expect(await store.delete("gone")).toBe(true);
    await expect(handle.append(message(2))).rejects.toThrow(/deleted/);
    await expect(handle.putAsset(png(2), Uint8Array.from([1]))).rejects.toThrow(/deleted/);
    expect(await store.get("gone")).toBeUndefined();
    expect(store.count()).toBe(1);
    // The id is free again, and starts empty.
    const reborn = await store.create(conversation("gone"));
    expect(reborn.recordCount).toBe(0);
    expect(await reborn.readRecords()).toEqual([]);
    expect(await reborn.assetInfo("a_1")).toBeUndefined();
    store = await subject.reopen!(store);
    expect((await store.get("gone"))!.recordCount).toBe(0);
  });

  itDurable("unload drops the handle; the next get reads the conversation again, with every write made before", async () => {
    const store = await subject.open();
    const handle = await store.create(conversation("c1"));
    const writes = range(20).map((n) => handle.append(message(n)));
    const unloading = store.unload("c1");
    await Promise.all(writes);
    await unloading;
    expect(store.loadedCount()).toBe(0);
    await expect(handle.append(message(99))).rejects.toThrow(/unloaded/);
    const again = (await store.get("c1"))!;
    expect(again).not.toBe(handle);
    expect(again.recordCount).toBe(20);
    expect(ids(await again.readRecords(18))).toEqual(["m18", "m19"]);
    await store.unload("nope");
  });

  itDurable("refuses a second create of the same id, also while the first is in flight", async () => {
    const store = await subject.open();
    const first = store.create(conversation("dup"));
    // One error class on every store, so conversation.create answers CONVERSATION_EXISTS whatever the store.
    await expect(store.create(conversation("dup"))).rejects.toBeInstanceOf(ConversationExistsError);
    await first;
    await expect(store.create(conversation("dup"))).rejects.toThrow(/already exists/);
    await expect(store.create(conversation("dup"))).rejects.toBeInstanceOf(ConversationExistsError);
    expect(store.count()).toBe(1);
  });

  itDurable("answers undefined or false for ids that could never be stored", async () => {
    const store = await subject.open();
    await store.create(conversation("c1"));
    for (const id of ["nope", "../c1", "..", "/etc", "", "a".repeat(129), "c1\u0000", "c 1"]) {
      expect(await store.get(id)).toBeUndefined();
      expect(await store.delete(id)).toBe(false);
    }
    await expect(store.create(conversation("../escape"))).rejects.toThrow(/invalid conversation id/);
    expect(store.count()).toBe(1);
  });

  it_("truncateRecords removes the records from a position on (across segments), the open round follows, appends go on after it", async () => {
    const store = await subject.open();
    const handle = await store.create(conversation("c_trunc"));
    const records = [userMessage(0), assistantMessage(1), toolCall(2, "completed", "two"), userMessage(3), assistantMessage(4), toolCall(5, "pending", null)];
    for (let i = 6; i < 11; i++) records.push(message(i));
    for (const record of records) await handle.append(record);
    expect(handle.recordCount).toBe(11);
    await handle.truncateRecords(3);
    expect(handle.recordCount).toBe(3);
    expect(handle.conversation.recordCount).toBe(3);
    expect(ids(await handle.readRecords())).toEqual(ids(records.slice(0, 3)));
    expect(handle.openToolCalls).toEqual([toolCall(2, "completed", "two")]);
    await handle.truncateRecords(10); // past the end: nothing
    expect(handle.recordCount).toBe(3);
    // Computed for 4 records, but there are 3 (an append got in, or was taken): refused, nothing removed.
    await expect(handle.truncateRecords(1, 4)).rejects.toBeInstanceOf(TruncateConflictError);
    expect(handle.recordCount).toBe(3);
    // The ids taken away may come back (unrewind appends them again).
    await handle.append(records[3]!);
    await handle.append(records[4]!);
    expect(handle.openToolCalls).toEqual([]);
    expect(ids(await handle.readRecords())).toEqual(ids(records.slice(0, 5)));
  });

  itDurable("truncation and documents survive a reopen; documents are removed with the conversation", async () => {
    let store = await subject.open();
    const handle = await store.create(conversation("c_docs"));
    for (const n of range(9)) await handle.append(message(n));
    await handle.truncateRecords(5);
    expect(await handle.readDocument("checkpoints")).toBeUndefined();
    await handle.writeDocument("checkpoints", { version: 1, entries: [{ path: "a.txt", before: "\u0000 old" }] });
    await handle.writeDocument("rewind", { n: 1 });
    await handle.writeDocument("rewind", undefined);
    store = await subject.reopen!(store);
    const again = (await store.get("c_docs"))!;
    expect(again.recordCount).toBe(5);
    expect(ids(await again.readRecords())).toEqual(ids(range(5).map((n) => message(n))));
    expect(await again.readDocument("checkpoints")).toEqual({ version: 1, entries: [{ path: "a.txt", before: "\u0000 old" }] });
    expect(await again.readDocument("rewind")).toBeUndefined();
    await again.append(message(20));
    expect(again.recordCount).toBe(6);
    expect(await store.delete("c_docs")).toBe(true);
    const recreated = await store.create(conversation("c_docs"));
    expect(await recreated.readDocument("checkpoints")).toBeUndefined();
  });
});
