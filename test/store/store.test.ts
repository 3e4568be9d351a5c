import { spawn, type ChildProcess } from "node:child_process";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { once } from "node:events";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ConversationRecord } from "../../protocol/index.js";
import { DataDirLockedError, type ConversationStore } from "../../src/store/conversation-store.js";
import { DataDirLock } from "../../src/store/data-dir-lock.js";
import { LowdbFile } from "../../src/store/lowdb-file.js";
import { LowdbConversationStore, type LowdbStoreOptions } from "../../src/store/lowdb-store.js";
import { useStoreDir } from "../harness/store-dir.js";
import { conversation, message, range, toolCall } from "../harness/store-records.js";

const dir = useStoreDir("store");
const openStore = (options?: LowdbStoreOptions) => dir.open(options);
const closeStore = (store: ConversationStore) => dir.close(store as LowdbConversationStore);
const conversationDir = dir.conversation;
const ids = (records: readonly ConversationRecord[]) => records.map((r) => r.id);

/** lowdb-specific behaviour; the contract every store keeps is in store-contract.test.ts. */
describe("LowdbConversationStore", () => {
  it("creates, appends, updates and reads back after close and reopen", async () => {
    const store = await openStore();
    const handle = await store.create(conversation("c1"));
    await handle.append(message(1));
    await handle.append(toolCall(2, "pending", null));
    await handle.update({ ...conversation("c1"), title: "renamed", recordCount: 999, updatedAt: "2026-02-01T00:00:00.000Z" });
    await handle.reserveSeq(500);
    await handle.reserveSeq(100);
    expect(await store.get("c1")).toBe(handle);
    expect(store.count()).toBe(1);
    await closeStore(store);

    const reopened = await openStore();
    expect(reopened.count()).toBe(1);
    expect(reopened.loadedCount()).toBe(0);
    const again = (await reopened.get("c1"))!;
    expect(await again.readRecords()).toEqual([message(1), toolCall(2, "pending", null)]);
    expect(again.recordCount).toBe(2);
    expect(again.openToolCalls).toEqual([toolCall(2, "pending", null)]);
    expect(again.conversation).toMatchObject({ id: "c1", title: "renamed", recordCount: 2 });
    expect(again.seqReserved).toBe(500);
    expect(reopened.loadedCount()).toBe(1);
  });

  it("answers undefined for unknown ids and for ids that could name a path", async () => {
    const store = await openStore();
    await store.create(conversation("c1"));
    expect(await store.get("nope")).toBeUndefined();
    for (const id of ["../c1", "..", "c1/../c1", "/etc", "", "a".repeat(129), "c1\u0000", "c 1"]) {
      expect(await store.get(id)).toBeUndefined();
      expect(await store.delete(id)).toBe(false);
    }
    await expect(store.create(conversation("../escape"))).rejects.toThrow(/invalid conversation id/);
    expect(await readdir(join(dir.path, ".."))).not.toContain("escape");
    expect(await readdir(join(dir.path, "conversations"))).toEqual(["c1"]);
  });

  it("creates over a folder a crash left without an index entry, discarding what it held", async () => {
    const store = await openStore();
    await mkdir(join(conversationDir("c1"), "nested"), { recursive: true });
    await writeFile(join(conversationDir("c1"), "records-000003.json"), "{\"records\": []}");
    await writeFile(join(conversationDir("c1"), "nested", "stray"), "x");
    const handle = await store.create(conversation("c1"));
    await handle.append(message(1));
    expect((await readdir(conversationDir("c1"))).filter((name) => name === "nested" || name === "records-000003.json")).toEqual([]);
    await closeStore(store);
    const reopened = await openStore();
    expect(await (await reopened.get("c1"))!.readRecords()).toEqual([message(1)]);
  });

  it("lets list and get run while a create is in flight", async () => {
    const store = await openStore();
    await store.create(conversation("old", "2025-01-01T00:00:00.000Z"));
    const creating = store.create(conversation("new", "2026-01-01T00:00:00.000Z"));
    const [page, got] = await Promise.all([store.list({ limit: 10 }), store.get("new")]);
    expect(page.data.map((c) => c.id)).toContain("old");
    const handle = await creating;
    expect(got === undefined || got === handle).toBe(true);
    expect((await store.list({ limit: 10 })).data.map((c) => c.id)).toEqual(["new", "old"]);
  });

  it("lists newest first, ties by id, across pages with an opaque cursor, reading metadata only", async () => {
    const store = await openStore();
    const times = ["2026-01-03", "2026-01-01", "2026-01-02", "2026-01-02", "2026-01-05"];
    for (const [i, day] of times.entries()) await store.create(conversation(`c${i}`, `${day}T00:00:00.000Z`));
    const loaded = await store.get("c2");
    await loaded!.update({ ...loaded!.conversation, title: "live title" });
    await closeStore(store);

    const reopened = await openStore();
    const c2 = (await reopened.get("c2"))!;
    await c2.update({ ...c2.conversation, title: "cached title" });
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await reopened.list({ limit: 2, cursor });
      expect(page.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.data.map((c) => c.id));
      for (const c of page.data) expect(c).toMatchObject({ id: c.id, title: expect.any(String), settings: { maxIterations: 20 } });
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    expect(seen).toEqual(["c4", "c0", "c3", "c2", "c1"]);
    expect(pages).toBe(3);
    const all = await reopened.list({ limit: 50 });
    expect(all.nextCursor).toBeUndefined();
    expect(all.data.find((c) => c.id === "c2")!.title).toBe("cached title");
    expect(reopened.loadedCount()).toBe(1);
  });

  it("keeps paging stable when the cursor's conversation is deleted", async () => {
    const store = await openStore();
    for (let i = 0; i < 4; i++) await store.create(conversation(`c${i}`, `2026-01-0${i + 1}T00:00:00.000Z`));
    const first = await store.list({ limit: 2 });
    expect(first.data.map((c) => c.id)).toEqual(["c3", "c2"]);
    expect(await store.delete("c2")).toBe(true);
    const second = await store.list({ limit: 2, cursor: first.nextCursor });
    expect(second.data.map((c) => c.id)).toEqual(["c1", "c0"]);
    expect(second.nextCursor).toBeUndefined();
  });

  it("deletes a conversation: index, cache and folder", async () => {
    const store = await openStore();
    const handle = await store.create(conversation("gone"));
    await handle.append(message(1));
    await store.create(conversation("kept"));
    expect(await store.delete("gone")).toBe(true);
    expect(await store.delete("gone")).toBe(false);
    expect(await store.get("gone")).toBeUndefined();
    expect(store.count()).toBe(1);
    expect(store.cachedBytes()).toBe(0);
    await expect(readdir(conversationDir("gone"))).rejects.toThrow(/ENOENT/);
    await expect(handle.append(message(2))).rejects.toThrow(/deleted/);
    await expect(handle.readRecords()).rejects.toThrow(/deleted/);
    await closeStore(store);
    const reopened = await openStore();
    expect(reopened.count()).toBe(1);
    expect((await reopened.list({ limit: 10 })).data.map((c) => c.id)).toEqual(["kept"]);
  });

  it("rolls segments over: 35 records at segmentSize 10 make 4 files and reload equal", async () => {
    const store = await openStore({ segmentSize: 10 });
    const handle = await store.create(conversation("seg"));
    const records: ConversationRecord[] = [];
    for (let i = 0; i < 35; i++) {
      records.push(message(i));
      await handle.append(message(i));
    }
    const files = (await readdir(conversationDir("seg"))).filter((f) => f.startsWith("records-")).sort();
    expect(files).toEqual(["records-000000.json", "records-000001.json", "records-000002.json", "records-000003.json"]);
    // The last segment's later records are lines of its journal until the store closes.
    await closeStore(store);
    const lastSegment = JSON.parse(await readFile(join(conversationDir("seg"), files[3]), "utf8"));
    expect(lastSegment.records.map((r: ConversationRecord) => r.id)).toEqual(["m30", "m31", "m32", "m33", "m34"]);

    const reopened = await openStore({ segmentSize: 10 });
    const again = (await reopened.get("seg"))!;
    expect(await again.readRecords()).toEqual(records);
    expect(again.conversation.recordCount).toBe(35);
    // Appending after reload continues in the partial last segment.
    await again.append(message(35));
    expect((await readdir(conversationDir("seg"))).filter((f) => f.startsWith("records-"))).toHaveLength(4);
    await closeStore(reopened);
    const tail = JSON.parse(await readFile(join(conversationDir("seg"), "records-000003.json"), "utf8"));
    expect(tail.records).toHaveLength(6);
  });

  it("closes a segment early when the next record would bring it over segmentBytes", async () => {
    const store = await openStore({ segmentSize: 1000, segmentBytes: 2000 });
    const handle = await store.create(conversation("big"));
    for (let i = 0; i < 6; i++) await handle.append(message(i, "x".repeat(900)));
    const files = (await readdir(conversationDir("big"))).filter((f) => f.startsWith("records-"));
    expect(files.length).toBe(3);
    await closeStore(store);
    const again = (await (await openStore({ segmentSize: 1000, segmentBytes: 2000 })).get("big"))!;
    expect(ids(await again.readRecords())).toEqual(["m0", "m1", "m2", "m3", "m4", "m5"]);
  });

  it("replaceRecord rewrites only the record's own segment, across segments", async () => {
    const store = await openStore({ segmentSize: 10 });
    const handle = await store.create(conversation("rep"));
    for (let i = 0; i < 25; i++) await handle.append(i === 3 || i === 17 ? toolCall(i, "pending", null) : message(i));
    const segmentPath = (n: number) => join(conversationDir("rep"), `records-00000${n}.json`);
    const before = await Promise.all([0, 1, 2].map((n) => readFile(segmentPath(n), "utf8")));

    await handle.replaceRecord(toolCall(17, "completed", "seventeen"));
    const after = await Promise.all([0, 1, 2].map((n) => readFile(segmentPath(n), "utf8")));
    expect(after[0]).toBe(before[0]);
    expect(after[2]).toBe(before[2]);
    expect(after[1]).not.toBe(before[1]);
    expect(await handle.readRecords(17, 18)).toEqual([toolCall(17, "completed", "seventeen")]);

    await handle.replaceRecord(toolCall(3, "skipped", "declined"));
    await expect(handle.replaceRecord(toolCall(99, "completed", "x"))).rejects.toThrow(/not in the conversation/);
    await closeStore(store);

    const again = (await (await openStore({ segmentSize: 10 })).get("rep"))!;
    const records = await again.readRecords();
    expect(records[3]).toEqual(toolCall(3, "skipped", "declined"));
    expect(records[17]).toEqual(toolCall(17, "completed", "seventeen"));
    expect(records).toHaveLength(25);
  });

  it("coalesces 200 concurrent appends into a few writes (group commit), none visible before it is durable", async () => {
    const store = await openStore({ segmentSize: 64 });
    const handle = await store.create(conversation("burst"));
    const fileWrite = vi.spyOn(LowdbFile.prototype, "write");
    const writes = range(200).map((n) => handle.append(message(n)));
    expect(handle.recordCount).toBe(0);
    await Promise.all(writes);
    // One segment write per group (a group ends where its segment is full)
    // plus one meta write each: 4 segments, 8 writes.
    expect(fileWrite.mock.calls.length).toBe(8);
    fileWrite.mockRestore();
    await closeStore(store);

    const again = (await (await openStore({ segmentSize: 64 })).get("burst"))!;
    expect(ids(await again.readRecords())).toEqual(range(200).map((n) => `m${n}`));
    expect(again.conversation.recordCount).toBe(200);
    expect(again.conversation.updatedAt).toBe(message(199).timestamp);
  });

  it("shares one load between concurrent gets", async () => {
    const store = await openStore();
    await (await store.create(conversation("c1"))).append(message(1));
    await closeStore(store);
    const reopened = await openStore();
    const handles = await Promise.all([reopened.get("c1"), reopened.get("c1"), reopened.get("c1")]);
    expect(handles[0]).toBeDefined();
    expect(handles[1]).toBe(handles[0]);
    expect(handles[2]).toBe(handles[0]);
    // The shared handle writes correctly (one writer per file).
    await Promise.all([handles[0]!.append(message(2)), handles[1]!.append(message(3))]);
    await closeStore(reopened);
    expect(ids(await (await (await openStore()).get("c1"))!.readRecords())).toEqual(["m1", "m2", "m3"]);
  });

  it("unload drops the records from memory; the next get reads them again", async () => {
    const store = await openStore();
    const handle = await store.create(conversation("c1"));
    await handle.append(message(1));
    expect(store.cachedBytes()).toBeGreaterThan(0);
    await store.unload("c1");
    expect(store.loadedCount()).toBe(0);
    expect(store.cachedBytes()).toBe(0);
    await expect(handle.append(message(2))).rejects.toThrow(/unloaded/);
    const again = (await store.get("c1"))!;
    expect(again).not.toBe(handle);
    expect(await again.readRecords()).toEqual([message(1)]);
  });

  it("rejects mutations after close", async () => {
    const store = await openStore();
    const handle = await store.create(conversation("c1"));
    await closeStore(store);
    await expect(handle.append(message(1))).rejects.toThrow(/closed/);
    await expect(store.get("c1")).rejects.toThrow(/closed/);
  });
});

