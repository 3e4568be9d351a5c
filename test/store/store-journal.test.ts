/**
 * The lowdb store's journal (src/store/lowdb-journal.ts): appends and
 * replaces of the last segment's records, and metadata changes, are lines
 * appended to replaced.jsonl instead of rewritten segment and meta files.
 * What is on disk at any moment — copied while the store still runs, which
 * is what a crash leaves — loads as the state the store acknowledged: the
 * journal's lines over the segment, a half-written last line cut off,
 * nothing older winning over something newer.
 */
import { appendFile, cp, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ToolCallRecord } from "../../protocol/index.js";
import { ConversationDamagedError } from "../../src/store/conversation-store.js";
import { ConversationJournal } from "../../src/store/lowdb-journal.js";
import { LowdbConversationStore, type LowdbStoreOptions } from "../../src/store/lowdb-store.js";
import { useStoreDir } from "../harness/store-dir.js";
import { assistantMessage, conversation, toolCall, userMessage } from "../harness/store-records.js";

const storeDir = useStoreDir("journal");
const copies: string[] = [];

afterEach(async () => {
  vi.restoreAllMocks();
  for (const dir of copies.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** A copy of the data dir as a crash would leave it now (the running store's LOCK and advert left out). */
async function copyOfDataDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "agentwire-journal-copy-"));
  copies.push(dir);
  await cp(storeDir.path, dir, { recursive: true, filter: (source) => !source.endsWith("/LOCK") && !source.endsWith("/SERVER") });
  return dir;
}

/** That copy, opened by a new store. */
async function crashCopy(options?: LowdbStoreOptions): Promise<{ store: LowdbConversationStore; dir: string }> {
  const dir = await copyOfDataDir();
  return { store: await openAt(dir, options), dir };
}

const opened: LowdbConversationStore[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close().catch(() => undefined);
});

async function openAt(dir: string, options?: LowdbStoreOptions): Promise<LowdbConversationStore> {
  const store = new LowdbConversationStore(dir, options);
  await store.open();
  opened.push(store);
  return store;
}

const journalPath = (dataDir: string) => join(dataDir, "conversations", "c1", "replaced.jsonl");
const segmentPath = (dataDir: string, n = 0) => join(dataDir, "conversations", "c1", `records-${String(n).padStart(6, "0")}.json`);

async function segmentRecords(dataDir: string, n = 0): Promise<ToolCallRecord[]> {
  return (JSON.parse(await readFile(segmentPath(dataDir, n), "utf8")) as { records: ToolCallRecord[] }).records;
}

async function journalLines(dataDir: string): Promise<string[]> {
  const text = await readFile(journalPath(dataDir), "utf8").catch(() => "");
  return text.split("\n").filter((line) => line !== "");
}

/** A conversation whose last segment holds a pending tool call (an open round). */
async function withPendingCall(options?: LowdbStoreOptions) {
  const store = await storeDir.open(options);
  const handle = await store.create(conversation("c1"));
  await handle.append(userMessage(1));
  await handle.append(assistantMessage(2));
  await handle.append(toolCall(3, "pending", null));
  return { store, handle };
}

function statusOf(records: readonly { id: string; type: string }[], id = "t3"): string | undefined {
  return (records.find((r) => r.id === id) as ToolCallRecord | undefined)?.status;
}

