/**
 * Records are paged: a handle keeps small state, records come from one
 * store-wide cache bounded in bytes, or from disk. Long conversations read
 * back exactly; the cache stays within its budget whatever is appended or
 * read; the open round (openToolCalls) stays right through appends,
 * replaces and reloads.
 */
import { readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ConversationRecord } from "../../protocol/index.js";
import { ConversationDamagedError, type ConversationHandle, type ConversationStore } from "../../src/store/conversation-store.js";
import { LowdbConversationStore, type LowdbStoreOptions } from "../../src/store/lowdb-store.js";
import { MemoryConversationStore } from "../../src/store/memory-store.js";
import { useStoreDir } from "../harness/store-dir.js";
import { assistantMessage, conversation, message, range, toolCall, userMessage } from "../harness/store-records.js";

const dir = useStoreDir("paging");
const openStore = (options?: LowdbStoreOptions) => dir.open(options);
const closeStore = (store: ConversationStore) => dir.close(store as LowdbConversationStore);

const ids = (records: readonly ConversationRecord[]) => records.map((r) => r.id);
const mIds = (ns: number[]) => ns.map((n) => `m${n}`);
const conversationDir = dir.conversation;

/** Appends in bursts, so thousands of records cost a few dozen writes. */
async function appendAll(handle: ConversationHandle, records: ConversationRecord[], burst = 100): Promise<void> {
  for (let i = 0; i < records.length; i += burst) await Promise.all(records.slice(i, i + burst).map((r) => handle.append(r)));
}

describe("a long conversation", () => {
  it("3000 records in 30 segments read back by range and whole, before and after reopening; a load caches only the last segment", async () => {
    const store = await openStore({ segmentSize: 100 });
    const handle = await store.create(conversation("long"));
    const records = range(3000).map((n) => message(n));
    await appendAll(handle, records);
    expect(handle.recordCount).toBe(3000);
    expect((await readdir(conversationDir("long"))).filter((f) => f.startsWith("records-"))).toHaveLength(30);
    const check = async (h: ConversationHandle) => {
      expect(ids(await h.readRecords(0, 10))).toEqual(mIds(range(10)));
      expect(ids(await h.readRecords(2990))).toEqual(mIds(range(10, 2990)));
      expect(ids(await h.readRecords(95, 105))).toEqual(mIds(range(10, 95)));
      expect(await h.readRecords()).toEqual(records);
    };
    await check(handle);
    await closeStore(store);

    const reopened = await openStore({ segmentSize: 100, cacheBytes: 64 << 10 });
    const again = (await reopened.get("long"))!;
    const lastSegment = await stat(join(conversationDir("long"), "records-000029.json"));
    expect(reopened.cachedBytes()).toBe(lastSegment.size);
    await check(again);
    expect(reopened.cachedBytes()).toBeLessThanOrEqual(64 << 10);
    expect(again.openToolCalls).toEqual([]);
    await again.append(message(3000));
    expect(ids(await again.readRecords(2999))).toEqual(["m2999", "m3000"]);
  });
});

describe("the default layout", () => {
  it("closes a segment before 128 KiB of JSON, so an append rewrites at most that much; before 1000 records when they are small", async () => {
    const store = await openStore();
    const big = await store.create(conversation("big"));
    // ~1 KB records: the byte bound closes each segment.
    await appendAll(big, range(400).map((n) => ({ ...message(n), content: `${n} `.padEnd(1000, "x") })));
    const files = (await readdir(conversationDir("big"))).filter((f) => f.startsWith("records-"));
    expect(files.length).toBeGreaterThanOrEqual(4);
    // The bound is on the records' JSON (the file adds lowdb's indentation).
    for (const file of files) expect(JSON.stringify(JSON.parse(await readFile(join(conversationDir("big"), file), "utf8"))).length).toBeLessThanOrEqual(128 * 1024);
    const small = await store.create(conversation("small"));
    // Tiny records: the count bound closes it.
    await appendAll(small, range(1001).map((n) => message(n)));
    expect((await readdir(conversationDir("small"))).filter((f) => f.startsWith("records-")).sort()).toEqual(["records-000000.json", "records-000001.json"]);
    await closeStore(store);
  });
});

