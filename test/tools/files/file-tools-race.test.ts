/**
 * The file tools against a real racing process: while a python3 child
 * exchanges the workspace's `sub/` directory with a symlink to a directory
 * outside (renameat2 RENAME_EXCHANGE, tens of thousands of times a second),
 * each tool runs 1,000 times on a path inside `sub/`. Whatever the timing,
 * nothing outside may be read, listed, searched, attached or written: the
 * check has to hold for the object actually opened, not for the path as it
 * was a moment before.
 */
import { execFileSync } from "node:child_process";
import { closeSync, constants, openSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MAX_FILE_ATTACHMENT_BYTES } from "../../../protocol/index.js";
import { readWorkspaceText } from "../../../src/attachments/workspace-file.js";
import { createLoadSkillTool } from "../../../src/skills/load-skill-tool.js";
import { createFileTools } from "../../../src/tools/files/file-tools.js";
import type { Tool, ToolResult } from "../../../src/tools/tool.js";
import { startPathSwapper } from "../../harness/path-swapper.js";

const TRIALS = 1000;
const OUTSIDE_TEXT = "OUTSIDE SECRET alpha beta\n";
const tools = new Map(createFileTools().map((tool) => [tool.name, tool]));

let base: string;
let ws: string;
let outside: string;

beforeEach(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "agentwire-race-")));
  ws = join(base, "ws");
  outside = join(base, "outside");
  await mkdir(join(ws, "sub"), { recursive: true });
  await mkdir(outside);
  await writeFile(join(ws, "sub", "file.txt"), "alpha\n");
  await writeFile(join(outside, "file.txt"), OUTSIDE_TEXT);
  await writeFile(join(outside, "outside-only.txt"), "OUTSIDE SECRET\n");
  // The swapper exchanges ws/sub (the real directory) with ws/swap (the link out).
  await symlink(outside, join(ws, "swap"));
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

function call(name: string, args: Record<string, unknown>): Promise<ToolResult> {
  const tool = (name === "load_skill" ? createLoadSkillTool({ env: {}, home: join(base, "home") }) : tools.get(name)) as Tool;
  return tool.run(args, { cwd: ws, conversationId: "c_race", signal: new AbortController().signal, timeoutMs: 10_000, onOutput: () => {} });
}

interface Tally {
  outside: number;
  succeeded: number;
}

/** Runs `trial` TRIALS times while the swapper races; `trial` says whether that run reached outside. */
async function race(label: string, trial: (i: number) => Promise<{ ok: boolean; outside: boolean }>): Promise<Tally> {
  const swapper = await startPathSwapper(join(ws, "sub"), join(ws, "swap"));
  const tally: Tally = { outside: 0, succeeded: 0 };
  const started = Date.now();
  try {
    for (let i = 0; i < TRIALS; i++) {
      const { ok, outside: out } = await trial(i);
      if (ok) tally.succeeded++;
      if (out) tally.outside++;
    }
  } finally {
    const swaps = await swapper.stop();
    console.log(`${label}: ${tally.outside}/${TRIALS} reached outside, ${tally.succeeded} succeeded, ${swaps} swaps, ${Date.now() - started} ms`);
    // The race was real: the swapper exchanged the paths far more often than the tool ran.
    expect(swaps).toBeGreaterThan(TRIALS);
  }
  return tally;
}

/** What a write may have left outside: a changed file, or new entries (temporary files, created files). */
async function outsideChanged(): Promise<{ overwritten: boolean; stray: string[] }> {
  const stray = (await readdir(outside)).filter((name) => name !== "file.txt" && name !== "outside-only.txt");
  const overwritten = (await readFile(join(outside, "file.txt"), "utf8")) !== OUTSIDE_TEXT;
  // Put the outside back, so the next trial's harm is counted on its own.
  for (const name of stray) await rm(join(outside, name), { recursive: true, force: true });
  if (overwritten) await writeFile(join(outside, "file.txt"), OUTSIDE_TEXT);
  return { overwritten, stray };
}

