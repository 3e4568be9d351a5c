/**
 * A data dir holding many empty conversations, created through the store API
 * (the files and index.json exactly as the server writes them), for the
 * curve-stored scenario. Also runs alone to time it:
 *   npx tsx bench/prefill-conversations.ts 100000
 */
import { rm } from "node:fs/promises";
import { pathToFileURL } from "node:url";
import { LowdbConversationStore } from "../src/store/lowdb-store.js";
import { tempDir } from "./processes.js";
import { conversationOf } from "./store-append.js";

/**
 * Creates in flight at once. The index is rewritten once per group of
 * creates queued together, so the wider the window, the fewer rewrites of a
 * file that grows to megabytes at 100k: at 64 a 100k prefill spent most of
 * its time re-stringifying index.json.
 */
const CREATES_IN_FLIGHT = 1000;

/**
 * Conversations `stored-<from>` … `stored-<to - 1>` added to a data dir that
 * holds the first `from` already (so the curve grows one dir instead of
 * filling three), each created a millisecond after the previous (so listing
 * has an order).
 */
export async function prefillConversations(dataDir: string, from: number, to: number): Promise<void> {
  const store = new LowdbConversationStore(dataDir);
  await store.open();
  try {
    if (store.count() !== from) throw new Error(`prefill: the data dir holds ${store.count()} conversations, expected ${from}`);
    const base = Date.UTC(2026, 0, 1);
    let next = from;
    const worker = async () => {
      while (next < to) {
        const n = next++;
        const createdAt = new Date(base + n).toISOString();
        await store.create({ ...conversationOf(`stored-${n}`), createdAt, updatedAt: createdAt });
      }
    };
    await Promise.all(Array.from({ length: Math.min(CREATES_IN_FLIGHT, to - from) }, worker));
    if (store.count() !== to) throw new Error(`prefill: ${store.count()} conversations stored, expected ${to}`);
  } finally {
    await store.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const count = Number(process.argv[2] ?? 10_000);
  const dir = await tempDir("prefill");
  const t0 = performance.now();
  await prefillConversations(dir, 0, count);
  console.log(`${count} conversations in ${((performance.now() - t0) / 1000).toFixed(1)} s (${dir})`);
  await rm(dir, { recursive: true, force: true });
}