describe("loading a long conversation", () => {
  /** 40 records in 20 segments of 2: messages m0…m29, the assistant message m30 (segment 15), then the open round t31…t39. */
  async function seedLong(): Promise<void> {
    const store = await openStore({ segmentSize: 2 });
    const handle = await store.create(conversation("long"));
    await appendAll(handle, [...range(30).map((n) => message(n)), assistantMessage(30), ...range(9, 31).map((n) => toolCall(n, "pending", null))]);
    await closeStore(store);
  }
  const segmentFile = (n: number) => join(conversationDir("long"), `records-${String(n).padStart(6, "0")}.json`);
  const round = range(9, 31).map((n) => toolCall(n, "pending", null));

  it("reads only the last segments, back to the last assistant message; older ones are checked when read", async () => {
    await seedLong();
    // Segments 3 and 14 (m28, m29: just before the round) are garbage: the load must not need them.
    await writeFile(segmentFile(3), "garbage");
    await writeFile(segmentFile(14), "garbage");
    const store = await openStore({ segmentSize: 2, fullCheckSegments: 4 });
    const handle = (await store.get("long"))!;
    expect(handle.recordCount).toBe(40);
    expect(handle.openToolCalls).toEqual(round);
    expect(ids(await handle.readRecords(30))).toEqual(["m30", ...round.map((r) => r.id)]);
    expect(ids(await handle.readRecords(0, 6))).toEqual(mIds(range(6)));
    expect(store.damaged()).toEqual([]);

    const error = await handle.readRecords(26, 30).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConversationDamagedError);
    expect((error as ConversationDamagedError).problem).toMatch(/^records-000014\.json is not valid JSON/);
    expect(store.damaged()).toEqual([{ id: "long", problem: (error as ConversationDamagedError).problem }]);
    // The open round and appends do not need the damaged segments.
    await handle.replaceRecord(toolCall(31, "completed", "done"));
    await handle.append(assistantMessage(41));
    expect(handle.openToolCalls).toEqual([]);
  });

  it("is read whole (and found damaged) when short enough, or when meta.json lacks segment counts (earlier files)", async () => {
    await seedLong();
    await writeFile(segmentFile(3), "garbage");
    const whole = await openStore({ segmentSize: 2, fullCheckSegments: 20 });
    await expect(whole.get("long")).rejects.toBeInstanceOf(ConversationDamagedError);
    await closeStore(whole);

    const metaFile = join(conversationDir("long"), "meta.json");
    const { segments: _dropped, ...earlier } = JSON.parse(await readFile(metaFile, "utf8"));
    await writeFile(metaFile, JSON.stringify(earlier));
    const store = await openStore({ segmentSize: 2, fullCheckSegments: 4 });
    await expect(store.get("long")).rejects.toThrow(/records-000003\.json is not valid JSON/);
  });

  it("a segment shorter than meta.json counts is damaged when read", async () => {
    await seedLong();
    await writeFile(segmentFile(5), JSON.stringify({ records: [message(10)] }));
    const store = await openStore({ segmentSize: 2, fullCheckSegments: 4 });
    const handle = (await store.get("long"))!;
    await expect(handle.readRecords()).rejects.toThrow(/records-000005\.json holds 1 records, 2 were stored in it/);
  });
});

describe("the segment cache", () => {
  const budget = 64 << 10;
  const big = (n: number) => message(n, `${n}:`.padEnd(10_000, "x"));

  it("stays within cacheBytes through 200 appends of 10 KB records, and a reopened store reads them all back", async () => {
    const store = await openStore({ cacheBytes: budget, segmentBytes: 32 << 10 });
    const handle = await store.create(conversation("c1"));
    let most = 0;
    for (const n of range(200)) {
      await handle.append(big(n));
      most = Math.max(most, store.cachedBytes());
    }
    expect(most).toBeLessThanOrEqual(budget);
    expect(most).toBeGreaterThan(budget / 2);
    // 3 records of ~10 KB per 32 KiB segment.
    expect((await readdir(conversationDir("c1"))).filter((f) => f.startsWith("records-"))).toHaveLength(67);
    expect(await handle.readRecords()).toEqual(range(200).map(big));
    expect(store.cachedBytes()).toBeLessThanOrEqual(budget);
    await closeStore(store);

    const reopened = await openStore({ cacheBytes: budget, segmentBytes: 32 << 10 });
    const again = (await reopened.get("c1"))!;
    expect(again.recordCount).toBe(200);
    expect(await again.readRecords()).toEqual(range(200).map(big));
    expect(reopened.cachedBytes()).toBeLessThanOrEqual(budget);
  });

  it("is one budget for all loaded conversations", async () => {
    const store = await openStore({ cacheBytes: budget, segmentBytes: 32 << 10 });
    const handles = await Promise.all(range(8).map((n) => store.create(conversation(`c${n}`))));
    for (const n of range(6)) await Promise.all(handles.map((h, i) => h.append(big(i * 100 + n))));
    expect(store.cachedBytes()).toBeLessThanOrEqual(budget);
    for (const [i, h] of handles.entries()) expect(await h.readRecords()).toEqual(range(6, i * 100).map(big));
    expect(store.cachedBytes()).toBeLessThanOrEqual(budget);
  });

  it("serves a record larger than the whole budget: appended, read, replaced, found, reloaded — never cached", async () => {
    // One segment holds all three records (their segment is what is too large to cache).
    const store = await openStore({ cacheBytes: budget, segmentBytes: 1 << 20 });
    const handle = await store.create(conversation("c1"));
    const huge = toolCall(2, "completed", "y".repeat(200_000));
    await handle.append(assistantMessage(1));
    await handle.append(huge);
    await handle.append(userMessage(3));
    expect(store.cachedBytes()).toBe(0);
    expect(await handle.readRecords(1, 2)).toEqual([huge]);
    const replaced = { ...huge, result: "z".repeat(150_000) };
    await handle.replaceRecord(replaced);
    expect(await handle.findToolCall("call_2")).toEqual(replaced);
    expect(handle.openToolCalls).toEqual([replaced]);
    expect(store.cachedBytes()).toBe(0);
    await closeStore(store);

    const reopened = await openStore({ cacheBytes: budget, segmentBytes: 1 << 20 });
    const again = (await reopened.get("c1"))!;
    expect(await again.readRecords()).toEqual([assistantMessage(1), replaced, userMessage(3)]);
    expect(again.openToolCalls).toEqual([replaced]);
    expect(reopened.cachedBytes()).toBe(0);
  });
});