describe("appends and replaces of the last segment", () => {
  it("are appended to the journal, the segment untouched, and a crash copy loads them", async () => {
    const { handle } = await withPendingCall();
    await handle.replaceRecord(toolCall(3, "executing", null));
    await handle.replaceRecord(toolCall(3, "completed", "done"));

    // The first record started the segment (written whole); the two appends after it and the two replaces are lines.
    expect((await segmentRecords(storeDir.path)).map((r) => r.id)).toEqual(["m1"]);
    expect(await journalLines(storeDir.path)).toHaveLength(4);
    expect(statusOf(await handle.readRecords())).toBe("completed");

    const { store } = await crashCopy();
    const again = (await store.get("c1"))!;
    expect(statusOf(await again.readRecords())).toBe("completed");
    expect(again.openToolCalls.map((r) => r.status)).toEqual(["completed"]);
    expect(again.recordCount).toBe(3);
  });

  it("are read over the segment file when the segment has left the cache", async () => {
    // A cache too small to keep any segment: every read goes to the file.
    const { handle } = await withPendingCall({ cacheBytes: 1, journalBudgetBytes: 1 << 20 });
    await handle.replaceRecord(toolCall(3, "completed", "done"));
    expect(statusOf(await segmentRecords(storeDir.path))).toBeUndefined();
    expect((await handle.readRecords()).map((r) => r.id)).toEqual(["m1", "m2", "t3"]);
    expect(statusOf(await handle.readRecords())).toBe("completed");
    expect((await handle.findToolCall("call_3"))?.status).toBe("completed");
  });

  it("past the segment bound, write the segment whole instead: the journal never holds more than a segment rewrite costs", async () => {
    const { handle } = await withPendingCall({ segmentBytes: 8 * 1024 });
    await handle.replaceRecord(toolCall(3, "executing", null));
    expect(await journalLines(storeDir.path)).toHaveLength(3);
    // A result larger than the bound: the segment is written whole and the journal emptied.
    await handle.replaceRecord(toolCall(3, "completed", "x".repeat(10 * 1024)));
    expect(statusOf(await segmentRecords(storeDir.path))).toBe("completed");
    expect(await journalLines(storeDir.path)).toEqual([]);
    const { store } = await crashCopy();
    expect(statusOf(await (await store.get("c1"))!.readRecords())).toBe("completed");
  });

  it("and the metadata after them are one line per write; a crash copy loads the records in order and the newest metadata", async () => {
    const { handle } = await withPendingCall();
    const before = (await journalLines(storeDir.path)).length;
    // A turn's end: the reply's record, its usage totals and run state, asked for in one event-loop turn.
    handle.gather!();
    const writes = [
      handle.replaceRecord(toolCall(3, "completed", "done")),
      handle.append(assistantMessage(4)),
      handle.update({ ...handle.conversation, title: "after the turn" }),
      handle.reserveSeq(40),
    ];
    await Promise.all(writes);
    const lines = (await journalLines(storeDir.path)).slice(before).map((line) => JSON.parse(line));
    expect(lines).toHaveLength(1);
    expect(lines[0].records.map((r: { id: string }) => r.id)).toEqual(["t3", "m4"]);
    expect(lines[0].meta).toMatchObject({ conversation: { title: "after the turn", recordCount: 4 }, seqReserved: 40, segments: [4] });
    expect((await segmentRecords(storeDir.path)).map((r) => r.id)).toEqual(["m1"]);

    const { store } = await crashCopy();
    const again = (await store.get("c1"))!;
    expect((await again.readRecords()).map((r) => r.id)).toEqual(["m1", "m2", "t3", "m4"]);
    expect(statusOf(await again.readRecords())).toBe("completed");
    expect(again.openToolCalls).toEqual([]);
    expect(again.conversation).toMatchObject({ title: "after the turn", recordCount: 4 });
    expect(again.seqReserved).toBe(40);
  });

  it("written whole with the segment are journaled first: a crash before the journal is emptied loads the newest value", async () => {
    const { handle } = await withPendingCall();
    await handle.replaceRecord(toolCall(3, "executing", null));
    // The crash comes after the segment and meta.json writes, before the journal is emptied.
    vi.spyOn(ConversationJournal.prototype, "clear").mockRejectedValue(new Error("crashed before this"));
    // The journal has no room for the next group: the segment is written whole.
    vi.spyOn(ConversationJournal.prototype, "hasRoom").mockReturnValue(false);
    await Promise.all([handle.replaceRecord(toolCall(3, "completed", "done")), handle.append(userMessage(4))]);
    expect(statusOf(await segmentRecords(storeDir.path))).toBe("completed");
    await handle.update({ ...handle.conversation, title: "in meta.json" });

    const { store } = await crashCopy();
    const again = (await store.get("c1"))!;
    expect(statusOf(await again.readRecords())).toBe("completed");
    expect(again.recordCount).toBe(4);
    // meta.json, written after the journal's last metadata line, is the newer (its revision is higher).
    expect(again.conversation.title).toBe("in meta.json");
  });

  it("are written into their segment before a new segment starts", async () => {
    const { handle } = await withPendingCall({ segmentSize: 3 });
    await handle.replaceRecord(toolCall(3, "completed", "done"));
    await handle.append(assistantMessage(4)); // the first segment is full: a new one
    expect(statusOf(await segmentRecords(storeDir.path, 0))).toBe("completed");
    expect(await journalLines(storeDir.path)).toEqual([]);
    await handle.append(toolCall(5, "pending", null, "call_5"));
    await handle.replaceRecord(toolCall(5, "completed", "five", "call_5"));
    expect((await journalLines(storeDir.path)).map((line) => JSON.parse(line).segment)).toEqual([1, 1]);

    const { store } = await crashCopy({ segmentSize: 3 });
    const records = await (await store.get("c1"))!.readRecords();
    expect(records.map((r) => [r.id, statusOf(records, r.id) ?? r.type])).toEqual([
      ["m1", "message"],
      ["m2", "message"],
      ["t3", "completed"],
      ["m4", "message"],
      ["t5", "completed"],
    ]);
  });

  it("are written into the segment before a rewind takes records back", async () => {
    const { handle } = await withPendingCall();
    await handle.append(toolCall(4, "pending", null, "call_4"));
    await handle.replaceRecord(toolCall(3, "completed", "done"));
    await handle.replaceRecord(toolCall(4, "completed", "four", "call_4"));
    await handle.truncateRecords(3);
    expect(await journalLines(storeDir.path)).toEqual([]);
    const { store } = await crashCopy();
    const records = await (await store.get("c1"))!.readRecords();
    expect(records.map((r) => r.id)).toEqual(["m1", "m2", "t3"]);
    expect(statusOf(records)).toBe("completed");
  });

  it("are written into the segment when the store closes", async () => {
    const { store, handle } = await withPendingCall();
    await handle.replaceRecord(toolCall(3, "completed", "done"));
    await storeDir.close(store);
    expect(statusOf(await segmentRecords(storeDir.path))).toBe("completed");
    expect(await journalLines(storeDir.path)).toEqual([]);
  });
});

