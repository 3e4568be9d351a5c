/**
 * The store on disks that fail for real: a read-only remount and a full
 * tmpfs (ENOSPC), plus files the store cannot replace (a directory where its
 * temp file goes, EISDIR). A mutation that fails must reject with
 * StoreFileError and leave no trace — not in what readers see, not on disk —
 * and the store must keep working once the disk does.
 */
import { execFile } from "node:child_process";
import { mkdir, readdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import type { Conversation } from "../../protocol/index.js";
import type { ConversationHandle } from "../../src/store/conversation-store.js";
import { fileWriterReady } from "../../src/store/file-writer.js";
import { LowdbConversationStore, type LowdbStoreOptions } from "../../src/store/lowdb-store.js";
import { StoreFileError } from "../../src/store/store-file-error.js";
import { REPO_ROOT } from "../harness/cli-process.js";
import { TestDisk, diskSupport } from "../harness/store-disk.js";
import { useStoreDir } from "../harness/store-dir.js";
import { assistantMessage, conversation, toolCall, userMessage } from "../harness/store-records.js";

if (diskSupport.reason) console.warn(`store-failures: ${diskSupport.reason}`);

let disk: TestDisk;
// The failures below reach the store's writes on its writer thread (file-writer.ts), not the fallback on this one.
beforeAll(async () => {
  expect(await fileWriterReady()).toBe(true);
});

const storeDir = useStoreDir("failures", {
  make: async () => {
    disk = await TestDisk.create();
    return join(disk.dir, "data");
  },
  dispose: async () => {
    await disk.writable().catch(() => undefined);
    await disk.free().catch(() => undefined);
    await disk.dispose();
  },
});
const openStore = (options?: LowdbStoreOptions) => storeDir.open(options);
const closeStore = (store: LowdbConversationStore) => storeDir.close(store);

/** Every file and folder under `dir`, relative, sorted (temp files included: they start with a dot). */
async function tree(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true });
  return entries.map(String).sort();
}

/** What readers can see of a conversation and of the store. */
async function visible(store: LowdbConversationStore, handle: ConversationHandle) {
  return {
    conversation: handle.conversation,
    recordCount: handle.recordCount,
    seqReserved: handle.seqReserved,
    openToolCalls: handle.openToolCalls,
    records: await handle.readRecords(),
    tail: await handle.readRecords(2),
    call: await handle.findToolCall("call_3"),
    list: await store.list({ limit: 10 }),
    count: store.count(),
  };
}

