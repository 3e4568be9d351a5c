/**
 * Child process for the index crash test: creates conversations c0, c1, … in
 * groups of 8 at once (each group one line of the index's journal, or
 * index.json written whole when the journal is full), printing `acked N` once
 * the first N are durable, until it is killed.
 *
 *     node --import tsx test/harness/index-crash-child.ts <dataDir>
 */
import { LowdbConversationStore } from "../../src/store/lowdb-store.js";
import { conversation } from "./store-records.js";

const store = new LowdbConversationStore(process.argv[2]!);
await store.open();
for (let next = 0; ; next += 2) {
  await Promise.all(Array.from({ length: 2 }, (_, i) => store.create(conversation(`c${next + i}`, new Date(Date.UTC(2026, 0, 1) + next + i).toISOString()))));
  process.stdout.write(`acked ${next + 2}\n`);
}