describe("prepareReplaces", () => {
  it("opens the journal's file ahead; the replace lands in it, and a clean close leaves no file when none came", async () => {
    const { store, handle } = await withPendingCall();
    handle.prepareReplaces!();
    await expect.poll(() => stat(journalPath(storeDir.path)).then(() => true, () => false)).toBe(true);
    await handle.replaceRecord(toolCall(3, "executing", null));
    expect(await journalLines(storeDir.path)).toHaveLength(3);
    const { store: copy } = await crashCopy();
    expect(statusOf(await (await copy.get("c1"))!.readRecords())).toBe("executing");

    const other = await store.create(conversation("c2"));
    await other.append(toolCall(1, "pending", null));
    other.prepareReplaces!();
    const otherJournal = join(storeDir.conversation("c2"), "replaced.jsonl");
    await expect.poll(() => stat(otherJournal).then(() => true, () => false)).toBe(true);
    await storeDir.close(store);
    await expect(stat(otherJournal)).rejects.toMatchObject({ code: "ENOENT" });
    await expect(stat(journalPath(storeDir.path))).rejects.toMatchObject({ code: "ENOENT" });
  });
});

describe("a journal a crash left", () => {
  it("loses a half-written last line only, and the next replace lands after the whole lines", async () => {
    const { handle } = await withPendingCall();
    await handle.append(toolCall(4, "pending", null, "call_4"));
    await handle.replaceRecord(toolCall(3, "completed", "done"));
    const torn = await copyOfDataDir();
    const whole = await readFile(journalPath(torn), "utf8");
    await appendFile(journalPath(torn), JSON.stringify({ segment: 0, record: toolCall(4, "completed", "four", "call_4") }).slice(0, 40));

    const store = await openAt(torn);
    const again = (await store.get("c1"))!;
    const records = await again.readRecords();
    expect(statusOf(records, "t3")).toBe("completed");
    expect(statusOf(records, "t4")).toBe("pending");
    expect(await readFile(journalPath(torn), "utf8")).toBe(whole);

    await again.replaceRecord(toolCall(4, "failed", "four", "call_4"));
    await store.close();
    opened.splice(opened.indexOf(store), 1);
    const reopened = await openAt(torn);
    const last = await (await reopened.get("c1"))!.readRecords();
    expect([statusOf(last, "t3"), statusOf(last, "t4")]).toEqual(["completed", "failed"]);
  });

  it("with a damaged line before its last is a damaged conversation", async () => {
    const { handle } = await withPendingCall();
    await handle.replaceRecord(toolCall(3, "executing", null));
    await handle.replaceRecord(toolCall(3, "completed", "done"));
    const dir = await copyOfDataDir();
    const lines = (await readFile(journalPath(dir), "utf8")).split("\n");
    lines[0] = "{not json";
    await writeFile(journalPath(dir), lines.join("\n"));
    const store = await openAt(dir);
    await expect(store.get("c1")).rejects.toBeInstanceOf(ConversationDamagedError);
  });

  it("that is empty (the crash came right after its file was created) changes nothing", async () => {
    const { store } = await withPendingCall();
    // A clean close empties the journal into the files: none is left.
    await storeDir.close(store);
    await expect(stat(journalPath(storeDir.path))).rejects.toMatchObject({ code: "ENOENT" });
    const dir = await copyOfDataDir();
    await writeFile(journalPath(dir), "");
    const again = (await (await openAt(dir)).get("c1"))!;
    expect(statusOf(await again.readRecords())).toBe("pending");
    await again.replaceRecord(toolCall(3, "completed", "done"));
    expect(await journalLines(dir)).toHaveLength(1);
  });
});

