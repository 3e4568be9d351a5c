/**
 * The conversation index's journal (src/store/lowdb-index-journal.ts): a
 * create or delete is one line appended, not index.json rewritten; index.json
 * is written whole once the journal is full and at a clean stop; what a crash
 * leaves (a torn last line, lines index.json already holds) loads as a state
 * the store acknowledged, and a damaged line is set aside and the index
 * rebuilt from the folders.
 */
import { spawn } from "node:child_process";
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compareNewestFirst } from "../../src/store/list-page.js";
import { ConversationIndex, INDEX_JOURNAL_MIN_LINES } from "../../src/store/lowdb-index.js";
import { INDEX_JOURNAL_FILE } from "../../src/store/lowdb-index-journal.js";
import { REPO_ROOT } from "../harness/cli-process.js";
import { useStoreDir } from "../harness/store-dir.js";
import { conversation } from "../harness/store-records.js";

const storeDir = useStoreDir("index-journal");
const indexPath = () => join(storeDir.path, "index.json");
const journalPath = () => join(storeDir.path, INDEX_JOURNAL_FILE);
const at = (n: number) => new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString();

async function journalLines(): Promise<unknown[]> {
  const text = await readFile(journalPath(), "utf8");
  expect(text.endsWith("\n")).toBe(true);
  return text.trimEnd().split("\n").map((line) => JSON.parse(line));
}

async function indexIds(): Promise<string[]> {
  return (JSON.parse(await readFile(indexPath(), "utf8")) as { conversations: { id: string }[] }).conversations.map((e) => e.id).sort();
}

/** The index as a start after a crash reads it: the files as they are, no clean stop. */
async function reread(warnings: string[] = []): Promise<ConversationIndex> {
  return ConversationIndex.open(storeDir.path, (message) => warnings.push(message));
}

