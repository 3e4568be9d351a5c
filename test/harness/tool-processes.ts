/**
 * Looks at tool processes from outside, through /proc: which members of a
 * process group are still alive. Zombies do not count — a killed process
 * whose parent died is reparented, and this machine's init may never reap it.
 */
import { readdirSync, readFileSync } from "node:fs";

interface ProcStat {
  pid: number;
  state: string;
  pgrp: number;
}

function readStat(pid: string): ProcStat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name may hold spaces and parentheses: fields start after the last ")".
    const [state, , pgrp] = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { pid: Number(pid), state: state!, pgrp: Number(pgrp) };
  } catch {
    return undefined; // exited while we looked
  }
}

/** Pids of the living (not zombie) processes in process group `pgid`. */
export function livingGroupMembers(pgid: number): number[] {
  const members: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readStat(name);
    if (stat && stat.pgrp === pgid && stat.state !== "Z") members.push(stat.pid);
  }
  return members;
}

/** True while `pid` runs (a zombie has already ended). */
export function isLiving(pid: number): boolean {
  const stat = readStat(String(pid));
  return stat !== undefined && stat.state !== "Z";
}

/** Milliseconds until `done()` holds, polling every 5 ms; undefined when it still does not after `withinMs`. */
export async function msUntil(done: () => boolean, withinMs: number): Promise<number | undefined> {
  const started = performance.now();
  for (;;) {
    if (done()) return performance.now() - started;
    if (performance.now() - started > withinMs) return undefined;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Milliseconds until group `pgid` has no living member, or undefined when it still has one after `withinMs`. */
export function msUntilGroupGone(pgid: number, withinMs: number): Promise<number | undefined> {
  return msUntil(() => livingGroupMembers(pgid).length === 0, withinMs);
}

/** SIGKILLs group `pgid` if anything of it is left (cleanup after a failed test). */
export function killGroupQuietly(pgid: number): void {
  try {
    process.kill(-pgid, "SIGKILL");
  } catch {
    // already gone
  }
}

/** SIGKILLs `pid` if it is still there (cleanup after a failed test). */
export function killQuietly(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // already gone
  }
}