async function expectStoreFileError(promise: Promise<unknown>): Promise<StoreFileError> {
  const error = await promise.then(
    () => {
      throw new Error("expected a StoreFileError, but it resolved");
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(StoreFileError);
  return error as StoreFileError;
}

/**
 * A conversation with an open round, so every reader has something to show;
 * unloaded and loaded again, so its journal (lowdb-journal.ts) is emptied
 * into its files and the next change is the journal's first line: on a full
 * tmpfs, an append to a journal whose last page has room would succeed.
 */
async function seeded(store: LowdbConversationStore): Promise<ConversationHandle> {
  const handle = await store.create(conversation("c1"));
  await handle.append(userMessage(1));
  await handle.append(assistantMessage(2));
  await handle.append(toolCall(3, "pending", null));
  await handle.update({ ...handle.conversation, title: "before" });
  await handle.reserveSeq(10);
  await store.unload("c1");
  return (await store.get("c1"))!;
}

const failures = [
  {
    name: "a read-only disk",
    supported: diskSupport.readOnly,
    break: () => disk.readOnly(),
    repair: () => disk.writable(),
  },
  {
    name: "a full disk (ENOSPC)",
    supported: diskSupport.full,
    break: () => disk.fill(),
    repair: () => disk.free(),
  },
];

describe.each(failures)("on $name", ({ supported, break: breakDisk, repair }) => {
  it.skipIf(!supported)("append, replaceRecord, update, reserveSeq and create reject with StoreFileError and leave no trace", async () => {
    // A small segment size makes the burst below cross into a new segment too.
    const store = await openStore({ segmentSize: 4 });
    const handle = await seeded(store);
    await store.create(conversation("other", "2025-01-01T00:00:00.000Z"));
    const before = await visible(store, handle);
    const filesBefore = await tree(storeDir.path);

    await breakDisk();
    await expectStoreFileError(handle.append(userMessage(4)));
    // A burst: one group, all of it fails (the last two would start a new segment).
    const burst = [5, 6, 7, 8].map((n) => expectStoreFileError(handle.append(userMessage(n))));
    await Promise.all(burst);
    await expectStoreFileError(handle.replaceRecord(toolCall(3, "completed", "three")));
    await expectStoreFileError(handle.update({ ...handle.conversation, title: "after" }));
    await expectStoreFileError(handle.reserveSeq(100));
    const created = await expectStoreFileError(store.create(conversation("c2", "2026-06-01T00:00:00.000Z")));
    expect(created.message).toContain(join(storeDir.path, "conversations", "c2"));

    expect(await visible(store, handle)).toEqual(before);
    expect(await store.get("c2")).toBeUndefined();
    // No folder, no temp file, nothing else new on disk.
    expect(await tree(storeDir.path)).toEqual(filesBefore);

    await repair();
    expect(await visible(store, handle)).toEqual(before);
    await handle.append(userMessage(9));
    await handle.reserveSeq(20);
    expect(handle.recordCount).toBe(4);
    expect((await handle.readRecords()).map((r) => r.id)).toEqual(["m1", "m2", "t3", "m9"]);
    // The id whose create failed is free.
    await store.create(conversation("c2", "2026-06-01T00:00:00.000Z"));
    await closeStore(store);

    // The disk holds exactly the good mutations.
    const reopened = await openStore({ segmentSize: 4 });
    const again = (await reopened.get("c1"))!;
    expect(await again.readRecords()).toEqual([userMessage(1), assistantMessage(2), toolCall(3, "pending", null), userMessage(9)]);
    expect(again.openToolCalls).toEqual([toolCall(3, "pending", null)]);
    expect(again.conversation).toMatchObject({ title: "before", recordCount: 4, updatedAt: userMessage(9).timestamp });
    expect(again.seqReserved).toBe(20);
    expect((await reopened.list({ limit: 10 })).data.map((c) => c.id)).toEqual(["c2", "c1", "other"]);
    expect(reopened.damaged()).toEqual([]);
    expect((await readdir(join(storeDir.path, "conversations", "c1"))).sort()).toEqual(["meta.json", "records-000000.json"]);
  });

  it.skipIf(!supported)("delete rejects with StoreFileError and the conversation stays", async () => {
    // Stopped and opened again, so the index's journal (lowdb-index-journal.ts) is emptied into index.json and the
    // delete's line is its first: on a full tmpfs, an append to a journal whose last page has room would succeed.
    const first = await openStore();
    await seeded(first);
    await closeStore(first);
    const store = await openStore();
    const handle = (await store.get("c1"))!;
    const before = await visible(store, handle);
    await breakDisk();
    await expectStoreFileError(store.delete("c1"));
    expect(await store.get("c1")).toBe(handle);
    expect(await visible(store, handle)).toEqual(before);
    await repair();
    await handle.append(userMessage(4));
    expect(handle.recordCount).toBe(4);
    expect(await store.delete("c1")).toBe(true);
  });
});

describe.skipIf(!diskSupport.full)("on a full disk at start", () => {
  it("a create that fails leaves no folder and no temp file, and the data dir opens again afterwards", async () => {
    const store = await openStore();
    await disk.fill();
    await expectStoreFileError(store.create(conversation("c1")));
    expect(await tree(join(storeDir.path, "conversations"))).toEqual([]);
    expect((await tree(storeDir.path)).filter((f) => f.includes(".tmp"))).toEqual([]);
    expect(store.count()).toBe(0);
    expect(await store.list({ limit: 10 })).toEqual({ data: [] });
    await closeStore(store);
    await disk.free();
    const reopened = await openStore();
    expect(reopened.count()).toBe(0);
  });
});

/**
 * One file of a conversation made unwritable while the rest of the disk
 * works: a directory where steno puts its temp file fails that write at once
 * (EISDIR). This splits "segment written" from "meta written", which happens
 * when a change is written whole (no journal here: journalBytes 0).
 */
describe("when one file cannot be written", () => {
  const openStore = (options?: LowdbStoreOptions) => storeDir.open({ journalBytes: 0, ...options });
  const dir = () => join(storeDir.path, "conversations", "c1");
  const block = (file: string) => mkdir(join(dir(), `.${file}.tmp`, "blocker"), { recursive: true });
  const unblock = (file: string) => rm(join(dir(), `.${file}.tmp`), { recursive: true, force: true });
  const metaOnDisk = async (): Promise<Conversation> => JSON.parse(await readFile(join(dir(), "meta.json"), "utf8")).conversation;

  it("a failed meta write after a durable segment write: the append has happened; the next meta write carries it", async () => {
    const store = await openStore();
    const handle = await seeded(store);
    await block("meta.json");
    await handle.append(userMessage(4));
    expect(handle.recordCount).toBe(4);
    expect(handle.conversation.updatedAt).toBe(userMessage(4).timestamp);
    expect((await handle.readRecords(3)).map((r) => r.id)).toEqual(["m4"]);
    expect((await metaOnDisk()).recordCount).toBe(3);
    // A meta-only change in that state fails alone and changes nothing.
    await expectStoreFileError(handle.update({ ...handle.conversation, title: "after" }));
    expect(handle.conversation.title).toBe("before");

    await unblock("meta.json");
    await handle.reserveSeq(11);
    expect(await metaOnDisk()).toMatchObject({ recordCount: 4, updatedAt: userMessage(4).timestamp, title: "before" });
  });

  it("a reload after a lost meta write counts the records from the segments (not damaged)", async () => {
    const store = await openStore();
    const handle = await seeded(store);
    await block("meta.json");
    await handle.append(userMessage(4));
    await closeStore(store); // its last try to write meta fails too
    expect((await metaOnDisk()).recordCount).toBe(3);
    await unblock("meta.json");

    const reopened = await openStore();
    const again = (await reopened.get("c1"))!;
    expect(again.recordCount).toBe(4);
    expect(again.conversation.updatedAt).toBe(userMessage(4).timestamp);
    expect((await again.readRecords()).map((r) => r.id)).toEqual(["m1", "m2", "t3", "m4"]);
    expect(reopened.damaged()).toEqual([]);
  });

  it("a new segment whose first write fails is forgotten: nothing of it in memory or on disk", async () => {
    const store = await openStore({ segmentSize: 3 });
    const handle = await seeded(store); // fills records-000000.json
    await block("records-000001.json");
    const results = await Promise.allSettled([4, 5].map((n) => handle.append(userMessage(n))));
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    expect(results.map((r) => (r as PromiseRejectedResult).reason)).toEqual([expect.any(StoreFileError), expect.any(StoreFileError)]);
    expect(handle.recordCount).toBe(3);
    expect(await handle.readRecords(3)).toEqual([]);
    expect((await readdir(dir())).filter((f) => f.startsWith("records-"))).toEqual(["records-000000.json"]);

    await unblock("records-000001.json");
    await handle.append(userMessage(6));
    expect((await handle.readRecords()).map((r) => r.id)).toEqual(["m1", "m2", "t3", "m6"]);
    await closeStore(store);
    const again = (await (await openStore({ segmentSize: 3 })).get("c1"))!;
    expect((await again.readRecords()).map((r) => r.id)).toEqual(["m1", "m2", "t3", "m6"]);
    expect((await readdir(dir())).sort()).toEqual(["meta.json", "records-000000.json", "records-000001.json"]);
  });
});

describe("out of file descriptors (EMFILE)", () => {
  it("create, append and update reject with StoreFileError, leave nothing behind, and work once descriptors are back", async () => {
    // A child process under a low ulimit uses up its descriptors, then tries the store.
    const { stdout } = await promisify(execFile)(
      "bash",
      ["-c", 'ulimit -n 256 && exec "$0" --import tsx test/harness/store-emfile-child.ts "$1"', process.execPath, storeDir.path],
      { cwd: REPO_ROOT, timeout: 20_000 },
    );
    const report = JSON.parse(stdout.trim().split("\n").at(-1)!);
    expect(report).toMatchObject({
      exhaustedWith: "EMFILE",
      recordCount: 1,
      title: "title kept",
      records: ["m1"],
      listed: ["kept"],
      folders: ["kept"],
      files: ["meta.json", "records-000000.json"],
      createAgain: "resolved",
      appendAgain: "resolved",
    });
    expect(report.descriptorsHeld).toBeGreaterThan(0);
    for (const what of ["create", "append", "update"]) expect(report[what]).toMatch(/^StoreFileError: .*EMFILE/);
  });
});
