import { getEventListeners } from "node:events";
import { existsSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createBuiltinRegistry, defaultTools } from "../../src/tools/builtin-registry.js";
import { toolSpec } from "../../src/tools/json-schema.js";
import { createShellTool, type ShellToolOptions } from "../../src/tools/shell.js";
import type { Tool, ToolResult } from "../../src/tools/tool.js";
import { checkArguments, checkArgumentsJson, formatArgumentIssues } from "../../src/tools/validate-arguments.js";
import { isAlive, waitGone } from "../harness/process-liveness.js";

const workDir = realpathSync(mkdtempSync(join(tmpdir(), "agentwire-shell-")));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

interface Chunk {
  stream: "stdout" | "stderr";
  text: string;
}

interface RunOptions {
  timeoutMs?: number;
  argTimeoutMs?: number;
  cwd?: string;
  signal?: AbortSignal;
  tool?: ShellToolOptions;
  onChunk?: (chunk: Chunk) => void;
}

async function run(command: string, options: RunOptions = {}) {
  const tool = createShellTool(options.tool);
  const chunks: Chunk[] = [];
  const signal = options.signal ?? new AbortController().signal;
  const started = Date.now();
  const result: ToolResult = await tool.run(
    { command, timeoutMs: options.argTimeoutMs },
    {
      cwd: options.cwd ?? workDir,
      conversationId: "c_test",
      signal,
      timeoutMs: options.timeoutMs ?? 10_000,
      onOutput: (stream, text) => {
        chunks.push({ stream, text });
        options.onChunk?.({ stream, text });
      },
    },
  );
  return { result, chunks, elapsedMs: Date.now() - started, signal };
}

const streamed = (chunks: Chunk[], stream?: "stdout" | "stderr") =>
  chunks.filter((chunk) => stream === undefined || chunk.stream === stream).map((chunk) => chunk.text).join("");

async function expectGone(pid: number, withinMs = 1000): Promise<void> {
  expect(await waitGone([pid], withinMs), `pid ${pid} should be dead`).toEqual([]);
}

function pidsIn(text: string): number[] {
  return (text.match(/\d+/g) ?? []).map(Number);
}

describe("shell tool: running commands", () => {
  it("streams stdout and stderr and keeps both in the output", async () => {
    const { result, chunks } = await run("echo to-out; echo to-err >&2");
    expect(streamed(chunks, "stdout")).toBe("to-out\n");
    expect(streamed(chunks, "stderr")).toBe("to-err\n");
    expect(result).toEqual({ success: true, exitCode: 0, output: expect.any(String) });
    expect(result.output).toContain("to-out\n");
    expect(result.output).toContain("to-err\n");
  });

  it("interleaves stdout and stderr in arrival order", async () => {
    const { result } = await run("echo one; sleep 0.05; echo two >&2; sleep 0.05; echo three");
    expect(result.output).toBe("one\ntwo\nthree\n");
  });

  it("streams output while the command is still running", async () => {
    let settled = false;
    let settledWhenFirstChunk: boolean | undefined;
    const pending = run("echo first; sleep 0.3; echo second", {
      onChunk: () => {
        settledWhenFirstChunk ??= settled;
      },
    }).then((value) => {
      settled = true;
      return value;
    });
    const { chunks } = await pending;
    expect(settledWhenFirstChunk).toBe(false);
    expect(chunks[0].text).toBe("first\n");
  });

  it("reports a non-zero exit code as a failure", async () => {
    const { result } = await run("echo partial; exit 3");
    expect(result.success).toBe(false);
    expect(result.exitCode).toBe(3);
    expect(result.output).toBe("partial\n[exit code: 3]");
  });

  it("says which signal ended the shell", async () => {
    const { result } = await run("kill -9 $$");
    expect(result.success).toBe(false);
    expect(result.exitCode).toBeNull();
    expect(result.output).toContain("SIGKILL");
  });

  it("runs in context.cwd", async () => {
    const { result } = await run("pwd");
    expect(result.output.trim()).toBe(workDir);
  });

  it("runs bash, not a login or interactive shell", async () => {
    const { result } = await run('echo "$BASH_VERSION|$-"; shopt -q login_shell && echo login || echo not-login');
    const [first, second] = result.output.trim().split("\n");
    expect(first).toMatch(/^\d+\.\d+.*\|/);
    expect(first.split("|")[1]).not.toContain("i");
    expect(second).toBe("not-login");
  });

  it("keeps multibyte UTF-8 characters split across chunks intact", async () => {
    // The sleeps force the halves of é and 😀 into separate reads; the long run
    // crosses pipe-buffer boundaries at offsets that are not multiples of 6.
    const command = "printf '\\xc3'; sleep 0.05; printf '\\xa9\\xf0\\x9f'; sleep 0.05; printf '\\x98\\x80'; printf 'é😀%.0s' $(seq 1 20000)";
    const { result, chunks } = await run(command, { tool: { maxOutputBytes: 1024 * 1024 } });
    const expected = "é😀" + "é😀".repeat(20000);
    expect(chunks.length).toBeGreaterThan(2);
    expect(streamed(chunks)).toBe(expected);
    expect(result.output).toBe(expected);
  });

  it("caps the output, keeping head and tail with a marker counting the cut bytes", async () => {
    const { result, chunks } = await run("printf START; head -c 1000000 /dev/zero | tr '\\0' x; printf END");
    const total = 1_000_008;
    const kept = 64 * 1024;
    expect(streamed(chunks).length).toBe(total);
    const marker = `\n[… ${total - kept} bytes cut …]\n`;
    expect(result.output).toBe(`START${"x".repeat(kept / 2 - 5)}${marker}${"x".repeat(kept / 2 - 3)}END`);
    expect(result.success).toBe(true);
  });

  it("cuts on character boundaries and counts what it dropped", async () => {
    const { result } = await run("printf 'é%.0s' $(seq 1 100)", { tool: { maxOutputBytes: 11 } });
    // head: 5 bytes -> 2 whole chars (4 bytes); tail: 6 bytes -> 3 chars; 200 - 10 cut.
    expect(result.output).toBe("éé\n[… 190 bytes cut …]\nééé");
  });

  it("stops streaming beyond maxStreamBytes with one notice while the command runs on", async () => {
    const { result, chunks } = await run("head -c 5000 /dev/zero | tr '\\0' y; echo; echo done", {
      tool: { maxStreamBytes: 1000 },
    });
    const notices = chunks.filter((chunk) => chunk.text.includes("not streamed"));
    expect(notices).toHaveLength(1);
    expect(Buffer.byteLength(streamed(chunks)) - Buffer.byteLength(notices[0].text)).toBe(1000);
    expect(result.success).toBe(true);
    expect(result.output.endsWith("done\n")).toBe(true);
  });

  it("fails with a message naming the cwd when it does not exist", async () => {
    const missing = join(workDir, "no-such-dir");
    const { result } = await run("echo hi", { cwd: missing });
    expect(result.success).toBe(false);
    expect(result.output).toContain(missing);
    expect(result.output).toContain("does not exist");
  });
});

