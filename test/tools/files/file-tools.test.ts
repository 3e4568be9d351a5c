/**
 * The built-in file tools run directly against a real temporary workspace:
 * real files, real symlinks (to a file and to a directory outside, and one
 * that stays inside), real .gitignore files. Confinement is checked on what
 * is on disk afterwards, not only on the message.
 */
import { chmod, lstat, mkdir, mkdtemp, readdir, readFile, readlink, realpath, rm, stat, symlink, writeFile } from "node:fs/promises";
import { mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createFileTools } from "../../../src/tools/files/file-tools.js";
import { walkWorkspace } from "../../../src/tools/files/workspace-walk.js";
import { toolSpec } from "../../../src/tools/json-schema.js";
import type { Tool, ToolResult } from "../../../src/tools/tool.js";
import { argumentsNow, checkArguments } from "../../../src/tools/validate-arguments.js";

const tools = new Map(createFileTools().map((tool) => [tool.name, tool]));

let base: string;
let ws: string;
let outside: string;

beforeEach(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "agentwire-files-")));
  ws = join(base, "ws");
  outside = join(base, "outside");
  await mkdir(ws);
  await mkdir(outside);
  await writeFile(join(outside, "secret.txt"), "top secret\n");
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

/** Runs a tool the way the loop does: arguments validated first, then run with the workspace as cwd. */
async function call(name: string, args: Record<string, unknown>, options: { signal?: AbortSignal; timeoutMs?: number; cwd?: string } = {}): Promise<ToolResult> {
  const tool = tools.get(name) as Tool | undefined;
  if (!tool) throw new Error(`no tool ${name}`);
  // Checked at once where the data can (a call started and aborted at once must find the tool running).
  const checked = argumentsNow(tool.parameters, args) ?? (await checkArguments(tool.parameters, args));
  if (!checked.ok) throw new Error(`invalid arguments: ${JSON.stringify(checked.issues)}`);
  return tool.run(checked.value, {
    cwd: options.cwd ?? ws,
    conversationId: "c_test",
    signal: options.signal ?? new AbortController().signal,
    timeoutMs: options.timeoutMs ?? 10_000,
    onOutput: () => {},
  });
}

const put = async (rel: string, content: string | Buffer) => {
  await mkdir(join(ws, rel, ".."), { recursive: true });
  await writeFile(join(ws, rel), content);
};
const text = (rel: string) => readFile(join(ws, rel), "utf8");

describe("the tools as offered to the model", () => {
  it("have strict parameters with a description on every field, annotations and source builtin", async () => {
    expect([...tools.keys()]).toEqual(["read_file", "list_files", "search_files", "write_file", "edit_file"]);
    for (const tool of tools.values()) {
      const schema = toolSpec(tool).parameters as { additionalProperties: boolean; properties: Record<string, { description?: string }> };
      expect(schema.additionalProperties, tool.name).toBe(false);
      for (const [key, property] of Object.entries(schema.properties)) expect(property.description, `${tool.name}.${key}`).toBeTruthy();
      expect(tool.source).toBe("builtin");
      expect((await checkArguments(tool.parameters, { path: "x", bogus: 1 })).ok).toBe(false);
    }
    for (const name of ["read_file", "list_files", "search_files"]) expect(tools.get(name)!.annotations).toMatchObject({ readOnlyHint: true });
    expect(tools.get("write_file")!.annotations).toEqual({ readOnlyHint: false, destructiveHint: true });
    expect(tools.get("edit_file")!.annotations).toEqual({ readOnlyHint: false, destructiveHint: false });
  });
});