describe.each([
  ["LowdbConversationStore", () => openStore({ segmentSize: 2 })],
  ["MemoryConversationStore", async (): Promise<ConversationStore> => new MemoryConversationStore()],
] as const)("%s: openToolCalls", (name, makeStore) => {
  it("follows appends and replaces, across segments; a replace that moves the last assistant message moves the round", async () => {
    const store = await makeStore();
    const handle = await store.create(conversation("c1"));
    await handle.append(userMessage(0));
    await handle.append(toolCall(1, "completed", "before any assistant message"));
    expect(handle.openToolCalls).toEqual([toolCall(1, "completed", "before any assistant message")]);
    await handle.append(assistantMessage(2));
    expect(handle.openToolCalls).toEqual([]);
    await handle.append(toolCall(3, "pending", null));
    await handle.append(toolCall(4, "pending", null));
    await handle.append(userMessage(5));
    await handle.append(toolCall(6, "pending", null));
    const round = [toolCall(3, "pending", null), toolCall(4, "pending", null), toolCall(6, "pending", null)];
    expect(handle.openToolCalls).toEqual(round);

    await Promise.all([handle.replaceRecord(toolCall(4, "executing", null)), handle.replaceRecord(toolCall(3, "completed", "three"))]);
    const updated = [toolCall(3, "completed", "three"), toolCall(4, "executing", null), toolCall(6, "pending", null)];
    expect(handle.openToolCalls).toEqual(updated);
    // A record outside the round changes nothing in it.
    await handle.replaceRecord(toolCall(1, "failed", "edited"));
    expect(handle.openToolCalls).toEqual(updated);

    if (name === "LowdbConversationStore") {
      const lowdb = store as LowdbConversationStore;
      await closeStore(lowdb);
      const reopened = await openStore({ segmentSize: 2 });
      const again = (await reopened.get("c1"))!;
      expect(again.openToolCalls).toEqual(updated);
      // Replacing a round member after a reload needs no search (the round knows its segment).
      await again.replaceRecord(toolCall(6, "skipped", "declined"));
      expect(again.openToolCalls).toEqual([...updated.slice(0, 2), toolCall(6, "skipped", "declined")]);
      await assistantTurnsBack(again);
      return;
    }
    await handle.replaceRecord(toolCall(6, "skipped", "declined"));
    await assistantTurnsBack(handle);
  });
});

/** The last assistant message becomes a user message: the round reaches back to the one before (m2 → none: all calls). */
async function assistantTurnsBack(handle: ConversationHandle): Promise<void> {
  await handle.append(assistantMessage(7));
  await handle.append(toolCall(8, "pending", null));
  expect(handle.openToolCalls).toEqual([toolCall(8, "pending", null)]);
  await handle.replaceRecord(userMessage(7, "no longer the model's"));
  expect(handle.openToolCalls).toEqual([
    toolCall(3, "completed", "three"),
    toolCall(4, "executing", null),
    toolCall(6, "skipped", "declined"),
    toolCall(8, "pending", null),
  ]);
  await handle.replaceRecord(userMessage(2, "neither is this"));
  expect(handle.openToolCalls.map((c) => c.id)).toEqual(["t1", "t3", "t4", "t6", "t8"]);
  await handle.replaceRecord(assistantMessage(5, "now this one is"));
  expect(handle.openToolCalls.map((c) => c.id)).toEqual(["t6", "t8"]);
  expect(ids(await handle.readRecords())).toEqual(["m0", "t1", "m2", "t3", "t4", "m5", "t6", "m7", "t8"]);
}
