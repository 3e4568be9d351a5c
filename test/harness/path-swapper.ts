/**
 * A real racing process for time-of-check/time-of-use tests: a python3 child
 * that exchanges two paths with renameat2(RENAME_EXCHANGE) in a tight loop
 * (through ctypes, so nothing is compiled). Exchanged with a symlink to a
 * directory outside the workspace, a workspace subdirectory is, at any
 * instant, either the real directory or a link out — the swap an attacker
 * with write access to the workspace can make while a tool checks and then
 * opens a path.
 */
import { spawn, type ChildProcess } from "node:child_process";

const SWAPPER = String.raw`
import ctypes, signal, sys
libc = ctypes.CDLL(None, use_errno=True)
renameat2 = libc.renameat2
renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
AT_FDCWD, RENAME_EXCHANGE = -100, 2
a, b = sys.argv[1].encode(), sys.argv[2].encode()
stop = False
def on_term(*_):
    global stop
    stop = True
signal.signal(signal.SIGTERM, on_term)
swaps = 0
while not stop:
    if renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) != 0:
        print("error", ctypes.get_errno(), flush=True)
        sys.exit(1)
    swaps += 1
    if swaps == 1:
        print("ready", flush=True)
# An even count leaves the two paths as they were.
if swaps % 2 == 1:
    renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE)
    swaps += 1
print("swaps", swaps, flush=True)
`;

export interface PathSwapper {
  /** Stops the loop (the paths end as they started) and returns how many exchanges it made. */
  stop(): Promise<number>;
}

/** Starts exchanging `a` and `b` (absolute paths) until stopped; resolves once the first exchange is made. */
export async function startPathSwapper(a: string, b: string): Promise<PathSwapper> {
  const child: ChildProcess = spawn("python3", ["-c", SWAPPER, a, b], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const poll = setInterval(() => {
      if (out.includes("ready")) {
        clearInterval(poll);
        resolve();
      }
    }, 5);
    void exited.then((code) => {
      clearInterval(poll);
      reject(new Error(`the swapper exited (${code}) before it started: ${out}${err}`));
    });
  });
  return {
    async stop() {
      child.kill("SIGTERM");
      const code = await exited;
      const swaps = /swaps (\d+)/.exec(out);
      if (code !== 0 || !swaps) throw new Error(`the swapper failed (exit ${code}): ${out}${err}`);
      return Number(swaps[1]);
    },
  };
}
