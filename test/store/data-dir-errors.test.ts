/**
 * A data dir that cannot be used stops the start with one clear line, never a
 * stack trace and never a spin (issue 19, item 12). Node's recursive mkdir
 * loops for ever under /proc (mkdir says ENOENT, the parent exists), so every
 * place that makes the data dir goes through makeDirectory instead.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/logging/logger.js";
import { McpServersFile } from "../../src/mcp/mcp-servers-file.js";
import { loadInstanceId } from "../../src/metrics/instance-id.js";
import { makeDirectory } from "../../src/store/make-directory.js";
import { killAllCli, runCli } from "../harness/cli-process.js";

const linux = process.platform === "linux";
afterAll(killAllCli);

/** Settles within `ms`, or fails saying it hung (the spin this file is about). */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms))),
  ]).finally(() => clearTimeout(timer));
}

describe.skipIf(!linux)("agentwire serve with an unusable --data-dir", { timeout: 30_000 }, () => {
  it.each([
    ["/proc/agentwire-x", "ENOENT"],
    ["/sys/agentwire-x", "EPERM"],
  ])("--data-dir %s: exit 1 with one line naming the dir and %s, within seconds", async (dataDir, code) => {
    const cli = runCli(["serve", "--port", "0", "--data-dir", dataDir]);
    const exit = await within(cli.exited, 15_000, `serve --data-dir ${dataDir}`).catch((error) => {
      cli.child.kill("SIGKILL");
      throw error;
    });
    expect(exit).toEqual({ code: 1, signal: null });
    expect(cli.stdout()).toBe("");
    const stderr = cli.stderr();
    expect(stderr).toMatch(new RegExp(`^agentwire: data dir ${dataDir} cannot be used: ${code}: .*\\n$`));
    expect(stderr.split("\n")).toHaveLength(2); // one line
    expect(stderr).not.toMatch(/\n\s+at /);
  });

  it("chat's embedded server says the same and exits 1", async () => {
    const cli = runCli(["chat", "hello", "--data-dir", "/proc/agentwire-x"]);
    const exit = await within(cli.exited, 15_000, "chat --data-dir /proc/agentwire-x").catch((error) => {
      cli.child.kill("SIGKILL");
      throw error;
    });
    expect(exit.code).toBe(1);
    expect(cli.stderr()).toMatch(/^agentwire: data dir \/proc\/agentwire-x cannot be used: ENOENT: .*\n$/);
  });
});

describe("makeDirectory", () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it("makes every missing component, and is a no-op on an existing directory", async () => {
    const root = await mkdtemp(join(tmpdir(), "agentwire-mkdir-"));
    dirs.push(root);
    await makeDirectory(join(root, "a", "b", "c"));
    await makeDirectory(join(root, "a", "b", "c"));
    await makeDirectory(root);
  });

  it("refuses a path through or onto a file", async () => {
    const root = await mkdtemp(join(tmpdir(), "agentwire-mkdir-"));
    dirs.push(root);
    await writeFile(join(root, "file"), "x");
    await expect(makeDirectory(join(root, "file"))).rejects.toMatchObject({ code: "ENOTDIR" });
    await expect(makeDirectory(join(root, "file", "below"))).rejects.toMatchObject({ code: "ENOTDIR" });
  });

  it.skipIf(!linux)("fails at once under /proc and /sys (Node's recursive mkdir never returns there)", async () => {
    await expect(within(makeDirectory("/proc/agentwire-x/conversations"), 2000, "makeDirectory")).rejects.toMatchObject({ code: "ENOENT" });
    await expect(within(makeDirectory("/sys/agentwire-x/conversations"), 2000, "makeDirectory")).rejects.toMatchObject({ code: "EPERM" });
  });

  it.skipIf(!linux)("the other writers in the data dir (instance.json, mcp-servers.json) fail instead of hanging", async () => {
    // With --store postgres:// nothing makes the data dir before these: the start hung.
    const lines: string[] = [];
    const id = await within(loadInstanceId("/proc/agentwire-x", createLogger("warn", (line) => lines.push(line))), 2000, "loadInstanceId");
    expect(id).toMatch(/^i_/);
    // One line saying where and why, no stack trace.
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/the instance id could not be stored in \/proc\/agentwire-x\/instance\.json \(ENOENT: [^\n]*\); it will change with the next start\n?$/);
    await expect(within(new McpServersFile("/proc/agentwire-x").save({}), 2000, "McpServersFile.save")).rejects.toMatchObject({ code: "ENOENT" });
  });
});
