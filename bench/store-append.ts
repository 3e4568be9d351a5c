/**
 * Per-append cost of the lowdb store as a conversation grows.
 * Run: npx tsx bench/store-append.ts
 *
 * Each row prefills a conversation by writing its segment files directly,
 * reopens the store, loads the conversation, then times awaited appends.
 * The cost of an append depends on how full the last segment is (it is
 * rewritten whole), not on the conversation's length: rows marked "last
 * segment nearly full" show the worst case at each size.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import type { Conversation, MessageRecord } from "../protocol/index.js";
import { LowdbConversationStore, segmentFileName } from "../src/store/lowdb-store.js";

const SEGMENT_SIZE = 1000;
const APPENDS = 50;
const SIZES = [100, 1_000, 10_000, 100_000, 950, 99_950];

function record(n: number): MessageRecord {
  return {
    type: "message",
    id: `r${n}`,
    role: n % 2 ? "assistant" : "user",
    content: `Message number ${n}: `.padEnd(240, "lorem ipsum dolor sit amet "),
    timestamp: new Date(Date.UTC(2026, 0, 1) + n).toISOString(),
  };
}

const conversation: Conversation = {
  id: "bench",
  title: "bench",
  createdAt: "2026-01-01T00:00:00.000Z",
  updatedAt: "2026-01-01T00:00:00.000Z",
  model: null,
  system: null,
  workspace: null,
  settings: { toolHistoryRounds: 8, maxIterations: 20, toolTimeoutMs: 120_000 },
  recordCount: 0,
};

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

async function measure(prefill: number) {
  const dataDir = await mkdtemp(join(tmpdir(), "agentwire-bench-"));
  try {
    const setup = new LowdbConversationStore(dataDir, { segmentSize: SEGMENT_SIZE });
    await setup.open();
    await setup.create(conversation);
    await setup.close();
    const dir = join(dataDir, "conversations", conversation.id);
    for (let start = 0, segment = 0; start < prefill; start += SEGMENT_SIZE, segment++) {
      const records = [];
      for (let n = start; n < Math.min(prefill, start + SEGMENT_SIZE); n++) records.push(record(n));
      await writeFile(join(dir, segmentFileName(segment)), JSON.stringify({ records }, null, 2));
    }

    const store = new LowdbConversationStore(dataDir, { segmentSize: SEGMENT_SIZE });
    await store.open();
    const loadStart = performance.now();
    const handle = (await store.get(conversation.id))!;
    const loadMs = performance.now() - loadStart;
    if (handle.records.length !== prefill) throw new Error(`prefill: ${handle.records.length} != ${prefill}`);

    for (let n = 0; n < 5; n++) await handle.append(record(prefill + n)); // warm-up
    const times: number[] = [];
    for (let n = 5; n < 5 + APPENDS; n++) {
      const t = performance.now();
      await handle.append(record(prefill + n));
      times.push(performance.now() - t);
    }
    await store.close();
    times.sort((a, b) => a - b);
    const lastSegment = (prefill % SEGMENT_SIZE) + 5;
    return { prefill, lastSegment, median: quantile(times, 0.5), p95: quantile(times, 0.95), loadMs };
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

const rows = [];
for (const size of SIZES) rows.push(await measure(size));
const base = rows[0].median;
console.log(`lowdb store, segmentSize ${SEGMENT_SIZE}, ${APPENDS} awaited appends of ~300-byte records per row`);
console.log("records before | last segment at start | median ms/append | p95 ms | vs 100 | load ms");
for (const r of rows) {
  console.log(
    [
      String(r.prefill).padStart(14),
      String(r.lastSegment).padStart(21),
      r.median.toFixed(3).padStart(16),
      r.p95.toFixed(3).padStart(6),
      `${(r.median / base).toFixed(2)}x`.padStart(6),
      r.loadMs.toFixed(1).padStart(7),
    ].join(" | "),
  );
}
