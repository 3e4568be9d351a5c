/**
 * The data dir holds conversations and MCP server definitions with their env and headers: the
 * folders agentwire makes for it are the user's alone (0700); one that exists keeps its mode.
 */
import { mkdir, mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { LowdbConversationStore } from "../../src/store/lowdb-store.js";

let root: string | undefined;
afterEach(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

it("a data dir the store makes, and the folders it makes in it, are private to the user (0700); an existing one keeps its mode", async () => {
  root = await mkdtemp(join(tmpdir(), "agentwire-data-mode-"));
  const made = join(root, "a", "b", "data");
  const store = new LowdbConversationStore(made);
  await store.open();
  await store.close();
  for (const dir of [join(root, "a"), join(root, "a", "b"), made, join(made, "conversations")]) {
    expect(((await stat(dir)).mode & 0o777).toString(8), dir).toBe("700");
  }

  const shared = join(root, "shared");
  await mkdir(shared, { mode: 0o755 });
  const second = new LowdbConversationStore(shared);
  await second.open();
  await second.close();
  expect(((await stat(shared)).mode & 0o777).toString(8)).toBe("755");
});
