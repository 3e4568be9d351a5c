/**
 * The store's writer thread (src/store/file-writer.ts) costs a thread and
 * ~8 MB: an idle server's or a lone conversation's writes stay on the main
 * thread, and the worker starts once writes pile up (many turns ending
 * together). A writer of its own here: the process's one may already run.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { FileWriter } from "../../src/store/file-writer.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "agentwire-writer-start-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

it("writes one at a time, however spread out, stay on the main thread; many at once start the writer thread", async () => {
  const writer = new FileWriter();
  const file = (name: string) => [join(dir, name), join(dir, `.${name}.tmp`)] as const;
  for (let i = 0; i < 3; i++) {
    await writer.replace(...file("lone.json"), String(i));
    // Time enough for a worker started by the first write to be up.
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  expect(writer.offThread).toBe(0);
  expect(await readFile(join(dir, "lone.json"), "utf8")).toBe("2");

  for (let round = 0; round < 100 && writer.offThread === 0; round++) {
    await Promise.all(Array.from({ length: 40 }, (_, i) => writer.replace(...file(`f${i}.json`), String(round))));
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  expect(writer.offThread).toBeGreaterThan(0);
});