describe("shell tool: stopping commands", () => {
  it("kills the whole process group on timeout", async () => {
    let reported: number | undefined;
    const { result, elapsedMs, signal } = await run("sleep 30 & echo $!; wait", {
      timeoutMs: 300,
      onChunk: (chunk) => (reported ??= pidsIn(chunk.text)[0]),
    });
    expect(elapsedMs).toBeLessThan(1500);
    expect(result.success).toBe(false);
    expect(result.output).toContain("[timed out after 300 ms]");
    expect(reported).toBeGreaterThan(0);
    await expectGone(reported!);
    expect(getEventListeners(signal, "abort")).toHaveLength(0);
  });

  it("uses the smaller of the configured and per-call time limits", async () => {
    const shorter = await run("sleep 30", { timeoutMs: 10_000, argTimeoutMs: 200 });
    expect(shorter.result.output).toContain("[timed out after 200 ms]");
    expect(shorter.elapsedMs).toBeLessThan(1500);
    const capped = await run("sleep 30", { timeoutMs: 200, argTimeoutMs: 60_000 });
    expect(capped.result.output).toContain("[timed out after 200 ms]");
  });

  it("escalates to SIGKILL when the group ignores SIGTERM", async () => {
    // Without the escalation the run would only end at closeWaitMs (5 s here).
    const { result, elapsedMs } = await run("trap '' TERM; echo $$; while :; do sleep 0.05; done", {
      timeoutMs: 200,
      tool: { killGraceMs: 100, closeWaitMs: 5000 },
    });
    expect(result.output).toContain("[timed out after 200 ms]");
    expect(elapsedMs).toBeLessThan(1000);
    await expectGone(pidsIn(result.output)[0]);
  });

  it("ends the shell and its children within a second when aborted", async () => {
    const controller = new AbortController();
    let pids: number[] = [];
    let abortedAt = 0;
    const { result } = await run("sleep 30 & echo $$ $!; sleep 31", {
      signal: controller.signal,
      onChunk: (chunk) => {
        pids = pidsIn(chunk.text);
        abortedAt = Date.now();
        controller.abort();
      },
    });
    expect(Date.now() - abortedAt).toBeLessThan(1000);
    expect(result.success).toBe(false);
    expect(result.output).toContain("[interrupted]");
    expect(pids).toHaveLength(2);
    for (const pid of pids) await expectGone(pid);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });

  it("does not start the command when the signal is already aborted", async () => {
    const marker = join(workDir, "should-not-exist");
    const controller = new AbortController();
    controller.abort();
    const { result, chunks } = await run(`touch ${marker}; echo ran`, { signal: controller.signal });
    await new Promise((r) => setTimeout(r, 100));
    expect(existsSync(marker)).toBe(false);
    expect(chunks).toHaveLength(0);
    expect(result.success).toBe(false);
    expect(result.output).toContain("interrupted");
  });

  it("does not hang on background jobs holding the output after the shell exits", async () => {
    const { result, elapsedMs } = await run("sleep 30 & echo $!", { tool: { exitDrainMs: 100 } });
    expect(elapsedMs).toBeLessThan(1500);
    expect(result.success).toBe(true);
    await expectGone(pidsIn(result.output)[0]);
  });

  it("does not hang when a process leaves the group and keeps the pipes open", async () => {
    // setsid puts the sleep in a new session, out of reach of the group kill;
    // it prints its pid only once it has left, so the abort cannot come first.
    const controller = new AbortController();
    const { result, elapsedMs } = await run("setsid sh -c 'echo $$; exec sleep 5' & wait", {
      signal: controller.signal,
      tool: { closeWaitMs: 300 },
      onChunk: () => controller.abort(),
    });
    const escaped = pidsIn(result.output)[0];
    try {
      expect(elapsedMs).toBeLessThan(1000);
      expect(result.output).toContain("[interrupted]");
    } finally {
      if (escaped > 0 && isAlive(escaped)) process.kill(escaped, "SIGKILL");
    }
  });
});

