/**
 * A client cannot grow the server's memory without bound with valid
 * requests (issue: every 4 MB append grew RSS by 8 MB — the record stayed
 * loaded and its frame stayed in a replay log with no byte limit — until the
 * process died of heap exhaustion after about 2 GB).
 *
 * What the server keeps alive is measured directly: the V8 heap after a full
 * collection, before and after 100 MB of 512 KB appends spread over 50
 * subscribed conversations. With the replay and store-cache budgets at
 * 16 MiB each, what stays must fit in those budgets plus a small margin; the
 * old code kept every record and every frame (about 200 MB here). RSS of a
 * real process over 2 GB of appends is `npm run soak` (bench/soak-memory.ts,
 * figures in bench/RESULTS.md): RSS also carries garbage V8 has not collected
 * yet, so it is a figure to watch, not a number to assert in a unit test.
 */
import v8 from "node:v8";
import { runInNewContext } from "node:vm";
import { afterAll, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../harness/test-server.js";

const MiB = 1024 * 1024;
const BUDGET = 16 * MiB;
/** Replay + cache budgets, plus room for 50 loaded conversations and what is in flight. */
const CEILING = 2 * BUDGET + 24 * MiB;

v8.setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

function liveHeap(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

let server: TestServer | undefined;
afterAll(async () => {
  await server?.close();
});

it(`keeps what it holds under ${CEILING / MiB} MiB through 100 MB of 512 KB appends over 50 subscribed conversations`, async () => {
  server = await startTestServer({ limits: { replayBudgetBytes: BUDGET, storeCacheBytes: BUDGET } });
  const client = await server.connectInMemory();
  const ids: string[] = [];
  for (let i = 0; i < 50; i++) {
    const { id } = await client.conversation.create({});
    await client.conversation.subscribe({ conversationId: id });
    ids.push(id);
  }
  const message = "m".repeat(512 * 1024);
  const before = liveHeap();
  let peakGrowth = 0;
  for (let round = 0; round < 4; round++) {
    for (const conversationId of ids) await client.message.append({ conversationId, role: "user", content: message });
    peakGrowth = Math.max(peakGrowth, liveHeap() - before);
  }
  expect((await client.server.status()).conversationsStored).toBe(50);
  expect(peakGrowth, `live heap grew ${(peakGrowth / MiB).toFixed(1)} MiB`).toBeLessThan(CEILING);
}, 120_000);