describe("confinement to the workspace", () => {
  it("refuses .. and absolute paths outside, before reading or writing anything", async () => {
    for (const path of ["../outside/secret.txt", join(outside, "secret.txt"), "sub/../../outside/secret.txt"]) {
      const read = await call("read_file", { path });
      expect(read.success).toBe(false);
      expect(read.output).toMatch(/outside the conversation's workspace/);
      expect(read.output).not.toContain("top secret");
    }
    const write = await call("write_file", { path: "../outside/new.txt", content: "x" });
    expect(write).toMatchObject({ success: false, output: expect.stringMatching(/outside the conversation's workspace/) });
    const edit = await call("edit_file", { path: join(outside, "secret.txt"), old_string: "top", new_string: "no" });
    expect(edit.success).toBe(false);
    expect(await readdir(outside)).toEqual(["secret.txt"]);
    expect(await readFile(join(outside, "secret.txt"), "utf8")).toBe("top secret\n");
    // Listing or searching outside is refused the same way.
    expect((await call("list_files", { path: ".." })).output).toMatch(/outside the conversation's workspace/);
    expect((await call("search_files", { pattern: "secret", path: outside })).output).toMatch(/outside the conversation's workspace/);
    // An absolute path inside the workspace, and .. that stays inside, are fine.
    await put("a.txt", "alpha\n");
    expect((await call("read_file", { path: join(ws, "a.txt") })).output).toContain("alpha");
    expect((await call("read_file", { path: "sub/../a.txt" })).output).toContain("alpha");
  });

  it("refuses a real symlink to a file outside: no read, no write, no edit, the target untouched", async () => {
    await symlink(join(outside, "secret.txt"), join(ws, "link.txt"));
    const read = await call("read_file", { path: "link.txt" });
    expect(read).toMatchObject({ success: false, output: expect.stringMatching(/leads outside the conversation's workspace \(through a symlink\)/) });
    expect(read.output).not.toContain("top secret");
    expect((await call("write_file", { path: "link.txt", content: "overwritten" })).success).toBe(false);
    expect((await call("edit_file", { path: "link.txt", old_string: "top", new_string: "no" })).success).toBe(false);
    expect(await readFile(join(outside, "secret.txt"), "utf8")).toBe("top secret\n");
    expect((await lstat(join(ws, "link.txt"))).isSymbolicLink()).toBe(true);
    // Search and listing do not follow it either.
    expect((await call("search_files", { pattern: "secret" })).output).not.toContain("top secret");
  });

  it("refuses a real symlink to a directory outside: nothing read, listed, searched or created through it", async () => {
    await symlink(outside, join(ws, "out"));
    expect((await call("read_file", { path: "out/secret.txt" })).output).toMatch(/through a symlink/);
    const write = await call("write_file", { path: "out/new.txt", content: "planted" });
    expect(write).toMatchObject({ success: false, output: expect.stringMatching(/through a symlink/) });
    expect((await call("write_file", { path: "out/deeper/new.txt", content: "planted" })).success).toBe(false);
    expect(await readdir(outside)).toEqual(["secret.txt"]);
    expect((await call("list_files", { path: "out" })).output).toMatch(/through a symlink/);
    expect((await call("search_files", { pattern: "secret", path: "out" })).output).toMatch(/through a symlink/);
    // From the root, the link is listed but not entered.
    const listing = await call("list_files", {});
    expect(listing.output.split("\n")).toEqual(["out"]);
    const search = await call("search_files", { pattern: "top" });
    expect(search.output).toMatch(/no matches/);
  });

  it("refuses a dangling symlink that points outside: a write would create the file out there", async () => {
    await symlink(join(outside, "planted.txt"), join(ws, "dangling.txt"));
    const write = await call("write_file", { path: "dangling.txt", content: "planted" });
    expect(write).toMatchObject({ success: false, output: expect.stringMatching(/symlink/) });
    expect(await readdir(outside)).toEqual(["secret.txt"]);
  });

  it("follows a symlink that stays inside: reads the target, writes the target and keeps the link", async () => {
    await put("real/target.txt", "inside\n");
    await symlink(join(ws, "real"), join(ws, "alias"));
    await symlink("real/target.txt", join(ws, "link.txt"));
    expect((await call("read_file", { path: "alias/target.txt" })).output).toContain("inside");
    expect((await call("read_file", { path: "link.txt" })).output).toContain("inside");
    const edit = await call("edit_file", { path: "link.txt", old_string: "inside", new_string: "changed" });
    expect(edit.success).toBe(true);
    expect(await text("real/target.txt")).toBe("changed\n");
    expect(await readlink(join(ws, "link.txt"))).toBe("real/target.txt");
    expect((await call("write_file", { path: "alias/new.txt", content: "via alias\n" })).success).toBe(true);
    expect(await text("real/new.txt")).toBe("via alias\n");
  });

  it("works when the workspace itself is reached through a symlink", async () => {
    await put("a.txt", "alpha\n");
    const viaLink = join(base, "ws-link");
    await symlink(ws, viaLink);
    expect((await call("read_file", { path: "a.txt" }, { cwd: viaLink })).output).toContain("alpha");
    expect((await call("read_file", { path: join(viaLink, "a.txt") }, { cwd: viaLink })).output).toContain("alpha");
    expect((await call("read_file", { path: "../outside/secret.txt" }, { cwd: viaLink })).success).toBe(false);
  });
});

describe("read_file", () => {
  it("returns numbered lines, a line range, and says where to read on", async () => {
    await put("five.txt", "one\ntwo\r\nthree\nfour\nfive\n");
    expect((await call("read_file", { path: "five.txt" })).output).toBe(
      ["     1\tone", "     2\ttwo", "     3\tthree", "     4\tfour", "     5\tfive"].join("\n"),
    );
    const window = await call("read_file", { path: "five.txt", offset: 2, limit: 2 });
    expect(window.output).toBe("     2\ttwo\n     3\tthree\n[showing lines 2-3; five.txt continues: call read_file with offset 4 to read on]");
    const past = await call("read_file", { path: "five.txt", offset: 9 });
    expect(past).toMatchObject({ success: false, output: expect.stringContaining("past the end") });
    await put("empty.txt", "");
    expect((await call("read_file", { path: "empty.txt" })).output).toMatch(/empty/);
    expect((await call("read_file", { path: "missing.txt" })).output).toBe('Error: "missing.txt" does not exist');
    expect((await call("read_file", { path: "." })).output).toMatch(/is a directory/);
  });

  it("stops at 2000 lines, at 256 KiB, and cuts very long lines, each with a note", async () => {
    await put("long.txt", Array.from({ length: 2500 }, (_, i) => `line ${i + 1}`).join("\n"));
    const first = await call("read_file", { path: "long.txt" });
    const lines = first.output.split("\n");
    expect(lines).toHaveLength(2001);
    expect(lines[1999]).toBe("  2000\tline 2000");
    expect(lines[2000]).toContain("offset 2001");
    const rest = await call("read_file", { path: "long.txt", offset: 2001 });
    expect(rest.output.split("\n")).toHaveLength(500);
    expect(rest.output.endsWith("  2500\tline 2500")).toBe(true);

    await put("wide.txt", Array.from({ length: 400 }, () => "x".repeat(1000)).join("\n"));
    const wide = await call("read_file", { path: "wide.txt" });
    expect(Buffer.byteLength(wide.output)).toBeLessThan(256 * 1024 + 200);
    expect(wide.output).toMatch(/\[output cut at 256 KiB after line (\d+); call read_file with offset \d+ to read on\]$/);

    await put("minified.js", "y".repeat(50_000) + "\nshort\n");
    const minified = await call("read_file", { path: "minified.js" });
    expect(minified.output).toContain("[line cut: 50000 characters]");
    expect(minified.output).toContain("     2\tshort");
    expect(minified.output.length).toBeLessThan(3000);
  });

  it("refuses binary files (NUL bytes, invalid UTF-8) with a message instead of their bytes", async () => {
    await put("image.png", Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d]));
    await put("latin1.txt", Buffer.from("caf\xe9 cr\xe8me\n", "latin1"));
    for (const path of ["image.png", "latin1.txt"]) {
      const result = await call("read_file", { path });
      expect(result).toMatchObject({ success: false, output: expect.stringMatching(/binary file/) });
    }
    expect((await call("edit_file", { path: "image.png", old_string: "PNG", new_string: "GIF" })).output).toMatch(/binary/);
    // A multi-byte character cut by the 8 KiB sniff window is still text.
    await put("utf8.txt", `${"a".repeat(99)}\n`.repeat(81) + "a".repeat(91) + "é and more\n");
    expect((await call("read_file", { path: "utf8.txt" })).output).toContain("é and more");
  });
});

describe("edit_file", () => {
  it("replaces a unique string, reports a unified diff in the text and in `diff`, and keeps the file mode", async () => {
    await put("script.sh", "#!/bin/sh\necho old\nexit 0\n");
    await chmod(join(ws, "script.sh"), 0o750);
    const result = await call("edit_file", { path: "script.sh", old_string: "echo old", new_string: "echo $& new" });
    expect(result.success).toBe(true);
    expect(await text("script.sh")).toBe("#!/bin/sh\necho $& new\nexit 0\n");
    expect(result.diff).toBe("--- a/script.sh\n+++ b/script.sh\n@@ -1,3 +1,3 @@\n #!/bin/sh\n-echo old\n+echo $& new\n exit 0\n");
    expect(result.output).toContain("replaced 1 occurrence (+1 -1 lines)");
    expect(result.output).toContain(result.diff);
    expect((await stat(join(ws, "script.sh"))).mode & 0o777).toBe(0o750);
    expect(await readdir(ws)).toEqual(["script.sh"]); // no temporary file left behind
  });

  it("fails without writing when old_string is missing or not unique; replace_all replaces every one", async () => {
    await put("a.txt", "x = 1\nx = 1\n");
    const missing = await call("edit_file", { path: "a.txt", old_string: "y = 2", new_string: "y = 3" });
    expect(missing).toMatchObject({ success: false, output: expect.stringMatching(/old_string was not found in a\.txt/) });
    const twice = await call("edit_file", { path: "a.txt", old_string: "x = 1", new_string: "x = 2" });
    expect(twice).toMatchObject({ success: false, output: expect.stringMatching(/occurs 2 times in a\.txt.*replace_all/) });
    expect(twice.diff).toBeUndefined();
    expect(await text("a.txt")).toBe("x = 1\nx = 1\n");
    const all = await call("edit_file", { path: "a.txt", old_string: "x = 1", new_string: "x = 2", replace_all: true });
    expect(all.output).toContain("replaced 2 occurrences");
    expect(await text("a.txt")).toBe("x = 2\nx = 2\n");
    expect((await call("edit_file", { path: "nope.txt", old_string: "a", new_string: "b" })).output).toMatch(/does not exist; use write_file/);
    expect((await call("edit_file", { path: "a.txt", old_string: "x", new_string: "x" })).output).toMatch(/the same/);
  });

  it("edits a CRLF file with \\n in old_string and keeps its line ends", async () => {
    await put("win.txt", "one\r\ntwo\r\nthree\r\n");
    const result = await call("edit_file", { path: "win.txt", old_string: "one\ntwo", new_string: "one\n2" });
    expect(result.success).toBe(true);
    expect(await text("win.txt")).toBe("one\r\n2\r\nthree\r\n");
  });
});

describe("write_file", () => {
  it("creates a file with its directories, overwrites with a diff, keeps the mode, leaves no temporary file", async () => {
    const created = await call("write_file", { path: "deep/er/new.txt", content: "hello\n" });
    expect(created).toMatchObject({ success: true, diff: "--- /dev/null\n+++ b/deep/er/new.txt\n@@ -0,0 +1,1 @@\n+hello\n" });
    expect(await text("deep/er/new.txt")).toBe("hello\n");
    await chmod(join(ws, "deep/er/new.txt"), 0o600);
    const replaced = await call("write_file", { path: "deep/er/new.txt", content: "hello\nworld\n" });
    expect(replaced.diff).toContain("+world");
    expect(replaced.output).toContain("(+1 -0 lines)");
    expect((await stat(join(ws, "deep/er/new.txt"))).mode & 0o777).toBe(0o600);
    const same = await call("write_file", { path: "deep/er/new.txt", content: "hello\nworld\n" });
    expect(same.output).toMatch(/nothing was written/);
    expect(await readdir(join(ws, "deep/er"))).toEqual(["new.txt"]);
    expect((await call("write_file", { path: "deep", content: "x" })).output).toMatch(/is a directory/);
  });

  it("caps a huge diff at 64 KiB with a note", async () => {
    const big = Array.from({ length: 4000 }, (_, i) => `row ${i} of the rows in this big file`).join("\n");
    const result = await call("write_file", { path: "big.txt", content: big });
    expect(Buffer.byteLength(result.diff!)).toBeLessThan(64 * 1024 + 200);
    expect(result.diff).toMatch(/\[… diff cut: \d+ more bytes/);
    expect(await text("big.txt")).toBe(big);
  });

  it("reports a write interrupted while its diff is computed as done, without the diff (the diff runs in a worker)", async () => {
    // Every line differs: jsdiff works up to its own one-second limit on this, off the main thread.
    const old = Array.from({ length: 40_000 }, (_, i) => `old line ${i}`).join("\n");
    const now = Array.from({ length: 40_000 }, (_, i) => `new line ${i}`).join("\n");
    await put("rewritten.txt", old);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const started = Date.now();
    const result = await call("write_file", { path: "rewritten.txt", content: now }, { signal: controller.signal });
    expect(Date.now() - started).toBeLessThan(900);
    expect(result).toEqual({
      success: true,
      output: "Wrote rewritten.txt\n\n[no diff of rewritten.txt: the call was stopped before it was computed]\n",
      diff: "[no diff of rewritten.txt: the call was stopped before it was computed]\n",
      change: { path: "rewritten.txt", before: old, after: now },
    });
    expect(await text("rewritten.txt")).toBe(now);
  });

  it("writes nothing when interrupted before it starts", async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await call("write_file", { path: "x.txt", content: "x" }, { signal: controller.signal });
    expect(result).toMatchObject({ success: false, output: expect.stringMatching(/interrupted/) });
    expect(await readdir(ws)).toEqual([]);
  });
});

describe("list_files and search_files", () => {
  async function gitTree() {
    await put(".gitignore", "*.log\nbuild/\n!keep.log\n");
    await put(".git/config", "needle in git\n");
    await put("app.log", "needle in log\n");
    await put("keep.log", "needle kept\n");
    await put("build/out.js", "needle built\n");
    await put("src/main.ts", "const needle = 1;\nconst NEEDLE = 2;\n");
    await put("src/gen/.gitignore", "*.gen.ts\n");
    await put("src/gen/types.gen.ts", "needle generated\n");
    await put("src/gen/index.ts", "export {}; // needle\n");
    await put("docs/readme.md", "about the needle\n");
  }

  it("list_files respects root and nested .gitignore (with negation), skips .git, and filters by glob", async () => {
    await gitTree();
    expect((await call("list_files", {})).output.split("\n")).toEqual([
      ".gitignore",
      "docs/",
      "docs/readme.md",
      "keep.log",
      "src/",
      "src/gen/",
      "src/gen/.gitignore",
      "src/gen/index.ts",
      "src/main.ts",
    ]);
    expect((await call("list_files", { glob: "**/*.ts" })).output).toBe("src/gen/index.ts\nsrc/main.ts");
    // A subdirectory still obeys the rules of the .gitignore files above it.
    expect((await call("list_files", { path: "src", glob: "*.ts" })).output).toBe("src/main.ts");
    expect((await call("list_files", { path: "src/gen" })).output).toBe("src/gen/.gitignore\nsrc/gen/index.ts");
    expect((await call("list_files", { glob: "*.none" })).output).toMatch(/no files under \. match/);
    expect((await call("list_files", { path: "src/main.ts" })).output).toMatch(/not a directory/);
  });

  it("search_files gives file:line:text, skips ignored and binary files, and filters by path, glob and case", async () => {
    await gitTree();
    await put("blob.bin", Buffer.concat([Buffer.from("needle"), Buffer.from([0, 1, 2])]));
    const result = await call("search_files", { pattern: "needle" });
    expect(result.output.split("\n")).toEqual([
      "docs/readme.md:1:about the needle",
      "keep.log:1:needle kept",
      "src/gen/index.ts:1:export {}; // needle",
      "src/main.ts:1:const needle = 1;",
      "[1 binary file skipped]",
    ]);
    const nocase = await call("search_files", { pattern: "needle\\b", path: "src", glob: "*.ts", case_insensitive: true });
    expect(nocase.output).toBe("src/main.ts:1:const needle = 1;\nsrc/main.ts:2:const NEEDLE = 2;");
    expect((await call("search_files", { pattern: "NEEDLE", path: "src/main.ts" })).output).toBe("src/main.ts:2:const NEEDLE = 2;");
    expect((await call("search_files", { pattern: "absent" })).output).toMatch(/no matches in \d+ files searched/);
  });

  it("search_files refuses an invalid regex naming the pattern, and stops a catastrophic one", async () => {
    const invalid = await call("search_files", { pattern: "foo(bar" });
    expect(invalid).toMatchObject({ success: false, output: expect.stringContaining('the pattern "foo(bar" is not a valid regular expression') });
    await put("evil.txt", `${"a".repeat(40)}!\n`);
    const started = Date.now();
    // The call's regex budget is half its time limit when that is under 10 s: 1000 ms here.
    const slow = await call("search_files", { pattern: "^(a+)+$" }, { timeoutMs: 2000 });
    expect(slow).toMatchObject({
      success: false,
      output: expect.stringMatching(/^\[search cut short: the pattern used up the call's 1000 ms time budget while matching evil\.txt; 0 files searched before it/),
    });
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it("search_files has one regex budget for the call: it keeps what it found before the file where the budget ran out", async () => {
    await put("budget/a.txt", "aaa match\n");
    await put("budget/b.txt", "also aaa\n");
    await put("budget/c.txt", `${"a".repeat(40)}!\n`);
    await put("budget/d.txt", "aaa never reached\n");
    const started = Date.now();
    const result = await call("search_files", { pattern: "^(a+)+$|aaa", path: "budget" }, { timeoutMs: 1000 });
    expect(Date.now() - started).toBeLessThan(2500);
    // The walk's order is the directory's, sorted: a, b, then c stops it.
    expect(result).toEqual({
      success: true,
      output: [
        "budget/a.txt:1:aaa match",
        "budget/b.txt:1:also aaa",
        "[search cut short: the pattern used up the call's 500 ms time budget while matching budget/c.txt; 2 files searched before it, the files after it not searched. " +
          "Nested repetition such as (a+)+ can backtrack without end: simplify the pattern, or narrow the search with path or glob]",
      ].join("\n"),
    });
  });

  it("caps search at 200 matches and long lines, and listings at 1000 entries, each with a note", async () => {
    await put("many.txt", Array.from({ length: 250 }, (_, i) => `hit ${i} ${"z".repeat(i === 0 ? 1000 : 0)}`).join("\n"));
    const search = await call("search_files", { pattern: "hit" });
    const lines = search.output.split("\n");
    expect(lines).toHaveLength(201);
    expect(lines[0]).toMatch(/^many\.txt:1:hit 0 z+… \[line cut: 1006 characters\]$/);
    expect(lines[0]!.length).toBeLessThan(400);
    expect(lines[199]).toMatch(/^many\.txt:200:hit 199/);
    expect(lines[200]).toMatch(/stopped at 200 matches/);

    await mkdir(join(ws, "lots"));
    // One by one and synchronously: a thousand concurrent creations queue on libuv's pool and take ten times longer.
    for (let i = 0; i < 1005; i++) writeFileSync(join(ws, "lots", `f${String(i).padStart(4, "0")}`), "");
    const listing = (await call("list_files", { path: "lots" })).output.split("\n");
    expect(listing).toHaveLength(1001);
    expect(listing[999]).toBe("lots/f0999");
    expect(listing[1000]).toMatch(/listing stopped at 1000 entries/);
  });

  it("stops on interrupt and on the time limit, and the walk itself checks the signal between entries", async () => {
    for (let i = 0; i < 300; i++) {
      if (i < 10) mkdirSync(join(ws, "tree", `d${i}`), { recursive: true });
      writeFileSync(join(ws, "tree", `d${i % 10}`, `f${i}.txt`), `line ${i}\n`.repeat(50));
    }
    const controller = new AbortController();
    const running = call("search_files", { pattern: "line" }, { signal: controller.signal });
    controller.abort();
    expect(await running).toEqual({ success: false, output: "[interrupted]" });
    expect(await call("search_files", { pattern: "nomatch" }, { timeoutMs: 1 })).toEqual({ success: false, output: "[timed out after 1 ms]" });

    const walk = new AbortController();
    const seen: string[] = [];
    await expect(
      (async () => {
        for await (const entry of walkWorkspace(ws, ws, walk.signal)) {
          seen.push(entry.display);
          if (seen.length === 3) walk.abort(new Error("stop"));
        }
      })(),
    ).rejects.toThrow("stop");
    expect(seen).toHaveLength(3);
  });
});
