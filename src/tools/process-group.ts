/**
 * Process-group helpers for tools that spawn `detached` children: the child
 * leads its own group, so signalling `-pid` reaches it and everything it
 * started (background jobs, pipelines, grandchildren) in one call. Tracked
 * groups never outlive the server (see reaper.ts for when it dies hard).
 */
import { ensureReaper, reaperForget, reaperWatch, toolScopeEnvironment } from "./reaper.js";

/** Sends `signal` to the whole group led by `pid`. False when the group is already gone. */
export function signalProcessGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch (error) {
    if (isErrnoException(error) && error.code === "ESRCH") return false;
    throw error;
  }
}

/** True while any member of the group led by `pid` is alive (zombies count until reaped). */
export function isProcessGroupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch (error) {
    // EPERM means it exists but belongs to someone else: still alive.
    return isErrnoException(error) && error.code === "EPERM";
  }
}

/**
 * Groups started by this server that may still have members. A group stays
 * here after its tool is done while anything of it lives (a background job
 * that redirected its output), because it must still die with the server.
 */
const liveGroups = new Set<number>();
let exitHookInstalled = false;
/** Released groups whose members were still running; polled until empty. */
const lingering = new Set<number>();
let lingerTimer: NodeJS.Timeout | null = null;
const LINGER_POLL_MS = 1000;

/**
 * The environment to spawn a tool process with: `env` plus this server's
 * scope marker. Also starts the reaper, so the process is covered by it from
 * its first instruction: even if this server is killed before
 * `trackProcessGroup`, the reaper finds the process by the marker (Linux).
 */
export function toolProcessEnvironment(env: Readonly<Record<string, string>>): Record<string, string> {
  ensureReaper();
  return { ...env, ...toolScopeEnvironment() };
}

/**
 * Records a running group (led by `pid`, spawned `detached`) so that it is
 * killed when this process ends: by `killAllProcessGroups` on a graceful exit,
 * by the reaper when the process dies any other way. Returns `release`, which
 * the tool calls when it is done with the group: it is forgotten at once if
 * empty, else once its last member has exited.
 */
export function trackProcessGroup(pid: number): () => void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on("exit", killAllProcessGroups);
  }
  liveGroups.add(pid);
  reaperWatch(pid);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (isProcessGroupAlive(pid)) linger(pid);
    else forget(pid);
  };
}

/**
 * SIGKILLs every tracked group. Runs on process `exit`; a CLI that handles
 * SIGINT/SIGTERM itself should call it (or `process.exit()`) before leaving.
 */
export function killAllProcessGroups(): void {
  for (const pid of liveGroups) {
    try {
      signalProcessGroup(pid, "SIGKILL");
    } catch {
      // Nothing more can be done while exiting.
    }
    forget(pid);
  }
}

function forget(pid: number): void {
  liveGroups.delete(pid);
  lingering.delete(pid);
  // Once empty, the pid may be reused by an unrelated group: nobody may kill it any more.
  reaperForget(pid);
}

function linger(pid: number): void {
  lingering.add(pid);
  if (lingerTimer !== null) return;
  lingerTimer = setInterval(() => {
    for (const group of lingering) if (!isProcessGroupAlive(group)) forget(group);
    if (lingering.size === 0) {
      clearInterval(lingerTimer!);
      lingerTimer = null;
    }
  }, LINGER_POLL_MS);
  lingerTimer.unref();
}

function isErrnoException(error: unknown): error is NodeJS.ErrnoException {
  return error instanceof Error && typeof (error as NodeJS.ErrnoException).code === "string";
}
