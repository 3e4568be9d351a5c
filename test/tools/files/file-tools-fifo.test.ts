/**
 * Special files in the workspace, for real: FIFOs made with mkfifo, a
 * .gitignore linked to /dev/zero, a 100 MB .gitignore. Opening a FIFO for
 * reading waits for a writer, in one of libuv's four threads, with no time
 * limit: a few of them and every store write of the server (which uses the
 * same threads) hangs. Nothing may block on, or read without bound, a file
 * that is not a regular one.
 */
import { execFileSync } from "node:child_process";
import { closeSync, constants, openSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, realpath, rm, symlink, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createFileTools } from "../../../src/tools/files/file-tools.js";
import type { Tool, ToolResult } from "../../../src/tools/tool.js";
import { newConversation, useAgentFixture } from "../../harness/agent-fixture.js";
import { rpcError } from "../../harness/rpc-errors.js";

const fx = useAgentFixture();
const tools = new Map(createFileTools().map((tool) => [tool.name, tool]));

let base: string;
let ws: string;
const fifos: string[] = [];

beforeAll(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "agentwire-fifo-")));
  ws = join(base, "ws");
  for (const dir of ["piped", "zero", "big"]) await mkdir(join(ws, dir), { recursive: true });
  for (const path of [join(ws, "fifo.txt"), join(ws, "piped", ".gitignore")]) {
    execFileSync("mkfifo", [path]);
    fifos.push(path);
  }
  await writeFile(join(ws, "piped", "kept.txt"), "kept\n");
  await symlink("/dev/zero", join(ws, "zero", ".gitignore"));
  await writeFile(join(ws, "zero", "kept.txt"), "kept\n");
  // 100 MB with no hole in its size (zeros, sparse on disk): read whole, it is 100 MB of I/O.
  await writeFile(join(ws, "big", ".gitignore"), "");
  await truncate(join(ws, "big", ".gitignore"), 100 * 1024 * 1024);
  await writeFile(join(ws, "big", "kept.txt"), "kept\n");
});

/**
 * A thread still blocked in open() of a FIFO (the code before the fix) is
 * released by a writer: opened here synchronously, on the main thread, as the
 * pool may have no thread left. Without a reader waiting this fails (ENXIO).
 */
function releaseBlockedReaders(): void {
  for (const fifo of fifos) {
    try {
      closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
    } catch {
      // No reader waiting: nothing to release.
    }
  }
}

afterEach(() => releaseBlockedReaders());

afterAll(async () => {
  releaseBlockedReaders();
  await rm(base, { recursive: true, force: true });
});

function call(name: string, args: Record<string, unknown>): Promise<ToolResult> {
  const tool = tools.get(name) as Tool;
  return tool.run(args, { cwd: ws, conversationId: "c_fifo", signal: new AbortController().signal, timeoutMs: 10_000, onOutput: () => {} });
}

/** `promise`, or a rejection naming `what` after `ms`: a hang fails the test instead of stalling it. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not complete within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** Bytes this process has read through read(2) and friends, from the kernel's own count. */
function bytesRead(): number {
  return Number(/rchar: (\d+)/.exec(readFileSync("/proc/self/io", "utf8"))![1]);
}

