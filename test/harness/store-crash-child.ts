/**
 * Child process for the crash test: appends records m0, m1, … to conversation
 * "c" in bursts, each with a seq reservation up to its last record's number,
 * printing `acked N off-thread W` once the first N and the reservation are
 * durable (W: writes done by the store's writer thread so far), until it is
 * killed.
 *
 *     node --import tsx test/harness/store-crash-child.ts <dataDir> [segmentSize, default 7]
 */
import { fileWriterReady, writesOffThread } from "../../src/store/file-writer.js";
import { LowdbConversationStore } from "../../src/store/lowdb-store.js";
import { conversation, userMessage } from "./store-records.js";

// Every write through the store's writer thread: what it acknowledged is what must survive the kill.
if (!(await fileWriterReady())) throw new Error("no store writer thread");
const store = new LowdbConversationStore(process.argv[2]!, { segmentSize: Number(process.argv[3] ?? 7) });
await store.open();
const handle = (await store.get("c")) ?? (await store.create(conversation("c")));
for (let next = handle.recordCount; ; ) {
  const burst = Array.from({ length: 10 }, (_, i) => handle.append(userMessage(next + i)));
  await Promise.all([...burst, handle.reserveSeq(next + burst.length)]);
  next += burst.length;
  process.stdout.write(`acked ${next} off-thread ${writesOffThread()}\n`);
}
