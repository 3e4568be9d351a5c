/**
 * Damaged conversations harm nobody else: `get` of one rejects with
 * ConversationDamagedError, `list` shows it apart and keeps listing the
 * others, `delete` removes it, the start-up check and `onDamaged` report it;
 * a damaged index.json is set aside and rebuilt.
 */
import { mkdir, readdir, readFile, rename, rm, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConversationDamagedError, type DamagedConversation } from "../../src/store/conversation-store.js";
import { LowdbConversationStore, type LowdbStoreOptions } from "../../src/store/lowdb-store.js";
import { StoreFileError } from "../../src/store/store-file-error.js";
import { useStoreDir } from "../harness/store-dir.js";
import { conversation, message, range } from "../harness/store-records.js";

const storeDir = useStoreDir("damage");

interface Reports {
  damaged: DamagedConversation[];
  warnings: string[];
}

async function openStore(options: LowdbStoreOptions = {}): Promise<{ store: LowdbConversationStore; reports: Reports }> {
  const reports: Reports = { damaged: [], warnings: [] };
  const store = await storeDir.open({
    segmentSize: 2,
    onDamaged: (d) => reports.damaged.push(d),
    onWarning: (m) => reports.warnings.push(m),
    ...options,
  });
  return { store, reports };
}

const closeStore = (store: LowdbConversationStore) => storeDir.close(store);
const dir = storeDir.conversation;
const file = (id: string, name: string) => join(dir(id), name);
const segment = (n: number) => file("victim", `records-00000${n}.json`);

/** good1 (oldest), victim (5 records in 3 segments of 2, 2, 1), good2 (newest). */
async function seed(): Promise<void> {
  const { store } = await openStore();
  const good1 = await store.create(conversation("good1", "2026-01-01T00:00:00.000Z"));
  await good1.append(message(0));
  const victim = await store.create(conversation("victim", "2026-01-02T00:00:00.000Z"));
  for (const n of range(5)) await victim.append(message(n));
  await store.create(conversation("good2", "2026-01-03T00:00:00.000Z"));
  await closeStore(store);
}

interface DamageCase {
  name: string;
  damage: () => Promise<void>;
  problem: RegExp;
  /** meta.json cannot be read: `list` shows it under `damaged`. */
  metaDamaged: boolean;
  /** The start-up check (meta, and segment 0 when meta counts records) finds it. */
  foundAtStart: boolean;
  /** What the start-up check says, when it words it differently from a load. */
  startProblem?: RegExp;
}

