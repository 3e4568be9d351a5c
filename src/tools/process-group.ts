/**
 * Process-group helpers for tools that spawn `detached` children: the child
 * leads its own group, so signalling `-pid` reaches it and everything it
 * started (background jobs, pipelines, grandchildren) in one call.
 */

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
 * Groups started by this server and not yet finished. Because they are
 * detached, they would outlive the server; the `exit` hook below kills them.
 */
const liveGroups = new Set<number>();
let exitHookInstalled = false;

/**
 * Records a running group so that `killAllProcessGroups` (and the server's
 * `exit`) can end it. Returns the function that forgets it again.
 */
export function trackProcessGroup(pid: number): () => void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on("exit", killAllProcessGroups);
  }
  liveGroups.add(pid);
  return () => {
    liveGroups.delete(pid);
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
  }
  liveGroups.clear();
}

function isErrnoException(error: unknown): error is NodeJS.ErrnoException {
  return error instanceof Error && typeof (error as NodeJS.ErrnoException).code === "string";
}
