/**
 * One data dir per test for the store suites, and the lowdb stores opened on
 * it, all closed (and the dir removed) after the test. `make`/`dispose` put
 * the dir somewhere special (a disk the failure tests can break).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import { LowdbConversationStore, type LowdbStoreOptions } from "../../src/store/lowdb-store.js";

export interface StoreDir {
  /** The current test's data dir. */
  readonly path: string;
  /** A lowdb store opened on it, closed after the test unless closed before. */
  open(options?: LowdbStoreOptions): Promise<LowdbConversationStore>;
  close(store: LowdbConversationStore): Promise<void>;
  /** The folder of one conversation. */
  conversation(id: string): string;
}

export function useStoreDir(
  prefix: string,
  place: { make?: () => Promise<string>; dispose?: () => Promise<void> } = {},
): StoreDir {
  let path = "";
  const opened: LowdbConversationStore[] = [];
  beforeEach(async () => {
    path = place.make ? await place.make() : await mkdtemp(join(tmpdir(), `agentwire-${prefix}-`));
  });
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close().catch(() => undefined);
    if (place.dispose) await place.dispose();
    else await rm(path, { recursive: true, force: true });
  });
  return {
    get path() {
      return path;
    },
    async open(options) {
      const store = new LowdbConversationStore(path, options);
      await store.open();
      opened.push(store);
      return store;
    },
    async close(store) {
      opened.splice(opened.indexOf(store), 1);
      await store.close();
    },
    conversation: (id) => join(path, "conversations", id),
  };
}