describe("metadata in the journal", () => {
  it("a conversation not loaded is listed with the journal's metadata a crash left, not meta.json's older one", async () => {
    const { handle } = await withPendingCall();
    await handle.update({ ...handle.conversation, title: "journaled title" });
    const meta = JSON.parse(await readFile(join(storeDir.conversation("c1"), "meta.json"), "utf8"));
    expect(meta.conversation.title).not.toBe("journaled title");
    const { store } = await crashCopy();
    expect((await store.list({ limit: 10 })).data.map((c) => [c.id, c.title, c.recordCount])).toEqual([["c1", "journaled title", 3]]);
  });

  it("a half-written last line loses that write whole (its records and its metadata), and what came before stays", async () => {
    const { handle } = await withPendingCall();
    await handle.update({ ...handle.conversation, title: "kept" });
    const torn = await copyOfDataDir();
    const line = ConversationJournal.line(0, [assistantMessage(4)], {
      version: 1,
      conversation: { ...handle.conversation, title: "lost", recordCount: 4 },
      seqReserved: 99,
      segments: [4],
      revision: 1000,
    });
    await appendFile(journalPath(torn), line.slice(0, line.length - 20));
    const store = await openAt(torn);
    const again = (await store.get("c1"))!;
    expect((await again.readRecords()).map((r) => r.id)).toEqual(["m1", "m2", "t3"]);
    expect(again.conversation).toMatchObject({ title: "kept", recordCount: 3 });
    expect(again.seqReserved).toBe(0);
    await again.append(userMessage(5));
    await store.close();
    opened.splice(opened.indexOf(store), 1);
    const reopened = (await (await openAt(torn)).get("c1"))!;
    expect((await reopened.readRecords()).map((r) => r.id)).toEqual(["m1", "m2", "t3", "m5"]);
  });

  it("a line of an earlier version naming no record of the segment is ignored; one of this version appends it", async () => {
    const { store } = await withPendingCall();
    await storeDir.close(store);
    const dir = await copyOfDataDir();
    await writeFile(
      journalPath(dir),
      `${JSON.stringify({ segment: 0, record: toolCall(7, "completed", "old format") })}\n` + ConversationJournal.line(0, [userMessage(8)], null),
    );
    const again = (await (await openAt(dir)).get("c1"))!;
    expect((await again.readRecords()).map((r) => r.id)).toEqual(["m1", "m2", "t3", "m8"]);
    expect(again.recordCount).toBe(4);
  });

  it("a line whose metadata does not fit is damage", async () => {
    const { store } = await withPendingCall();
    await storeDir.close(store);
    const dir = await copyOfDataDir();
    await writeFile(journalPath(dir), `${JSON.stringify({ segment: 0, records: [], meta: { version: 1, seqReserved: 1 } })}\n`);
    await expect((await openAt(dir)).get("c1")).rejects.toThrow(/replaced\.jsonl is damaged: line 1 has metadata that does not fit/);
  });

  it("with journalBytes 0 there is no journal: every write rewrites the segment and meta.json", async () => {
    const { handle } = await withPendingCall({ journalBytes: 0 });
    await handle.replaceRecord(toolCall(3, "completed", "done"));
    await handle.update({ ...handle.conversation, title: "whole" });
    await expect(stat(journalPath(storeDir.path))).rejects.toMatchObject({ code: "ENOENT" });
    expect(statusOf(await segmentRecords(storeDir.path))).toBe("completed");
    expect(JSON.parse(await readFile(join(storeDir.conversation("c1"), "meta.json"), "utf8")).conversation.title).toBe("whole");
  });
});

