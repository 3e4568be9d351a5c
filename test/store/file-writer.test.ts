/**
 * Store files are replaced on a writer thread (src/store/file-writer.ts):
 * the main thread only serializes and posts. What a write acknowledged is
 * on disk, writes of one path land in the order asked even when issued
 * together, a failed write rejects with the fs error (code, syscall) and
 * leaves no temp file, and a process whose writes are done exits.
 */
import { spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, expect, it } from "vitest";
import { AppendError, fileWriter, fileWriterReady, replaceFile, writesOffThread } from "../../src/store/file-writer.js";
import { LowdbConversationStore } from "../../src/store/lowdb-store.js";
import { REPO_ROOT } from "../harness/cli-process.js";
import { conversation, userMessage } from "../harness/store-records.js";

let dir: string;
beforeAll(async () => {
  expect(await fileWriterReady()).toBe(true);
});
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "agentwire-file-writer-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

it("a store's writes go through the writer thread, and what they acknowledged reads back after a reopen", async () => {
  const before = writesOffThread();
  // No journal: every append rewrites its files (with one, most are a line appended on this thread).
  const store = new LowdbConversationStore(dir, { journalBytes: 0 });
  await store.open();
  const handle = await store.create(conversation("c"));
  for (let i = 0; i < 5; i++) await handle.append(userMessage(i));
  await store.close();
  // Each append: its records file, then meta.json.
  expect(writesOffThread() - before).toBeGreaterThanOrEqual(10);

  const reopened = new LowdbConversationStore(dir);
  await reopened.open();
  expect((await (await reopened.get("c"))!.readRecords()).map((r) => r.id)).toEqual(["m0", "m1", "m2", "m3", "m4"]);
  await reopened.close();
});

it("writes of one path issued together land in the order asked, and leave no temp file", async () => {
  const path = join(dir, "f.json");
  const temp = join(dir, ".f.json.tmp");
  await Promise.all(Array.from({ length: 40 }, (_, i) => replaceFile(path, temp, `{"n":${i}}`)));
  expect(await readFile(path, "utf8")).toBe('{"n":39}');
  expect(await readdir(dir)).toEqual(["f.json"]);
});

it("a failed write rejects with the fs error's code and syscall, and leaves nothing behind", async () => {
  const missing = join(dir, "no-such-dir");
  const error = await replaceFile(join(missing, "f.json"), join(missing, ".f.json.tmp"), "{}").then(
    () => undefined,
    (e: unknown) => e as NodeJS.ErrnoException,
  );
  expect(error).toBeInstanceOf(Error);
  expect(error).toMatchObject({ code: "ENOENT", syscall: "open" });
  expect(await readdir(dir)).toEqual([]);
  // The writer goes on with the next write.
  await replaceFile(join(dir, "ok.json"), join(dir, ".ok.json.tmp"), "{}");
  expect(await readdir(dir)).toEqual(["ok.json"]);
});

it("a process whose store writes are done exits (the writer thread does not hold it)", async () => {
  const script = [
    `import { fileWriterReady, replaceFile } from "./src/store/file-writer.ts";`,
    `if (!(await fileWriterReady())) process.exit(3);`,
    `await replaceFile(${JSON.stringify(join(dir, "a.json"))}, ${JSON.stringify(join(dir, ".a.json.tmp"))}, "1");`,
  ].join("\n");
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { cwd: REPO_ROOT, stdio: "ignore" });
  const code = await new Promise<number | null>((resolve) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      resolve(null);
    }, 15_000);
    child.on("exit", (exitCode) => {
      clearTimeout(timer);
      resolve(exitCode);
    });
  });
  expect(code).toBe(0);
  expect(await readFile(join(dir, "a.json"), "utf8")).toBe("1");
}, 20_000);

it("appends lines through the writer thread, in the order asked; a failed one rejects with AppendError and leaves the file as it was", async () => {
  const writer = fileWriter();
  expect(await writer.ready()).toBe(true);
  const path = join(dir, "journal.jsonl");
  const before = writesOffThread();
  let bytes = 0;
  for (const line of ['{"n":1}\n', '{"n":2}\n', '{"n":3}\n']) {
    await writer.append(path, line, bytes);
    bytes += line.length;
  }
  expect(writesOffThread() - before).toBe(3);
  expect(await readFile(path, "utf8")).toBe('{"n":1}\n{"n":2}\n{"n":3}\n');

  const missing = join(dir, "no-such-dir", "journal.jsonl");
  const error = await writer.append(missing, "{}\n", 0)!.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppendError);
  expect((error as AppendError).failure).toMatchObject({ code: "ENOENT", syscall: "open" });
  expect((error as AppendError).cutOff).toBe(true);
  expect(await readFile(path, "utf8")).toBe('{"n":1}\n{"n":2}\n{"n":3}\n');
});
