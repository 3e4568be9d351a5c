/**
 * Tool.prepare of the shell tool: a call waiting for approval gets its
 * process started and held before the command (src/tools/shell.ts, HOLD).
 * Nothing runs until run(); run() uses that very process, which then looks
 * as a direct spawn's would (own process group, no extra descriptor, the
 * same environment); other arguments, or a discard, kill it with nothing run.
 * Linux: held processes are found by their command line in /proc.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, expect, it } from "vitest";
import { createShellTool, MAX_HELD_PROCESSES } from "../../src/tools/shell.js";
import { REPO_ROOT } from "../harness/repo-root.js";
import { processesWith, waitGone } from "../harness/process-liveness.js";

const workDir = realpathSync(mkdtempSync(join(tmpdir(), "agentwire-shell-held-")));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

const tool = createShellTool({ env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: workDir, LANG: "C.UTF-8" } });
const run = (command: string, toolCallId: string) =>
  tool.run({ command }, { cwd: workDir, conversationId: "c_test", toolCallId, signal: new AbortController().signal, timeoutMs: 10_000, onOutput: () => {} });


// Its pid, whether it leads its own group, whether fd 3 is open, and its environment.
const REPORT = 'echo "pid $$"; [ "$(cut -d" " -f5 /proc/$$/stat)" = "$$" ] && echo own-group; [ -e /proc/$$/fd/3 ] && echo fd3-open; env | sort';

it.runIf(process.platform === "linux")("runs the command in the held process, as a direct spawn would, and not before run()", async () => {
  const marker = join(workDir, "held-ran");
  const command = `touch ${marker}; ${REPORT}`;
  const undo = tool.prepare!({ command }, { cwd: workDir, toolCallId: "call_held" });
  try {
    const [held] = processesWith(marker);
    expect(held).toBeDefined();
    expect(existsSync(marker)).toBe(false);
    const viaHeld = await run(command, "call_held");
    expect(viaHeld.success).toBe(true);
    expect(existsSync(marker)).toBe(true);
    rmSync(marker);
    const direct = await run(command, "call_direct");
    const [pidLine, ...rest] = viaHeld.output.split("\n");
    expect(pidLine).toBe(`pid ${held}`);
    expect(rest).toContain("own-group");
    expect(rest).not.toContain("fd3-open");
    expect(rest.join("\n")).toBe(direct.output.split("\n").slice(1).join("\n"));
  } finally {
    undo();
  }
});

it.runIf(process.platform === "linux")("kills the held process with nothing run when the call does not run", async () => {
  const marker = join(workDir, "discarded-ran");
  const undo = tool.prepare!({ command: `touch ${marker}` }, { cwd: workDir, toolCallId: "call_discarded" });
  const held = processesWith(marker);
  expect(held).toHaveLength(1);
  undo();
  expect(await waitGone(held, 2000)).toEqual([]);
  expect(existsSync(marker)).toBe(false);
});

it.runIf(process.platform === "linux")("runs edited arguments in a process of their own, the held one killed", async () => {
  const proposed = join(workDir, "proposed-ran");
  const undo = tool.prepare!({ command: `touch ${proposed}` }, { cwd: workDir, toolCallId: "call_edited" });
  try {
    const held = processesWith(proposed);
    expect(held).toHaveLength(1);
    const result = await run("echo edited", "call_edited");
    expect(result.output).toBe("edited\n");
    expect(await waitGone(held, 2000)).toEqual([]);
    expect(existsSync(proposed)).toBe(false);
  } finally {
    undo();
  }
});

it.runIf(process.platform === "linux")(`holds ${MAX_HELD_PROCESSES} processes at most; a call past that starts its own when it runs`, async () => {
  const marker = join(workDir, "capped");
  const undos = Array.from({ length: MAX_HELD_PROCESSES + 2 }, (_, i) =>
    tool.prepare!({ command: `echo ${marker}-${i}` }, { cwd: workDir, toolCallId: `call_cap_${i}` }),
  );
  try {
    expect(processesWith(`${marker}-`)).toHaveLength(MAX_HELD_PROCESSES);
    expect(processesWith(`${marker}-${MAX_HELD_PROCESSES}`)).toEqual([]);
    // The one past the cap runs all the same, in a process of its own.
    const past = await run(`echo ${marker}-${MAX_HELD_PROCESSES}`, `call_cap_${MAX_HELD_PROCESSES}`);
    expect(past.output).toBe(`${marker}-${MAX_HELD_PROCESSES}\n`);
  } finally {
    for (const undo of undos) undo();
  }
  expect(await waitGone(processesWith(`${marker}-`), 2000)).toEqual([]);
});

it.runIf(process.platform === "linux")("a held process whose server dies (SIGKILL: no exit handler) ends with nothing run", async () => {
  const marker = join(workDir, "orphan-ran");
  const script = join(workDir, "hold-then-wait.mts");
  writeFileSync(
    script,
    [
      `import { createShellTool } from ${JSON.stringify(join(REPO_ROOT, "src/tools/shell.ts"))};`,
      `const tool = createShellTool({ env: { PATH: ${JSON.stringify(process.env.PATH ?? "/usr/bin:/bin")} } });`,
      `tool.prepare({ command: ${JSON.stringify(`touch ${marker}`)} }, { cwd: ${JSON.stringify(workDir)}, toolCallId: "call_orphan" });`,
      `console.log("held");`,
      `setInterval(() => {}, 1 << 30);`,
    ].join("\n"),
  );
  const server = spawn(process.execPath, ["--import", pathToFileURL(join(REPO_ROOT, "node_modules/tsx/dist/loader.mjs")).href, script], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.stdout!.on("data", (chunk: Buffer) => chunk.toString().includes("held") && resolve());
      server.once("exit", (code) => reject(new Error(`exited (${code}) before holding`)));
    });
    const held = processesWith(marker);
    expect(held).toHaveLength(1);
    // The reaper (src/tools/reaper.ts) would kill the held group once the server is gone: killed first,
    // so what is checked is the held shell's own guard.
    const reaper = processesWith("groups=()").filter((pid) => readFileSync(`/proc/${pid}/stat`, "utf8").split(" ")[3] === String(server.pid));
    expect(reaper).toHaveLength(1);
    process.kill(reaper[0]!, "SIGKILL");
    expect(await waitGone(reaper, 2000)).toEqual([]);
    server.kill("SIGKILL");
    // Its end of fd 3 closes with it: the held shell reads end of file and exits without the command.
    expect(await waitGone(held, 5000)).toEqual([]);
    // Gone means done: a command that ran would have touched the marker before its process ended.
    expect(existsSync(marker)).toBe(false);
  } finally {
    server.kill("SIGKILL");
  }
});
