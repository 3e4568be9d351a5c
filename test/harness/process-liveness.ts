/**
 * Whether a process a test caused (a tool's shell, its children) still runs.
 * A zombie counts as gone: a killed background child is re-parented to PID 1,
 * and how soon PID 1 collects it depends on the machine (in some containers
 * over a second); it has exited and holds no resources but its pid.
 */
import { readdirSync, readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";

/** False once kill(pid, 0) fails with ESRCH, or the process is a zombie. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ESRCH") return false;
    throw error;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return false;
  }
}

/** Wait up to `withinMs` for every pid to be gone; resolves with the ones still alive. */
export async function waitGone(pids: number[], withinMs: number): Promise<number[]> {
  const deadline = performance.now() + withinMs;
  let alive = pids.filter(isAlive);
  while (alive.length > 0 && performance.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
    alive = alive.filter(isAlive);
  }
  return alive;
}

/** Pids of the processes (other than this one) whose command line contains `text` (Linux: /proc). */
export function processesWith(text: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(text)) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}
