/**
 * truncateRecords on the embedded store when the process dies part way: the
 * files it leaves (meta.json written, segments not yet; or the later
 * segments gone, the cut one not yet rewritten) load as a prefix of the
 * records at least as long as the truncation keeps, never as damaged.
 */
import { copyFile, mkdir, readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import { conversation, message, range } from "../harness/store-records.js";
import { useStoreDir } from "../harness/store-dir.js";

const dir = useStoreDir("truncate");
const ids = (n: number) => range(n).map((i) => message(i).id);

/** A conversation of 10 records in segments of 4, truncated to 2, with the segment files from before the truncation saved aside. */
async function truncatedWithOldSegments(id: string): Promise<{ folder: string; saved: string; names: string[] }> {
  const first = await dir.open({ segmentSize: 4 });
  const created = await first.create(conversation(id));
  for (const n of range(10)) await created.append(message(n));
  // Closed and opened again: the journal's records are written into the segment files saved below.
  await dir.close(first);
  const store = await dir.open({ segmentSize: 4 });
  const handle = (await store.get(id))!;
  const folder = dir.conversation(id);
  const names = (await readdir(folder)).filter((name) => name.startsWith("records-")).sort();
  expect(names).toHaveLength(3);
  const saved = `${folder}.saved`;
  await rm(saved, { recursive: true, force: true });
  await mkdir(saved);
  for (const name of names) await copyFile(join(folder, name), join(saved, name));
  await handle.truncateRecords(2);
  expect(handle.recordCount).toBe(2);
  await dir.close(store);
  return { folder, saved, names };
}

it("a crash after meta.json, before any segment changed: the records are counted back", async () => {
  const { folder, saved, names } = await truncatedWithOldSegments("c_crash1");
  for (const name of names) await copyFile(join(saved, name), join(folder, name));
  const store = await dir.open({ segmentSize: 4 });
  const handle = (await store.get("c_crash1"))!;
  expect(handle.recordCount).toBe(10);
  expect((await handle.readRecords()).map((r) => r.id)).toEqual(ids(10));
  await handle.append(message(10));
  expect(handle.recordCount).toBe(11);
});

it("a crash after the later segments went, before the cut one was rewritten: a prefix longer than the cut", async () => {
  const { folder, saved, names } = await truncatedWithOldSegments("c_crash2");
  await copyFile(join(saved, names[0]!), join(folder, names[0]!));
  const store = await dir.open({ segmentSize: 4 });
  const handle = (await store.get("c_crash2"))!;
  expect(handle.recordCount).toBe(4);
  expect((await handle.readRecords()).map((r) => r.id)).toEqual(ids(4));
  expect(store.damaged()).toEqual([]);
});

it("after a clean truncation the conversation reloads with the records kept and takes appends", async () => {
  await truncatedWithOldSegments("c_clean");
  const store = await dir.open({ segmentSize: 4 });
  const handle = (await store.get("c_clean"))!;
  expect((await handle.readRecords()).map((r) => r.id)).toEqual(ids(2));
  for (const n of range(5, 20)) await handle.append(message(n));
  expect(handle.recordCount).toBe(7);
});

it("reads racing a truncation never mark the conversation damaged", async () => {
  // No cache: every read goes to the files the truncation removes and rewrites.
  const store = await dir.open({ segmentSize: 4, cacheBytes: 1 });
  const handle = await store.create(conversation("c_race"));
  for (const n of range(40)) await handle.append(message(n));
  for (const cut of [30, 17, 5]) {
    let done = false;
    const truncating = handle.truncateRecords(cut).finally(() => (done = true));
    const outcomes: (number | string)[] = [];
    while (!done) outcomes.push(await handle.readRecords().then((records) => records.length, (error: Error) => error.message));
    await truncating;
    for (const outcome of outcomes) {
      if (typeof outcome === "string") expect(outcome).toMatch(/taken back \(conversation\.rewind\) while they were being read/);
    }
  }
  expect(store.damaged()).toEqual([]);
  expect((await handle.readRecords()).map((r) => r.id)).toEqual(ids(5));
});