describe("special files in the workspace", () => {
  it("FIFOs met by six generations at once do not hold the server's storage: another conversation's append completes", { timeout: 20_000 }, async () => {
    // Five walks reading a FIFO .gitignore (one more than libuv has threads) and a read_file of a FIFO.
    const calls = [
      ...Array.from({ length: 3 }, () => ({ name: "list_files", args: { path: "piped" } })),
      ...Array.from({ length: 2 }, () => ({ name: "search_files", args: { pattern: "kept", path: "piped" } })),
      { name: "read_file", args: { path: "fifo.txt" } },
    ];
    // Each conversation gets its tool call offered first, so the fake's replies go where they are meant;
    // then all are confirmed at once and run together.
    const runs = [];
    for (const [i, c] of calls.entries()) {
      fx.fake.enqueue({ kind: "reply", toolCalls: [{ id: `call_${i}`, name: c.name, args: JSON.stringify(c.args) }] });
      const { id, events } = await newConversation(fx.client, { workspace: ws });
      const { generationId } = await fx.client.step({ conversationId: id });
      await events.waitForMethod("tool_pending");
      runs.push({ id, events, generationId, toolCallId: `call_${i}` });
    }
    fx.fake.enqueue(...calls.map(() => ({ kind: "reply" as const, text: ["Done."] })));
    const confirmed = runs.map((run) => fx.client.tool.confirm({ conversationId: run.id, toolCallId: run.toolCallId, action: "confirm" }));
    // Attachments of a FIFO, at the same time: refused as a parameter error, never waited on.
    const other = await fx.client.conversation.create({ workspace: ws });
    const attach = fx.client.message.append({ conversationId: other.id, role: "user", content: "see", attachments: [{ type: "file", path: "fifo.txt" }] });
    const error = await within(rpcError(attach), 3000, "message.append with a FIFO attached");
    expect(error).toMatchObject({ code: -32602, message: expect.stringMatching(/attachments\[0\]\.path: "fifo\.txt" is not a regular file \(a FIFO\)/) });

    // The store is free: a plain write of another conversation completes at once.
    const append = fx.client.message.append({ conversationId: other.id, role: "user", content: "still writable?" });
    await within(append, 3000, "message.append while the tools ran");

    await within(Promise.all(confirmed), 5000, "tool.confirm");
    for (const run of runs) expect((await within(run.events.waitForEnd(run.generationId, 10_000), 10_000, "a generation")).method).toBe("generation_complete");
    const results = runs.map((run) => run.events.of("tool_completed")[0]?.record ?? run.events.of("tool_failed")[0]?.record);
    // The walks list what is there (the FIFO .gitignore is a name, not rules); read_file refuses the FIFO.
    for (const result of results.slice(0, 3)) expect(result).toMatchObject({ success: true, result: "piped/.gitignore\npiped/kept.txt" });
    for (const result of results.slice(3, 5)) expect(result).toMatchObject({ success: true, result: "piped/kept.txt:1:kept" });
    expect(results[5]).toMatchObject({ success: false, result: expect.stringMatching(/"fifo\.txt" is not a regular file \(a FIFO\)/) });
  });

  it("a .gitignore linked to /dev/zero, or of 100 MB, is read to a bound (not followed; at most 64 KiB)", { timeout: 20_000 }, async () => {
    const before = bytesRead();
    const zero = await within(call("list_files", { path: "zero" }), 5000, "list_files with .gitignore -> /dev/zero");
    const big = await within(call("list_files", { path: "big" }), 5000, "list_files with a 100 MB .gitignore");
    const search = await within(call("search_files", { pattern: "kept" }), 5000, "search_files over both");
    const read = bytesRead() - before;
    expect(zero).toEqual({ success: true, output: "zero/.gitignore\nzero/kept.txt" });
    expect(big).toEqual({ success: true, output: "big/.gitignore\nbig/kept.txt" });
    expect(search.output).toContain("zero/kept.txt:1:kept");
    expect(search.output).toContain("big/kept.txt:1:kept");
    // Three walks over both directories: a few hundred KiB at most, not 100 MB (or 500 MB of zeros).
    expect(read).toBeLessThan(4 * 1024 * 1024);
  });

  it("read_file, write_file and edit_file refuse a FIFO at once, and write nothing to it", async () => {
    for (const [name, args] of [
      ["read_file", { path: "fifo.txt" }],
      ["write_file", { path: "fifo.txt", content: "x" }],
      ["edit_file", { path: "fifo.txt", old_string: "a", new_string: "b" }],
    ] as const) {
      const result = await within(call(name, args), 3000, name);
      expect(result, name).toEqual({ success: false, output: 'Error: "fifo.txt" is not a regular file (a FIFO); only regular files are read or written' });
    }
  });
});
