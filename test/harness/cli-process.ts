/**
 * Runs the real CLI as a child process and reads its output: by default the
 * shipped bundle (dist/bundle/cli.cjs, which vitest's global setup builds from
 * the source under test), the file `npm start` and the `agentwire` bin run;
 * `src/cli.ts` runs the source through tsx instead. Every child is tracked so
 * a test can kill what it left running.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { cleanEnv } from "./child-env.js";
import { REPO_ROOT } from "./repo-root.js";
import { shippedBundle } from "./shipped-bundle.js";

export { REPO_ROOT };

export interface CliProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (null when killed by a signal) and the signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves with the URL of the listening line, or rejects when the process exits first or `timeoutMs` passes. */
  listening(timeoutMs?: number): Promise<string>;
}

const TSX_LOADER = pathToFileURL(join(REPO_ROOT, "node_modules/tsx/dist/loader.mjs")).href;

const children = new Set<ChildProcess>();

/**
 * `entry` defaults to the shipped bundle (what users run; a start from source through tsx costs
 * about a second of CPU more); pass "src/cli.ts" for the source.
 */
export function runCli(args: string[], extraEnv: Record<string, string> = {}, entry = shippedBundle(), cwd = REPO_ROOT): CliProcess {
  // tsx by URL: `--import tsx` would be looked up from `cwd`, which may be a temp dir.
  const runner = entry.endsWith(".ts") ? ["--import", TSX_LOADER, join(REPO_ROOT, entry)] : [join(REPO_ROOT, entry)];
  const child = spawn(process.execPath, [...runner, ...args], {
    cwd,
    env: cleanEnv(extraEnv),
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.add(child);
  let out = "";
  let err = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (err += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on("close", (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    });
  });
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    listening(timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => finish(new Error(`no listening line within ${timeoutMs} ms; stderr: ${err}`)), timeoutMs);
        const check = () => {
          const match = /agentwire listening on (ws:\/\/\S+)\n/.exec(out);
          if (match) finish(undefined, match[1]);
        };
        const finish = (error?: Error, url?: string) => {
          clearTimeout(timer);
          child.stdout!.off("data", check);
          if (error) reject(error);
          else resolve(url!);
        };
        child.stdout!.on("data", check);
        void exited.then(({ code, signal }) =>
          finish(new Error(`exited (code ${code}, signal ${signal}) before listening; stderr: ${err}`)),
        );
        check();
      });
    },
  };
}

/** Kill every child still running (by its own pid) and wait for it to be gone. */
export async function killAllCli(): Promise<void> {
  const waits = [...children].map(
    (child) =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once("close", () => resolve());
        child.kill("SIGKILL");
      }),
  );
  await Promise.all(waits);
  children.clear();
}