describe("data dir lock", () => {
  let child: ChildProcess | undefined;

  afterEach(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = once(child, "exit");
      child.kill("SIGKILL");
      await exited;
    }
    child = undefined;
  });

  it("refuses a second store on the same data dir in this process", async () => {
    const first = await openStore();
    const second = new LowdbConversationStore(dir.path);
    const error = await second.open().then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DataDirLockedError);
    expect((error as Error).message).toContain(`(pid ${process.pid})`);
    // The refused store did not remove the owner's lock.
    expect((await readFile(join(dir.path, "LOCK"), "utf8")).trim()).toBe(String(process.pid));
    await closeStore(first);
    await expect(readFile(join(dir.path, "LOCK"), "utf8")).rejects.toThrow(/ENOENT/);
    await openStore(); // free again
  });

  it("refuses while another live process holds LOCK, and takes over once it is dead", async () => {
    child = spawn("sleep", ["30"], { stdio: "ignore" });
    await once(child, "spawn");
    const pid = child.pid!;
    await writeFile(join(dir.path, "LOCK"), `${pid}\n`, "utf8");

    const store = new LowdbConversationStore(dir.path);
    await expect(store.open()).rejects.toThrow(
      `data dir ${dir.path} is in use by another agentwire process (pid ${pid}); stop it or use --data-dir`,
    );
    await expect(DataDirLock.acquire(dir.path)).rejects.toBeInstanceOf(DataDirLockedError);

    const exited = once(child, "exit");
    child.kill("SIGKILL");
    await exited;

    const taken = await openStore();
    expect((await readFile(join(dir.path, "LOCK"), "utf8")).trim()).toBe(String(process.pid));
    await closeStore(taken);
  });

  it("takes over a stale LOCK left by a previous run with our own pid (containers reuse pids)", async () => {
    await writeFile(join(dir.path, "LOCK"), `${process.pid}\n`, "utf8");
    const lock = await DataDirLock.acquire(dir.path);
    await expect(DataDirLock.acquire(dir.path)).rejects.toBeInstanceOf(DataDirLockedError);
    await lock.release();
  });

  it("takes over an empty or garbled LOCK (crash while it was being written)", async () => {
    await writeFile(join(dir.path, "LOCK"), "", "utf8");
    const lock = await DataDirLock.acquire(dir.path);
    expect((await readFile(join(dir.path, "LOCK"), "utf8")).trim()).toBe(String(process.pid));
    await lock.release();
  });

  it("release leaves a LOCK that is no longer ours", async () => {
    const lock = await DataDirLock.acquire(dir.path);
    await writeFile(join(dir.path, "LOCK"), "1\n", "utf8");
    await lock.release();
    expect(await readFile(join(dir.path, "LOCK"), "utf8")).toBe("1\n");
  });
});