const cases: DamageCase[] = [
  {
    name: "meta.json truncated",
    damage: async () => {
      const text = await readFile(file("victim", "meta.json"), "utf8");
      await writeFile(file("victim", "meta.json"), text.slice(0, text.length >> 1));
    },
    problem: /^meta\.json is not valid JSON \(/,
    metaDamaged: true,
    foundAtStart: true,
  },
  {
    name: "meta.json missing",
    damage: () => rm(file("victim", "meta.json")),
    problem: /^meta\.json is missing$/,
    metaDamaged: true,
    foundAtStart: true,
  },
  {
    name: "meta.json of the wrong shape",
    damage: () => writeFile(file("victim", "meta.json"), JSON.stringify({ conversation: { id: "victim" }, seqReserved: 0 })),
    problem: /^meta\.json is damaged: conversation\.createdAt is not a string$/,
    metaDamaged: true,
    foundAtStart: true,
  },
  {
    name: "meta.json of another conversation",
    damage: async () => writeFile(file("victim", "meta.json"), await readFile(file("good1", "meta.json"))),
    problem: /^meta\.json describes conversation good1$/,
    metaDamaged: true,
    foundAtStart: true,
  },
  {
    name: "records-000000.json deleted while meta counts records (later segments remain)",
    damage: () => rm(segment(0)),
    problem: /^records-000000\.json is missing \(segment files must be numbered without gaps\)$/,
    metaDamaged: false,
    foundAtStart: true,
    startProblem: /^records-000000\.json is missing but meta\.json counts 5 records$/,
  },
  {
    name: "every segment deleted while meta counts records",
    damage: async () => {
      for (const n of [0, 1, 2]) await rm(segment(n));
    },
    problem: /^meta\.json counts 5 records, the segment files hold 0$/,
    metaDamaged: false,
    foundAtStart: true,
    startProblem: /^records-000000\.json is missing but meta\.json counts 5 records$/,
  },
  {
    name: "garbage in a segment",
    damage: () => writeFile(segment(1), '{"records": [ {"type": "message", "id": "m2"'),
    problem: /^records-000001\.json is not valid JSON \(/,
    metaDamaged: false,
    foundAtStart: false,
  },
  {
    name: "a segment of the wrong shape",
    damage: () => writeFile(segment(1), JSON.stringify({ records: [{ nope: 1 }] })),
    problem: /^records-000001\.json is damaged: record 0 has no id$/,
    metaDamaged: false,
    foundAtStart: false,
  },
  {
    name: "a gap in the segment numbering",
    damage: () => rename(segment(2), segment(3)),
    problem: /^records-000002\.json is missing \(segment files must be numbered without gaps\)$/,
    metaDamaged: false,
    foundAtStart: false,
  },
  {
    name: "fewer records on disk than meta counts",
    damage: () => writeFile(segment(2), JSON.stringify({ records: [] })),
    problem: /^meta\.json counts 5 records, the segment files hold 4$/,
    metaDamaged: false,
    foundAtStart: false,
  },
  {
    name: "a record id twice",
    damage: async () => writeFile(segment(2), JSON.stringify({ records: [message(0)] })),
    problem: /^record id m0 appears twice \(in records-000002\.json\)$/,
    metaDamaged: false,
    foundAtStart: false,
  },
];

describe.each(cases)("a damaged conversation: $name", ({ damage, problem, metaDamaged, foundAtStart, startProblem = problem }) => {
  it("get rejects, list and the check report it once, the others keep working, delete removes it", async () => {
    await seed();
    await damage();
    const { store, reports } = await openStore();
    await store.whenChecked();
    const atStart = foundAtStart ? [{ id: "victim", problem: expect.stringMatching(startProblem) }] : [];
    expect(store.damaged()).toEqual(atStart);
    expect(reports.damaged).toEqual(atStart);

    const error = await store.get("victim").then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConversationDamagedError);
    const damaged = error as ConversationDamagedError;
    expect(damaged.conversationId).toBe("victim");
    expect(damaged.problem).toMatch(problem);
    expect(damaged.problem).not.toContain(storeDir.path);
    expect(damaged.message).toBe(`conversation victim is damaged: ${damaged.problem}`);
    await expect(store.get("victim")).rejects.toBeInstanceOf(ConversationDamagedError);

    const page = await store.list({ limit: 10 });
    if (metaDamaged) {
      expect(page).toEqual({ data: [expect.objectContaining({ id: "good2" }), expect.objectContaining({ id: "good1" })], damaged: [{ id: "victim", problem: damaged.problem }] });
      // Paging walks past it.
      const pages = [];
      let cursor: string | undefined;
      do {
        const p = await store.list({ limit: 1, cursor });
        pages.push([...p.data.map((c) => c.id), ...(p.damaged ?? []).map((d) => `damaged:${d.id}`)]);
        cursor = p.nextCursor;
      } while (cursor);
      expect(pages).toEqual([["good2"], ["damaged:victim"], ["good1"]]);
    } else {
      expect(page.data.map((c) => c.id)).toEqual(["good2", "victim", "good1"]);
      expect(page.damaged).toBeUndefined();
    }
    expect(store.damaged()).toEqual([{ id: "victim", problem: damaged.problem }]);
    // Reported once, in the words of whoever found it first.
    expect(reports.damaged).toEqual([{ id: "victim", problem: expect.stringMatching(foundAtStart ? startProblem : problem) }]);

    const good1 = (await store.get("good1"))!;
    await good1.append(message(1));
    expect((await good1.readRecords()).map((r) => r.id)).toEqual(["m0", "m1"]);

    expect(await store.delete("victim")).toBe(true);
    expect(await store.get("victim")).toBeUndefined();
    expect(store.damaged()).toEqual([]);
    expect(store.count()).toBe(2);
    expect((await readdir(join(storeDir.path, "conversations"))).sort()).toEqual(["good1", "good2"]);
    expect(await store.list({ limit: 10 })).toEqual({ data: [expect.objectContaining({ id: "good2" }), expect.objectContaining({ id: "good1" })] });
    await closeStore(store);

    const reopened = await openStore();
    await reopened.store.whenChecked();
    expect(reopened.store.count()).toBe(2);
    expect(reopened.store.damaged()).toEqual([]);
    expect(reopened.reports).toEqual({ damaged: [], warnings: [] });
  });
});

describe("a damaged index.json", () => {
  it.each([
    ["not JSON", "{", /^index\.json is not valid JSON \(/],
    ["of the wrong shape", JSON.stringify({ conversations: 5 }), /^index\.json is damaged: expected \{conversations: \[\.\.\.\]\}/],
  ])("(%s) is set aside and rebuilt from the folders; a folder with damaged meta is listed as damaged and deletable", async (_name, content, problem) => {
    await seed();
    await writeFile(join(storeDir.path, "index.json"), content);
    await writeFile(file("victim", "meta.json"), "garbage");
    const folderTime = new Date("2026-01-02T12:00:00.000Z");
    await utimes(dir("victim"), folderTime, folderTime);

    const { store, reports } = await openStore();
    expect(reports.warnings).toHaveLength(1);
    expect(reports.warnings[0]).toMatch(problem);
    expect(reports.warnings[0]).toMatch(/; set aside as index\.json\.damaged-[0-9TZ-]+ and rebuilt from 3 conversation folders$/);
    const aside = (await readdir(storeDir.path)).filter((name) => name.startsWith("index.json.damaged-"));
    expect(aside).toHaveLength(1);
    expect(await readFile(join(storeDir.path, aside[0]), "utf8")).toBe(content);

    expect(store.count()).toBe(3);
    const page = await store.list({ limit: 10 });
    expect(page.data.map((c) => c.id)).toEqual(["good2", "good1"]);
    expect(page.damaged).toEqual([{ id: "victim", problem: expect.stringMatching(/^meta\.json is not valid JSON/) }]);
    // Ordered by the folder's time: between good1 and good2.
    expect((await store.list({ limit: 2 })).damaged?.map((d) => d.id)).toEqual(["victim"]);
    expect((await (await store.get("good1"))!.readRecords()).map((r) => r.id)).toEqual(["m0"]);
    expect(await store.delete("victim")).toBe(true);
    await closeStore(store);

    const reopened = await openStore();
    expect(reopened.reports.warnings).toEqual([]);
    expect(reopened.store.count()).toBe(2);
    expect((await reopened.store.list({ limit: 10 })).data.map((c) => c.id)).toEqual(["good2", "good1"]);
  });
});

describe("a rebuilt index.json", () => {
  it("keeps which conversations are sub-agents of which (conversation.list { parentConversationId })", async () => {
    const first = await openStore();
    await first.store.create(conversation("parent", "2026-01-01T00:00:00.000Z"));
    await first.store.create({ ...conversation("kid", "2026-01-02T00:00:00.000Z"), parentConversationId: "parent", parentToolCallId: "call_1", agentDepth: 1 });
    await closeStore(first.store);
    await writeFile(join(storeDir.path, "index.json"), "{");
    const { store } = await openStore();
    expect((await store.list({ limit: 10, parentConversationId: "parent" })).data.map((c) => c.id)).toEqual(["kid"]);
    await closeStore(store);
  });
});

describe("a damaged index.json that cannot be rewritten", () => {
  it("fails open with StoreFileError, releasing the lock and leaving the damaged index in place for the next start", async () => {
    await seed();
    await writeFile(join(storeDir.path, "index.json"), "{");
    // A directory where steno writes its temp file: the rebuilt index cannot be written.
    await mkdir(join(storeDir.path, ".index.json.tmp", "blocker"), { recursive: true });
    const store = new LowdbConversationStore(storeDir.path, { onWarning: () => undefined });
    await expect(store.open()).rejects.toBeInstanceOf(StoreFileError);
    expect(await readFile(join(storeDir.path, "index.json"), "utf8")).toBe("{");
    await expect(readFile(join(storeDir.path, "LOCK"), "utf8")).rejects.toThrow(/ENOENT/);

    await rm(join(storeDir.path, ".index.json.tmp"), { recursive: true });
    const { store: reopened, reports } = await openStore();
    expect(reports.warnings).toHaveLength(1);
    expect(reopened.count()).toBe(3);
    expect(JSON.parse(await readFile(join(storeDir.path, "index.json"), "utf8")).conversations).toHaveLength(3);
  });
});

describe("the start-up check", () => {
  it("runs after open() has returned, a few conversations at a time, and finds every damaged one once", async () => {
    const { store } = await openStore();
    await Promise.all(range(100).map(async (n) => (await store.create(conversation(`c${n}`))).append(message(n))));
    await closeStore(store);
    await rm(file("c7", "meta.json"));
    await writeFile(file("c50", "meta.json"), "[");
    await rm(file("c99", "records-000000.json"));

    const { store: reopened, reports } = await openStore({ checkConcurrency: 4 });
    // open() did not wait for the check.
    expect(reopened.damaged()).toEqual([]);
    await reopened.whenChecked();
    const found = [...reopened.damaged()].sort((a, b) => a.id.localeCompare(b.id));
    expect(found).toEqual([
      { id: "c50", problem: expect.stringMatching(/^meta\.json is not valid JSON/) },
      { id: "c7", problem: "meta.json is missing" },
      { id: "c99", problem: "records-000000.json is missing but meta.json counts 1 record" },
    ]);
    expect(reports.damaged).toHaveLength(3);
    // Found again by a listing: still reported once.
    for (let cursor: string | undefined, first = true; first || cursor; first = false) {
      cursor = (await reopened.list({ limit: 50, cursor })).nextCursor;
    }
    expect(reports.damaged).toHaveLength(3);
  });
});