describe("the index's journal", () => {
  it("takes a create or a delete as one line; index.json is not written until a clean stop, which removes the journal", async () => {
    const store = await storeDir.open();
    await store.create(conversation("a", at(1)));
    await store.create({ ...conversation("b", at(2)), parentConversationId: "a", parentToolCallId: "call_1", agentDepth: 1 });
    await store.create(conversation("c", at(3)));
    expect(await store.delete("c")).toBe(true);

    expect(await readdir(storeDir.path)).not.toContain("index.json");
    expect(await journalLines()).toEqual([
      { changes: [{ add: "a", createdAt: at(1) }] },
      { changes: [{ add: "b", createdAt: at(2), parentConversationId: "a" }] },
      { changes: [{ add: "c", createdAt: at(3) }] },
      { changes: [{ remove: "c" }] },
    ]);
    // What a start after a crash here would read.
    const read = await reread();
    expect(read.ids().sort()).toEqual(["a", "b"]);
    expect(read.children("a").map((e) => e.id)).toEqual(["b"]);

    await storeDir.close(store);
    expect(await readdir(storeDir.path)).not.toContain(INDEX_JOURNAL_FILE);
    expect(JSON.parse(await readFile(indexPath(), "utf8"))).toEqual({
      conversations: [
        { id: "a", createdAt: at(1) },
        { id: "b", createdAt: at(2), parentConversationId: "a" },
      ],
    });
    const reopened = await storeDir.open();
    expect((await reopened.list({ limit: 10 })).data.map((c) => c.id)).toEqual(["b", "a"]);
    expect((await reopened.list({ limit: 10, parentConversationId: "a" })).data.map((c) => c.id)).toEqual(["b"]);
  });

  it("keeps its lines when index.json cannot be written at a clean stop: the stop warns, and the next start reads them", async () => {
    const warnings: string[] = [];
    const store = await storeDir.open({ onWarning: (m) => warnings.push(m) });
    await store.create(conversation("a", at(1)));
    await store.create(conversation("b", at(2)));
    // A directory where index.json's temp file goes: the whole write fails.
    await mkdir(join(storeDir.path, ".index.json.tmp", "blocker"), { recursive: true });
    await storeDir.close(store);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^the conversation index's changes could not be written into index\.json at stop \(.*\); index-changes\.jsonl keeps them$/);
    expect(await readdir(storeDir.path)).not.toContain("index.json");
    expect(await journalLines()).toHaveLength(2);

    await rm(join(storeDir.path, ".index.json.tmp"), { recursive: true });
    const reopened = await storeDir.open();
    expect((await reopened.list({ limit: 10 })).data.map((c) => c.id)).toEqual(["b", "a"]);
    await storeDir.close(reopened);
    expect(await indexIds()).toEqual(["a", "b"]);
    expect(await readdir(storeDir.path)).not.toContain(INDEX_JOURNAL_FILE);
  });

  it("takes changes queued together as one line", async () => {
    const index = await reread();
    await index.add("first", at(0));
    // Queued in one turn of the event loop: one write.
    await Promise.all([index.add("x", at(1)), index.add("y", at(2)), index.remove("first"), index.add("z", at(3))]);
    expect(await journalLines()).toEqual([
      { changes: [{ add: "first", createdAt: at(0) }] },
      { changes: [{ add: "x", createdAt: at(1) }, { add: "y", createdAt: at(2) }, { remove: "first" }, { add: "z", createdAt: at(3) }] },
    ]);
    expect(index.ids().sort()).toEqual(["x", "y", "z"]);
  });

  it(`is written into index.json and removed once it holds ${INDEX_JOURNAL_MIN_LINES} lines`, async () => {
    const index = await reread();
    for (let n = 0; n < INDEX_JOURNAL_MIN_LINES; n++) await index.add(`c${n}`, at(n));
    expect(await journalLines()).toHaveLength(INDEX_JOURNAL_MIN_LINES);
    expect(await readdir(storeDir.path)).not.toContain("index.json");

    await index.remove("c0");
    await index.idle();
    expect(await readdir(storeDir.path)).not.toContain(INDEX_JOURNAL_FILE);
    const ids = await indexIds();
    expect(ids).toHaveLength(INDEX_JOURNAL_MIN_LINES - 1);
    expect(ids).not.toContain("c0");

    // The next change is the new journal's first line.
    await index.add("late", at(5000));
    expect(await journalLines()).toEqual([{ changes: [{ add: "late", createdAt: at(5000) }] }]);
    const read = await reread();
    expect(read.size).toBe(INDEX_JOURNAL_MIN_LINES);
    expect(read.sorted()[0]).toEqual({ id: "late", createdAt: at(5000) });
  });

  it("cuts off a last line a crash left half written, without applying it", async () => {
    await writeFile(indexPath(), JSON.stringify({ conversations: [{ id: "a", createdAt: at(1) }] }));
    const whole = `${JSON.stringify({ changes: [{ add: "b", createdAt: at(2) }] })}\n`;
    await writeFile(journalPath(), `${whole}{"changes":[{"add":"c","createdAt":"2026-0`);
    const warnings: string[] = [];
    const index = await reread(warnings);
    expect(warnings).toEqual([]);
    expect(index.ids().sort()).toEqual(["a", "b"]);
    expect(await readFile(journalPath(), "utf8")).toBe(whole);
    // Appends go after the whole lines.
    await index.add("d", at(4));
    expect((await reread()).ids().sort()).toEqual(["a", "b", "d"]);
  });

  it("applies lines index.json already holds (a crash between its whole write and the journal's removal) without changing anything", async () => {
    await writeFile(indexPath(), JSON.stringify({ conversations: [{ id: "a", createdAt: at(1) }, { id: "c", createdAt: at(3) }] }));
    const lines = [
      { changes: [{ add: "a", createdAt: at(1) }, { add: "b", createdAt: at(2) }] },
      { changes: [{ remove: "b" }, { add: "c", createdAt: at(3) }] },
    ];
    await writeFile(journalPath(), lines.map((line) => `${JSON.stringify(line)}\n`).join(""));
    const index = await reread();
    expect(index.sorted()).toEqual([
      { id: "c", createdAt: at(3) },
      { id: "a", createdAt: at(1) },
    ]);
  });

  it.each([
    ["not JSON", "{nope\n", /^index-changes\.jsonl is damaged: line 2 is not valid JSON/],
    ["a change that does not fit", `${JSON.stringify({ changes: [{ add: "../etc", createdAt: at(1) }] })}\n`, /^index-changes\.jsonl is damaged: line 2 has a change that does not fit/],
  ])("with a damaged line (%s) is set aside, and the index rebuilt from the conversation folders", async (_name, bad, problem) => {
    const warnings: string[] = [];
    const store = await storeDir.open({ onWarning: (m) => warnings.push(m) });
    await store.create(conversation("kept", at(1)));
    await storeDir.close(store);
    // A folder the journal does not know of yet (its line was the damaged one): the rebuild finds it.
    await mkdir(storeDir.conversation("orphan"), { recursive: true });
    await writeFile(join(storeDir.conversation("orphan"), "meta.json"), await readFile(join(storeDir.conversation("kept"), "meta.json"), "utf8").then((text) => text.replaceAll('"kept"', '"orphan"')));
    const content = `${JSON.stringify({ changes: [{ remove: "kept" }] })}\n${bad}`;
    await writeFile(journalPath(), content);

    const reopened = await storeDir.open({ onWarning: (m) => warnings.push(m) });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(problem);
    expect(warnings[0]).toMatch(/; set aside as index-changes\.jsonl\.damaged-[0-9TZ-]+ and rebuilt from 2 conversation folders$/);
    const names = await readdir(storeDir.path);
    expect(names).not.toContain(INDEX_JOURNAL_FILE);
    const aside = names.filter((name) => name.startsWith(`${INDEX_JOURNAL_FILE}.damaged-`));
    expect(aside).toHaveLength(1);
    expect(await readFile(join(storeDir.path, aside[0]), "utf8")).toBe(content);
    expect(reopened.count()).toBe(2);
    expect(await indexIds()).toEqual(["kept", "orphan"]);
  });

  it("keeps the newest-first lists in order through creates and deletes, as a fresh sort has them", async () => {
    const index = await reread();
    const alive = new Map<string, string>();
    let seed = 7;
    const random = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    for (let n = 0; n < 40; n++) {
      const createdAt = at(random(10)); // many share their creation time: ids break the tie
      await index.add(`c${n}`, createdAt, n % 3 === 0 ? "c0" : undefined);
      alive.set(`c${n}`, createdAt);
    }
    expect(index.sorted()).toHaveLength(40); // built now, then kept up to date
    expect(index.children("c0").length).toBeGreaterThan(0);
    for (let round = 0; round < 60; round++) {
      const ids = [...alive.keys()];
      if (ids.length > 0 && random(2) === 0) {
        const id = ids[random(ids.length)]!;
        await index.remove(id);
        alive.delete(id);
      } else {
        const id = `d${round}`;
        const createdAt = at(random(10));
        await index.add(id, createdAt, random(2) === 0 ? "c0" : undefined);
        alive.set(id, createdAt);
      }
      const fresh = [...alive].map(([id, createdAt]) => ({ id, createdAt })).sort(compareNewestFirst);
      expect(index.sorted()).toEqual(fresh);
      expect(index.children("c0")).toEqual((await reread()).children("c0"));
    }
  });

  it("holds every acknowledged create after a kill -9 in the middle of creating, across a whole write of index.json", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", "test/harness/index-crash-child.ts", storeDir.path], {
      cwd: REPO_ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let acked = 0;
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const exited = new Promise<void>((resolve) => child.on("close", () => resolve()));
    // Past the journal's bound, so index.json has been written whole (and the journal started again) before the kill.
    const target = INDEX_JOURNAL_MIN_LINES * 2 + 100;
    await new Promise<void>((resolve, reject) => {
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
        for (const match of chunk.matchAll(/acked (\d+)/g)) acked = Math.max(acked, Number(match[1]));
        if (acked >= target) resolve();
      });
      child.on("close", () => reject(new Error(`child exited early: ${stderr}`)));
    });
    child.kill("SIGKILL");
    await exited;

    const warnings: string[] = [];
    const store = await storeDir.open({ onWarning: (m) => warnings.push(m) });
    expect(warnings).toEqual([]);
    // Every acknowledged create is there; the group in flight at the kill may be too, whole or in part, never out of order.
    const count = store.count();
    expect(count).toBeGreaterThanOrEqual(acked);
    expect(count).toBeLessThanOrEqual(acked + 2);
    const listed = (await store.list({ limit: 100 })).data.map((c) => c.id);
    expect(listed.slice(-1)).toEqual([`c${count - 100}`]);
    for (let n = 0; n < acked; n += 997) expect(await store.get(`c${n}`)).toBeDefined();
    expect(store.damaged()).toEqual([]);
  }, 120_000);
});