describe("the journals' memory", () => {
  it("is bounded across conversations: past journalBudgetBytes a write rewrites its files, and a deleted conversation gives its share back", async () => {
    const store = await storeDir.open({ journalBudgetBytes: 2500 });
    const journalBytes = async (id: string) => (await readFile(join(storeDir.conversation(id), "replaced.jsonl")).catch(() => Buffer.alloc(0))).length;
    const first = await store.create(conversation("c1"));
    await first.append(userMessage(1));
    // Lines of about 1 KB each (the record and the metadata after it): two fit, the third goes to the files whole.
    await first.append(userMessage(2, "x".repeat(400)));
    await first.append(userMessage(3, "x".repeat(400)));
    const held = await journalBytes("c1");
    expect(held).toBeGreaterThan(1500);
    expect(held).toBeLessThanOrEqual(2500);
    await first.append(userMessage(4, "x".repeat(400)));
    expect(await journalBytes("c1")).toBe(0);
    expect((await segmentRecords(storeDir.path)).map((r) => r.id)).toEqual(["m1", "m2", "m3", "m4"]);
    await first.append(userMessage(5, "x".repeat(400)));
    await first.append(userMessage(6, "x".repeat(400)));
    expect(await journalBytes("c1")).toBeGreaterThan(1500);

    // The budget is the store's: another conversation's line does not fit while c1's journal holds it…
    const other = await store.create(conversation("c2"));
    await other.append(userMessage(1));
    await other.append(userMessage(2, "y".repeat(400)));
    expect(await journalBytes("c2")).toBe(0);
    // … and does once c1 is gone.
    await store.delete("c1");
    await other.append(userMessage(3, "y".repeat(400)));
    expect(await journalBytes("c2")).toBeGreaterThan(0);
    expect((await other.readRecords()).map((r) => r.id)).toEqual(["m1", "m2", "m3"]);
  });
});
