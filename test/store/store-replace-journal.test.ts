/**
 * The lowdb store's replace journal (src/store/lowdb-replace-journal.ts):
 * replaces of the last segment are appended to replaced.jsonl instead of
 * rewriting the segment. What is on disk at any moment — copied while the
 * store still runs, which is what a crash leaves — loads as the state the
 * store acknowledged: the journal's lines over the segment, a half-written
 * last line cut off, nothing older winning over something newer.
 */
import { appendFile, cp, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ToolCallRecord } from "../../protocol/index.js";
import { ConversationDamagedError } from "../../src/store/conversation-store.js";
import { ReplaceJournal } from "../../src/store/lowdb-replace-journal.js";
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

describe("replaces of the last segment", () => {
  it("are appended to the journal, the segment untouched, and a crash copy loads them", async () => {
    const { handle } = await withPendingCall();
    await handle.replaceRecord(toolCall(3, "executing", null));
    await handle.replaceRecord(toolCall(3, "completed", "done"));

    expect(statusOf(await segmentRecords(storeDir.path))).toBe("pending");
    expect(await journalLines(storeDir.path)).toHaveLength(2);
    expect(statusOf(await handle.readRecords())).toBe("completed");

    const { store } = await crashCopy();
    const again = (await store.get("c1"))!;
    expect(statusOf(await again.readRecords())).toBe("completed");
    expect(again.openToolCalls.map((r) => r.status)).toEqual(["completed"]);
    expect(again.recordCount).toBe(3);
  });

  it("are read over the segment file when the segment has left the cache", async () => {
    // A cache too small to keep any segment: every read goes to the file.
    const { handle } = await withPendingCall({ cacheBytes: 1 });
    await handle.replaceRecord(toolCall(3, "completed", "done"));
    expect(statusOf(await segmentRecords(storeDir.path))).toBe("pending");
    expect(statusOf(await handle.readRecords())).toBe("completed");
    expect((await handle.findToolCall("call_3"))?.status).toBe("completed");
  });

  it("past the segment bound, write the segment whole instead: the journal never holds more than a segment rewrite costs", async () => {
    const { handle } = await withPendingCall({ segmentBytes: 8 * 1024 });
    await handle.replaceRecord(toolCall(3, "executing", null));
    expect(await journalLines(storeDir.path)).toHaveLength(1);
    // A result larger than the bound: the segment is written whole and the journal emptied.
    await handle.replaceRecord(toolCall(3, "completed", "x".repeat(10 * 1024)));
    expect(statusOf(await segmentRecords(storeDir.path))).toBe("completed");
    expect(await journalLines(storeDir.path)).toEqual([]);
    const { store } = await crashCopy();
    expect(statusOf(await (await store.get("c1"))!.readRecords())).toBe("completed");
  });

  it("go into the segment with the next append, and the journal is emptied", async () => {
    const { handle } = await withPendingCall();
    await handle.replaceRecord(toolCall(3, "completed", "done"));
    await handle.append(assistantMessage(4));
    expect(statusOf(await segmentRecords(storeDir.path))).toBe("completed");
    await expect(stat(journalPath(storeDir.path))).rejects.toMatchObject({ code: "ENOENT" });
    const { store } = await crashCopy();
    expect((await (await store.get("c1"))!.readRecords()).map((r) => r.id)).toEqual(["m1", "m2", "t3", "m4"]);
  });

  it("written whole with the segment are journaled first: a crash before the journal is emptied loads the newest value", async () => {
    const { handle } = await withPendingCall();
    await handle.replaceRecord(toolCall(3, "executing", null));
    // The crash comes after the segment write, before the journal is emptied.
    vi.spyOn(ReplaceJournal.prototype, "clear").mockRejectedValue(new Error("crashed before this"));
    // One group: a replace of the journaled call and an append, so the segment is written whole.
    await Promise.all([handle.replaceRecord(toolCall(3, "completed", "done")), handle.append(userMessage(4))]);
    expect(statusOf(await segmentRecords(storeDir.path))).toBe("completed");

    const { store } = await crashCopy();
    const again = (await store.get("c1"))!;
    expect(statusOf(await again.readRecords())).toBe("completed");
    expect(again.recordCount).toBe(4);
  });

  it("are written into their segment before a new segment starts", async () => {
    const { handle } = await withPendingCall({ segmentSize: 3 });
    await handle.replaceRecord(toolCall(3, "completed", "done"));
    await handle.append(assistantMessage(4)); // the first segment is full: a new one
    expect(statusOf(await segmentRecords(storeDir.path, 0))).toBe("completed");
    expect(await journalLines(storeDir.path)).toEqual([]);
    await handle.append(toolCall(5, "pending", null, "call_5"));
    await handle.replaceRecord(toolCall(5, "completed", "five", "call_5"));
    expect((await journalLines(storeDir.path)).map((line) => JSON.parse(line).segment)).toEqual([1]);

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
    expect(await journalLines(storeDir.path)).toHaveLength(1);
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
    await withPendingCall();
    // No file before the round's first replace, none after the journal is emptied.
    await expect(stat(journalPath(storeDir.path))).rejects.toMatchObject({ code: "ENOENT" });
    const dir = await copyOfDataDir();
    await writeFile(journalPath(dir), "");
    const again = (await (await openAt(dir)).get("c1"))!;
    expect(statusOf(await again.readRecords())).toBe("pending");
    await again.replaceRecord(toolCall(3, "completed", "done"));
    expect(await journalLines(dir)).toHaveLength(1);
  });
});
