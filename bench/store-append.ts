/**
 * Per-append cost of the embedded (lowdb) store as a conversation grows,
 * measured on the store directly, in this process (no server, no socket).
 * Used by the storage scenario of `npm run bench`; also runs alone:
 *   npx tsx bench/store-append.ts
 *
 * Prefill goes through the store API: appends issued without awaiting each
 * one, so the store's coalesced writes make 100k records take seconds. The
 * filled data dir is a template: each measurement works on a copy.
 */
import { cp, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Conversation, MessageRecord } from "../protocol/index.js";
import { LowdbConversationStore } from "../src/store/lowdb-store.js";

export function benchRecord(n: number, tag = "r"): MessageRecord {
  return {
    type: "message",
    id: `${tag}${n}`,
    role: n % 2 ? "assistant" : "user",
    content: `Message number ${n}: `.padEnd(240, "lorem ipsum dolor sit amet "),
    timestamp: new Date(Date.UTC(2026, 0, 1) + n).toISOString(),
  };
}

export function benchConversationId(records: number): string {
  return `bench-${records}`;
}

export function conversationOf(id: string): Conversation {
  return {
    id,
    title: id,
    createdAt: "2026-01-01T00:00:00.000Z",
    updatedAt: "2026-01-01T00:00:00.000Z",
    model: null,
    system: null,
    workspace: null,
    settings: { toolHistoryRounds: 8, maxIterations: 20, toolTimeoutMs: 120_000 },
    recordCount: 0,
  };
}

/** A data dir holding one conversation per size, `bench-<size>`, with that many ~300-byte records. */
export async function prefillDataDir(dataDir: string, sizes: readonly number[]): Promise<void> {
  const store = new LowdbConversationStore(dataDir);
  await store.open();
  try {
    for (const size of sizes) {
      const handle = await store.create(conversationOf(benchConversationId(size)));
      const writes: Promise<void>[] = [];
      for (let n = 0; n < size; n++) writes.push(handle.append(benchRecord(n)));
      await Promise.all(writes);
      if (handle.recordCount !== size) throw new Error(`prefill: ${handle.recordCount} != ${size}`);
    }
  } finally {
    await store.close();
  }
}

/**
 * The size near `aim` records (at most it) whose last segment, in the store's default layout,
 * is `room` + 1 records short of full: the worst case of a segmented store, an append that
 * rewrites a segment about to close, kept so while `room` appends land in it. The layout is
 * read off a probe conversation (its meta.json's records per segment), so the case stays the
 * worst whatever the store's segment bounds are.
 */
export async function nearlyFullSize(aim: number, room: number): Promise<{ records: number; perSegment: number }> {
  const dir = await mkdtemp(join(tmpdir(), "agentwire-bench-layout-"));
  try {
    // Enough ~300-byte records to close a first segment whichever bound (count or bytes) closes it.
    const probe = 2_100;
    await prefillDataDir(dir, [probe]);
    const meta = JSON.parse(await readFile(join(dir, "conversations", benchConversationId(probe), "meta.json"), "utf8")) as { segments?: number[] };
    const perSegment = meta.segments?.[0];
    if (!perSegment || (meta.segments?.length ?? 0) < 2) throw new Error(`storage layout probe: ${probe} records did not close a segment (${JSON.stringify(meta.segments)})`);
    if (room + 1 >= perSegment) throw new Error(`storage layout probe: ${room} appends do not fit in a segment of ${perSegment} records`);
    return { records: Math.max(1, Math.floor(aim / perSegment)) * perSegment - room - 1, perSegment };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export interface StoreAppendResult {
  records: number;
  /** ms per awaited append, one per append. */
  times: number[];
  /** ms to load the conversation. */
  loadMs: number;
}

/** Copy the template, open the store, load `bench-<size>`, time `appends` awaited appends after `warmup`. */
export async function measureStoreAppends(
  templateDir: string,
  size: number,
  options: { warmup: number; appends: number },
): Promise<StoreAppendResult> {
  const dataDir = await mkdtemp(join(tmpdir(), "agentwire-bench-store-"));
  try {
    await cp(templateDir, dataDir, { recursive: true });
    const store = new LowdbConversationStore(dataDir);
    await store.open();
    try {
      const t0 = performance.now();
      const handle = await store.get(benchConversationId(size));
      const loadMs = performance.now() - t0;
      if (!handle) throw new Error(`no conversation ${benchConversationId(size)} in the template`);
      if (handle.recordCount !== size) throw new Error(`loaded ${handle.recordCount} records, expected ${size}`);
      for (let n = 0; n < options.warmup; n++) await handle.append(benchRecord(n, "w"));
      const times: number[] = [];
      for (let n = 0; n < options.appends; n++) {
        const t = performance.now();
        await handle.append(benchRecord(n, "m"));
        times.push(performance.now() - t);
      }
      return { records: size, times, loadMs };
    } finally {
      await store.close();
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const sizes = [100, 1_000, 10_000, 100_000, 950, 99_950];
  const appends = 50;
  const template = await mkdtemp(join(tmpdir(), "agentwire-bench-template-"));
  try {
    await prefillDataDir(template, sizes);
    const rows = [];
    for (const size of sizes) rows.push(await measureStoreAppends(template, size, { warmup: 5, appends }));
    const q = (times: number[], p: number) => [...times].sort((a, b) => a - b)[Math.min(times.length - 1, Math.floor(p * times.length))];
    const base = q(rows[0].times, 0.5);
    console.log(`lowdb store, ${appends} awaited appends of ~300-byte records per row`);
    console.log("records before | median ms/append | p95 ms | vs 100 | load ms");
    for (const r of rows) {
      const med = q(r.times, 0.5);
      console.log(
        [
          String(r.records).padStart(14),
          med.toFixed(3).padStart(16),
          q(r.times, 0.95).toFixed(3).padStart(6),
          `${(med / base).toFixed(2)}x`.padStart(6),
          r.loadMs.toFixed(1).padStart(7),
        ].join(" | "),
      );
    }
  } finally {
    await rm(template, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main();
}