describe("tool arguments, schema and registry", () => {
  const shell = createShellTool();

  it("names `command` when it is missing or not a string", async () => {
    for (const raw of [{}, { command: 5 }]) {
      const checked = await checkArguments(shell.parameters, raw);
      expect(checked.ok).toBe(false);
      if (!checked.ok) expect(checked.issues.map((issue) => issue.path)).toEqual(["command"]);
    }
    const empty = await checkArguments(shell.parameters, { command: "" });
    expect(empty.ok).toBe(false);
  });

  it("accepts good arguments and reports invalid JSON text", async () => {
    expect(await checkArguments(shell.parameters, { command: "ls", timeoutMs: 50 })).toEqual({
      ok: true,
      value: { command: "ls", timeoutMs: 50 },
    });
    const bad = await checkArgumentsJson(shell.parameters, "{command:");
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(formatArgumentIssues(bad.issues)).toMatch(/^arguments: arguments are not valid JSON/);
    const wrong = await checkArgumentsJson(shell.parameters, '{"command": "ls", "timeoutMs": 1.5}');
    expect(wrong.ok).toBe(false);
    if (!wrong.ok) expect(wrong.issues[0].path).toBe("timeoutMs");
  });

  it("refuses unknown keys, naming them, and tells the model so in the schema", async () => {
    const checked = await checkArguments(shell.parameters, { command: "echo hi", cwd: "/", timeoutMs: 50 });
    expect(checked.ok).toBe(false);
    if (!checked.ok) {
      expect(checked.issues).toEqual([{ path: "", code: "unrecognized_keys", message: expect.stringContaining('"cwd"') }]);
      expect(formatArgumentIssues(checked.issues)).toMatch(/^arguments: .*cwd/);
    }
    const fromJson = await checkArgumentsJson(shell.parameters, '{"command": "ls", "command2": "rm -rf /"}');
    expect(fromJson.ok).toBe(false);
    if (!fromJson.ok) expect(fromJson.issues.map((issue) => issue.code)).toEqual(["unrecognized_keys"]);
    expect(toolSpec(shell).parameters).toMatchObject({ additionalProperties: false });
  });

  it("offers a JSON Schema with `command` required and every field described", () => {
    const schema = toolSpec(shell).parameters as {
      $schema?: string;
      required: string[];
      properties: Record<string, { type: string; description?: string }>;
    };
    expect(schema.$schema).toBeUndefined();
    expect(schema.required).toEqual(["command"]);
    expect(schema.properties.command.type).toBe("string");
    expect(schema.properties.timeoutMs.type).toBe("integer");
    for (const property of Object.values(schema.properties)) expect(property.description).toBeTruthy();
    expect(toolSpec(shell)).toMatchObject({ name: "shell", parameters: schema });
  });

  it("lists tools in order, finds them by name and refuses duplicate names", () => {
    const other: Tool = { ...(shell), name: "other" };
    const registry = createBuiltinRegistry([...defaultTools(), other]);
    expect(registry.list().map((tool) => tool.name)).toEqual([
      "shell",
      "read_file",
      "list_files",
      "search_files",
      "write_file",
      "edit_file",
      "update_plan",
      "ask_user",
      "other",
    ]);
    expect(registry.get("other")).toBe(other);
    expect(registry.get("missing")).toBeUndefined();
    expect(() => createBuiltinRegistry([other, other])).toThrow(/duplicate/);
  });
});
