/**
 * The reaper (src/tools/reaper.ts) on its own, with a minimal host process
 * in place of the server (test/harness/tool-host.ts): it is not fooled by
 * the signals a terminal or a supervisor sends, it comes back when killed,
 * and it never keeps its host alive.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../harness/cli-process.js";
import { isLiving, killGroupQuietly, killQuietly, livingGroupMembers, msUntil, msUntilGroupGone } from "../harness/tool-processes.js";

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

interface Host {
  child: ChildProcess;
  exited: Promise<number | null>;
  /** The first line the command printed. */
  firstLine: Promise<string>;
}

function startHost(command: string): Host {
  const child = spawn(process.execPath, ["--import", "tsx", "test/harness/tool-host.ts", command], {
    cwd: REPO_ROOT,
    stdio: ["ignore", "pipe", "inherit"],
  });
  cleanups.push(() => killQuietly(child.pid!));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  let out = "";
  const firstLine = new Promise<string>((resolve, reject) => {
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
      if (out.includes("\n")) resolve(out.slice(0, out.indexOf("\n")));
    });
    void exited.then(() => reject(new Error(`host exited before printing a line: ${out}`)));
  });
  return { child, exited, firstLine };
}

/** Pids of the reapers `hostPid` started (its children running the reaper script). */
function reapersOf(hostPid: number): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === hostPid && readFileSync(`/proc/${name}/cmdline`, "utf8").includes("agentwire-reaper")) found.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return found.filter(isLiving);
}

async function hostRunningSleep(): Promise<{ host: Host; pgid: number; reaper: number }> {
  const host = startHost("echo $$; sleep 30");
  const pgid = Number(await host.firstLine);
  cleanups.push(() => killGroupQuietly(pgid));
  const [reaper] = reapersOf(host.child.pid!);
  expect(reaper).toBeGreaterThan(0);
  cleanups.push(() => killQuietly(reaper!));
  return { host, pgid, reaper: reaper! };
}

describe("the reaper", { timeout: 20_000 }, () => {
  it("ignores INT, TERM and HUP, and is in a session of its own (a signal to the server's group misses it)", async () => {
    const { host, reaper } = await hostRunningSleep();
    const stat = readFileSync(`/proc/${reaper}/stat`, "utf8");
    const [, , pgrp, session] = stat.slice(stat.lastIndexOf(")") + 2).split(" ").map(Number);
    expect(session).toBe(reaper);
    expect(pgrp).not.toBe(host.child.pid);
    for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.kill(reaper, signal);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(isLiving(reaper)).toBe(true);
  });

  it("is started again when killed, so kill -9 of the host still ends the groups", async () => {
    const { host, pgid, reaper } = await hostRunningSleep();
    process.kill(reaper, "SIGKILL");
    let replacement: number | undefined;
    expect(await msUntil(() => (replacement = reapersOf(host.child.pid!).find((pid) => pid !== reaper)) !== undefined, 3000)).toBeDefined();
    cleanups.push(() => killQuietly(replacement!));

    host.child.kill("SIGKILL");
    await host.exited;
    expect(await msUntilGroupGone(pgid, 2000), `group ${pgid} survived: ${livingGroupMembers(pgid).join(", ")}`).toBeDefined();
    expect(await msUntil(() => !isLiving(replacement!), 2000)).toBeDefined(); // and it left too
  });

  it("does not keep its host alive, and leaves when the host does", async () => {
    const host = startHost("echo started; sleep 0.3");
    expect(await host.firstLine).toBe("started");
    const reapers = reapersOf(host.child.pid!);
    expect(reapers).toHaveLength(1);
    expect(await Promise.race([host.exited, new Promise((resolve) => setTimeout(() => resolve("still running"), 5000))])).toBe(0);
    for (const reaper of reapers) expect(await msUntil(() => !isLiving(reaper), 2000)).toBeDefined();
  });
});
