/**
 * write_file and edit_file's preview (Tool.preview), run directly against a
 * real temporary workspace: it changes nothing on disk, and its diff is the
 * text the tool's run then reports; a call that would fail says why in the
 * words the run fails with.
 */
import { mkdir, mkdtemp, readFile, realpath, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { FileChange } from "../../../protocol/index.js";
import { createFileTools } from "../../../src/tools/files/file-tools.js";
import type { Tool, ToolResult } from "../../../src/tools/tool.js";
import { checkArguments } from "../../../src/tools/validate-arguments.js";

const tools = new Map(createFileTools().map((tool) => [tool.name, tool]));

let base: string;
let ws: string;

beforeEach(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "agentwire-preview-")));
  ws = join(base, "ws");
  await mkdir(ws);
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

function tool(name: string): { tool: Tool; args: (a: Record<string, unknown>) => Promise<Record<string, unknown>> } {
  const found = tools.get(name) as Tool;
  return {
    tool: found,
    args: async (a) => {
      const checked = await checkArguments(found.parameters, a);
      if (!checked.ok) throw new Error(`invalid arguments: ${JSON.stringify(checked.issues)}`);
      return checked.value as Record<string, unknown>;
    },
  };
}

async function preview(name: string, a: Record<string, unknown>): Promise<FileChange[]> {
  const { tool: t, args } = tool(name);
  return t.preview!(await args(a), { cwd: ws, conversationId: "c_test", signal: new AbortController().signal });
}

async function run(name: string, a: Record<string, unknown>): Promise<ToolResult> {
  const { tool: t, args } = tool(name);
  return t.run(await args(a), { cwd: ws, conversationId: "c_test", signal: new AbortController().signal, timeoutMs: 10_000, onOutput: () => {} });
}

it("edit_file: the preview leaves the file as it was and its diff is the run's, CRLF line ends included", async () => {
  const before = "one\r\ntwo\r\nthree\r\n";
  await writeFile(join(ws, "crlf.txt"), before);
  const mtime = (await stat(join(ws, "crlf.txt"))).mtimeMs;
  const args = { path: "crlf.txt", old_string: "two\nthree", new_string: "2\n3" };
  const [change] = await preview("edit_file", args);
  expect(await readFile(join(ws, "crlf.txt"), "utf8")).toBe(before);
  expect((await stat(join(ws, "crlf.txt"))).mtimeMs).toBe(mtime);
  expect(change).toMatchObject({ path: "crlf.txt", kind: "modify" });
  expect(change!.problem).toBeUndefined();
  const result = await run("edit_file", args);
  expect(result.success).toBe(true);
  expect(result.diff).toBe(change!.diff);
});

it("write_file: an overwrite previews as modify with the run's diff; the same content previews as no change", async () => {
  await writeFile(join(ws, "a.txt"), "old\n");
  const [change] = await preview("write_file", { path: "a.txt", content: "new\n" });
  expect(change).toEqual({ path: "a.txt", kind: "modify", diff: "--- a/a.txt\n+++ b/a.txt\n@@ -1,1 +1,1 @@\n-old\n+new\n" });
  expect(await readFile(join(ws, "a.txt"), "utf8")).toBe("old\n");
  expect((await run("write_file", { path: "a.txt", content: "new\n" })).diff).toBe(change!.diff);
  expect(await preview("write_file", { path: "a.txt", content: "new\n" })).toEqual([]);
});

it("write_file over a binary file previews the note its run reports instead of a diff", async () => {
  await writeFile(join(ws, "blob.bin"), Buffer.from([0, 1, 2, 3]));
  const [change] = await preview("write_file", { path: "blob.bin", content: "text now\n" });
  expect(change).toMatchObject({ path: "blob.bin", kind: "modify", diff: expect.stringMatching(/^\[no diff: the old content of blob\.bin was not text/) });
  expect((await run("write_file", { path: "blob.bin", content: "text now\n" })).diff).toBe(change!.diff);
});

it("a call that would fail previews its problem, in the words its run fails with, and creates nothing", async () => {
  const cases: [string, Record<string, unknown>][] = [
    ["edit_file", { path: "missing.txt", old_string: "a", new_string: "b" }],
    ["edit_file", { path: "../outside.txt", old_string: "a", new_string: "b" }],
    ["write_file", { path: "../outside.txt", content: "x" }],
  ];
  for (const [name, args] of cases) {
    const [change] = await preview(name, args);
    expect(change).toMatchObject({ path: args.path, diff: "" });
    const result = await run(name, args);
    expect(result.success).toBe(false);
    expect(result.output).toBe(`Error: ${change!.problem}`);
  }
  await expect(stat(join(base, "outside.txt"))).rejects.toMatchObject({ code: "ENOENT" });
});