describe("a directory swapped for a symlink out, between check and use (1,000 trials per tool)", () => {
  it("read_file never returns the outside file", { timeout: 60_000 }, async () => {
    const tally = await race("read_file", async () => {
      const result = await call("read_file", { path: "sub/file.txt" });
      return { ok: result.success, outside: result.output.includes("OUTSIDE") };
    });
    expect(tally.outside).toBe(0);
  });

  it("search_files never searches the outside directory", { timeout: 60_000 }, async () => {
    const tally = await race("search_files", async (i) => {
      const result = await call("search_files", { pattern: "SECRET|alpha", ...(i % 2 === 0 ? { path: "sub" } : {}) });
      return { ok: result.success, outside: result.output.includes("OUTSIDE") };
    });
    expect(tally.outside).toBe(0);
  });

  it("list_files never lists the outside directory", { timeout: 60_000 }, async () => {
    const tally = await race("list_files", async (i) => {
      const result = await call("list_files", i % 2 === 0 ? { path: "sub" } : {});
      return { ok: result.success, outside: result.output.includes("outside-only") };
    });
    expect(tally.outside).toBe(0);
  });

  it("a file attachment never carries the outside file", { timeout: 60_000 }, async () => {
    const tally = await race("attachments", async (i) => {
      try {
        const text = await readWorkspaceText(ws, "sub/file.txt", i % 2 === 0 ? undefined : { start: 1, end: 1 }, MAX_FILE_ATTACHMENT_BYTES, {
          allowHardLinks: false,
        });
        return { ok: true, outside: text.content.includes("OUTSIDE") };
      } catch {
        return { ok: false, outside: false };
      }
    });
    expect(tally.outside).toBe(0);
  });

  it("write_file never overwrites or creates a file outside, and leaves no temporary file there", { timeout: 60_000 }, async () => {
    let overwritten = 0;
    let stray = 0;
    const tally = await race("write_file", async (i) => {
      // Even trials replace an existing file, odd ones create a new one in a new directory.
      const path = i % 2 === 0 ? "sub/file.txt" : `sub/new-${i}/file.txt`;
      const result = await call("write_file", { path, content: `written ${i}\n` });
      const harm = await outsideChanged();
      if (harm.overwritten) overwritten++;
      stray += harm.stray.length;
      return { ok: result.success, outside: harm.overwritten || harm.stray.length > 0 };
    });
    console.log(`write_file: ${overwritten} overwrote the outside file, ${stray} files or directories left outside`);
    expect({ outside: tally.outside, overwritten, stray }).toEqual({ outside: 0, overwritten: 0, stray: 0 });
  });

  it("edit_file never edits the outside file, and leaves no temporary file there", { timeout: 60_000 }, async () => {
    let overwritten = 0;
    let stray = 0;
    const tally = await race("edit_file", async (i) => {
      const [from, to] = i % 2 === 0 ? ["alpha", "beta"] : ["beta", "alpha"];
      const result = await call("edit_file", { path: "sub/file.txt", old_string: from, new_string: to });
      const harm = await outsideChanged();
      if (harm.overwritten) overwritten++;
      stray += harm.stray.length;
      return { ok: result.success, outside: harm.overwritten || harm.stray.length > 0 };
    });
    console.log(`edit_file: ${overwritten} edited the outside file, ${stray} files left outside`);
    expect({ outside: tally.outside, overwritten, stray }).toEqual({ outside: 0, overwritten: 0, stray: 0 });
  });

  it("load_skill never reads a skill folder swapped for one outside", { timeout: 60_000 }, async () => {
    const skill = (name: string, body: string) => `---\nname: ${name}\ndescription: a skill\n---\n${body}\n`;
    await mkdir(join(ws, ".agentwire", "skills", "tidy"), { recursive: true });
    await writeFile(join(ws, ".agentwire", "skills", "tidy", "SKILL.md"), skill("tidy", "inside instructions"));
    await mkdir(join(outside, "tidy"));
    await writeFile(join(outside, "tidy", "SKILL.md"), skill("tidy", "OUTSIDE instructions"));
    await symlink(join(outside, "tidy"), join(ws, ".agentwire", "skills", "swap"));
    const swapper = await startPathSwapper(join(ws, ".agentwire", "skills", "tidy"), join(ws, ".agentwire", "skills", "swap"));
    let reached = 0;
    let loaded = 0;
    try {
      for (let i = 0; i < TRIALS; i++) {
        const result = await call("load_skill", { name: "tidy" });
        if (result.success) loaded++;
        if (result.output.includes("OUTSIDE")) reached++;
      }
    } finally {
      const swaps = await swapper.stop();
      console.log(`load_skill (folder swapped out): ${reached}/${TRIALS} reached outside, ${loaded} loaded, ${swaps} swaps`);
    }
    expect(reached).toBe(0);
  });

  it("load_skill never waits on a FIFO swapped in for SKILL.md", { timeout: 60_000 }, async () => {
    const dir = join(ws, ".agentwire", "skills", "tidy");
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, "SKILL.md"), "---\nname: tidy\ndescription: a skill\n---\ninstructions\n");
    execFileSync("mkfifo", [join(dir, "pipe")]);
    const swapper = await startPathSwapper(join(dir, "SKILL.md"), join(dir, "pipe"));
    let hung = 0;
    try {
      for (let i = 0; i < 300 && hung === 0; i++) {
        const result = call("load_skill", { name: "tidy" });
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<"hung">((resolve) => (timer = setTimeout(() => resolve("hung"), 2000)));
        if ((await Promise.race([result, late])) === "hung") hung++;
        clearTimeout(timer);
      }
    } finally {
      await swapper.stop();
      // A read blocked in open() of the FIFO (the code before the fix) is released by a writer.
      for (const name of ["SKILL.md", "pipe"]) {
        try {
          closeSync(openSync(join(dir, name), constants.O_WRONLY | constants.O_NONBLOCK));
        } catch {
          // Not a FIFO, or no reader waiting.
        }
      }
    }
    expect(hung).toBe(0);
  });
});
