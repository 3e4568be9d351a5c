/**
 * Child process for the EMFILE test: runs under a low `ulimit -n`, uses up
 * every file descriptor left, tries the store's mutations, gives the
 * descriptors back and reports (one JSON line on stdout) what the store did
 * and what it shows afterwards.
 *
 *     node --import tsx test/harness/store-emfile-child.ts <dataDir>
 */
import { closeSync, openSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { LowdbConversationStore } from "../../src/store/lowdb-store.js";
import { StoreFileError } from "../../src/store/store-file-error.js";
import { conversation, userMessage } from "./store-records.js";

const dataDir = process.argv[2]!;
const store = new LowdbConversationStore(dataDir);
await store.open();
await store.whenChecked();
const handle = await store.create(conversation("kept"));
await handle.append(userMessage(1));

function outcome(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => "resolved",
    (error: unknown) => `${error instanceof StoreFileError ? "StoreFileError" : "other"}: ${(error as Error).message}`,
  );
}

const held: number[] = [];
let exhaustedWith = "";
try {
  for (;;) held.push(openSync("/dev/null", "r"));
} catch (error) {
  exhaustedWith = (error as NodeJS.ErrnoException).code ?? String(error);
}
const create = await outcome(store.create(conversation("lost")));
const append = await outcome(handle.append(userMessage(2)));
const update = await outcome(handle.update({ ...handle.conversation, title: "lost" }));
for (const fd of held) closeSync(fd);

const after = {
  exhaustedWith,
  descriptorsHeld: held.length,
  create,
  append,
  update,
  recordCount: handle.recordCount,
  title: handle.conversation.title,
  records: (await handle.readRecords()).map((r) => r.id),
  listed: (await store.list({ limit: 10 })).data.map((c) => c.id),
  folders: (await readdir(join(dataDir, "conversations"))).sort(),
  files: (await readdir(join(dataDir, "conversations", "kept"))).sort(),
  createAgain: await outcome(store.create(conversation("lost"))),
  appendAgain: await outcome(handle.append(userMessage(3))),
};
await store.close();
process.stdout.write(`${JSON.stringify(after)}\n`);
