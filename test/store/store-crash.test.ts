/**
 * A process killed with SIGKILL in the middle of appending: what is on disk
 * is a prefix of the appends (segments are written in order, meta after its
 * segment; journal lines in order, a torn last one dropped), it holds
 * everything that was acknowledged, and it loads without being damaged.
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LowdbConversationStore } from "../../src/store/lowdb-store.js";
import { REPO_ROOT } from "../harness/cli-process.js";
import { userMessage } from "../harness/store-records.js";

let dataDir: string;

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "agentwire-crash-"));
});

afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

/**
 * Runs the appending child until it has acknowledged at least `atLeast` records, then kills it; returns the last
 * acknowledged count and how many writes its store's writer thread had done.
 */
async function appendAndKill(atLeast: number, segmentSize = 7): Promise<{ acked: number; offThread: number }> {
  const child = spawn(process.execPath, ["--import", "tsx", "test/harness/store-crash-child.ts", dataDir, String(segmentSize)], {
    cwd: REPO_ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let acked = 0;
  let offThread = 0;
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<void>((resolve) => child.on("close", () => resolve()));
  await new Promise<void>((resolve, reject) => {
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      for (const match of chunk.matchAll(/acked (\d+) off-thread (\d+)/g)) {
        acked = Math.max(acked, Number(match[1]));
        offThread = Math.max(offThread, Number(match[2]));
      }
      if (acked >= atLeast) resolve();
    });
    child.on("close", () => reject(new Error(`child exited early: ${stderr}`)));
  });
  child.kill("SIGKILL");
  await exited;
  return { acked, offThread };
}

/** The data dir the crash left, opened: its records must be a prefix of m0, m1, … holding the `acked` first, and undamaged. */
async function openAfterCrash(acked: number, segmentSize: number) {
  const store = new LowdbConversationStore(dataDir, { segmentSize });
  await store.open();
  const handle = (await store.get("c"))!;
  const ids = (await handle.readRecords()).map((r) => r.id);
  expect(ids.length).toBeGreaterThanOrEqual(acked);
  expect(ids).toEqual(Array.from({ length: ids.length }, (_, i) => `m${i}`));
  expect(handle.recordCount).toBe(ids.length);
  expect(store.damaged()).toEqual([]);
  return { store, handle, count: ids.length };
}

/** After more appends and a clean close, a new store reads all `total` records. */
async function expectReopened(segmentSize: number, total: number): Promise<void> {
  const reopened = new LowdbConversationStore(dataDir, { segmentSize });
  await reopened.open();
  expect((await (await reopened.get("c"))!.readRecords()).map((r) => r.id)).toEqual(Array.from({ length: total }, (_, i) => `m${i}`));
  await reopened.close();
}

describe("a crash while appending", () => {
  it("leaves a prefix of the appends holding every acknowledged record, which loads and continues", async () => {
    const { acked, offThread } = await appendAndKill(200);
    // The acknowledged writes were the writer thread's (file-writer.ts): a segment and a meta.json write per burst at least.
    expect(offThread).toBeGreaterThanOrEqual(acked / 10);
    const { store, handle, count } = await openAfterCrash(acked, 7);
    await Promise.all([0, 1, 2].map((i) => handle.append(userMessage(count + i))));
    await store.close();
    await expectReopened(7, count + 3);
  }, 20_000);

  it("with the writes in the journal (one segment): every acknowledged record and seq reservation loads, the torn last line is dropped", async () => {
    const { acked } = await appendAndKill(300, 1000);
    const { store, handle, count } = await openAfterCrash(acked, 1000);
    // Every acknowledged reservation too (a burst's rode in its line, or in the meta.json written with its segment).
    expect(handle.seqReserved).toBeGreaterThanOrEqual(acked);
    await handle.append(userMessage(count));
    await store.close();
    await expectReopened(1000, count + 1);
  }, 20_000);
});
