/**
 * The store's writer thread (src/store/file-writer.ts) costs a thread and
 * some memory: an idle server's or a lone conversation's writes stay on the
 * main thread, and the worker starts once writes pile up (many turns ending
 * together). Its own file: the writer is one per process (module).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { writesOffThread } from "../../src/store/file-writer.js";
import { LowdbConversationStore } from "../../src/store/lowdb-store.js";
import { conversation, userMessage } from "../harness/store-records.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "agentwire-writer-start-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

it("one conversation's writes, however spread out, stay on the main thread; many at once start the writer thread", async () => {
  const store = new LowdbConversationStore(dir);
  await store.open();
  const lone = await store.create(conversation("lone"));
  for (let i = 0; i < 3; i++) {
    await lone.append(userMessage(i));
    // Time enough for a worker started by the first write to be up.
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  expect(writesOffThread()).toBe(0);

  const many = await Promise.all(Array.from({ length: 40 }, (_, i) => store.create(conversation(`c${i}`))));
  for (let round = 0; round < 50 && writesOffThread() === 0; round++) {
    await Promise.all(many.map((handle) => handle.append(userMessage(round))));
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  expect(writesOffThread()).toBeGreaterThan(0);
  await store.close();
});
