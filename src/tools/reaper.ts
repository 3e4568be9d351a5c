/**
 * The reaper: one small bash process per server process whose only job is
 * to kill the server's tool processes once the server is gone — however it
 * went, `kill -9` included, when no code of ours gets to run.
 *
 * It reads `+PGID` / `-PGID` lines on stdin (groups to kill / to forget). The
 * write end of that pipe is held by the server alone (Node opens it
 * close-on-exec, so tool processes do not inherit it), so the kernel closes
 * it when the server dies and the reaper reads EOF. It then SIGKILLs every
 * group still registered and, on Linux, sweeps /proc for processes whose
 * environment carries this server's scope marker (see `toolScopeEnvironment`):
 * tool processes that left their group (setsid, double fork) or that were
 * spawned too late to be registered. Then it exits.
 *
 * Why bash: a node child would cost ~30 MB and ~50 ms to start; bash is
 * already required by the shell tool. Why its own session (`detached`): a
 * signal to the server's process group (Ctrl-C, a supervisor killing the
 * group) must not take the reaper with it. It ignores INT, TERM and HUP for
 * the same reason; only EOF (or SIGKILL) ends it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";

// $1 is the scope marker NAME=VALUE (an argument, so the reaper's own environment does not match it).
const SCRIPT = [
  'trap "" INT TERM HUP',
  'groups=() # indexed by pgid: bash 3 (macOS) has no associative arrays',
  'while IFS= read -r line; do',
  '  if [[ $line =~ ^([+-])([0-9]+)$ ]]; then',
  '    if [[ ${BASH_REMATCH[1]} == + ]]; then groups[${BASH_REMATCH[2]}]=1; else unset "groups[${BASH_REMATCH[2]}]"; fi',
  '  fi',
  'done',
  'for pgid in "${!groups[@]}"; do kill -KILL -- "-$pgid" 2>/dev/null; done',
  'if [[ -n $1 && -r /proc/self/environ ]]; then',
  '  for round in 1 2 3 4 5; do',
  '    pids=()',
  '    for file in $(grep -alzxF -- "$1" /proc/[0-9]*/environ 2>/dev/null); do',
  '      pid=${file#/proc/}; pid=${pid%/environ}',
  '      [[ $pid != "$$" ]] && pids+=("$pid")',
  '    done',
  '    (( ${#pids[@]} == 0 )) && break',
  '    kill -KILL -- "${pids[@]}" 2>/dev/null',
  '  done',
  'fi',
].join("\n");

/** Set in every tool process's environment; unique to this server process (and module instance). */
const SCOPE_NAME = "AGENTWIRE_TOOL_SCOPE";
const SCOPE_VALUE = `${process.pid}.${randomBytes(6).toString("hex")}`;

/** Groups the reaper must kill should this process die; replayed to a restarted reaper. */
const watched = new Set<number>();
let reaper: ChildProcess | null = null;
let restartTimer: NodeJS.Timeout | null = null;

/**
 * The variable that marks a process as one of this server's tools. Put it in
 * a tool's environment at spawn, so the reaper can find the process even if
 * it leaves its group or was never registered.
 */
export function toolScopeEnvironment(): Record<string, string> {
  return { [SCOPE_NAME]: SCOPE_VALUE };
}

/** Starts the reaper if it is not running. Call before spawning a tool process, so it is covered from the start. */
export function ensureReaper(): void {
  if (reaper !== null) return;
  let child: ChildProcess;
  try {
    // --norc: with a socket as stdin and no SHLVL, bash takes itself for an rshd
    // session and sources ~/.bashrc first — seconds on some machines, unprotected.
    child = spawn("bash", ["--norc", "-c", SCRIPT, "agentwire-reaper", `${SCOPE_NAME}=${SCOPE_VALUE}`], {
      stdio: ["pipe", "ignore", "ignore"],
      detached: true,
      cwd: "/", // hold no workspace directory busy
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    });
  } catch {
    return; // e.g. no more processes: tools still die on a graceful exit
  }
  reaper = child;
  const gone = () => {
    if (reaper !== child) return;
    reaper = null;
    // It failed to start or someone killed it: the groups are unprotected until a new one has them.
    if (watched.size > 0) scheduleRestart();
  };
  child.once("error", gone);
  child.once("exit", gone);
  child.stdin?.on("error", () => {}); // EPIPE once it is gone; `gone` takes care of it
  // Neither the reaper nor its pipe may keep the server's event loop alive.
  child.unref();
  (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  if (watched.size > 0) send([...watched].map((pgid) => `+${pgid}\n`).join(""));
}

function send(lines: string): void {
  if (reaper?.stdin?.writable) reaper.stdin.write(lines);
}

/** From now on the group led by `pgid` is killed when this process dies, however it dies. */
export function reaperWatch(pgid: number): void {
  watched.add(pgid);
  ensureReaper();
  send(`+${pgid}\n`);
}

/** The group is gone (or no longer ours): forget it, so a reused pid is never hit. */
export function reaperForget(pgid: number): void {
  if (!watched.delete(pgid)) return;
  send(`-${pgid}\n`);
}

/** At most one restart per second, so a reaper that cannot run does not spin. */
function scheduleRestart(): void {
  if (restartTimer !== null) return;
  restartTimer = setTimeout(() => {
    restartTimer = null;
    if (watched.size > 0) ensureReaper();
  }, 1000);
  restartTimer.unref();
}
