/**
 * The real CLI as a child process with input: text piped to its stdin, or a
 * pseudo-terminal (util-linux `script`) so that stdin, stdout and stderr are
 * all TTYs and the interactive paths (prompts, raw-mode Ctrl-C) run for real.
 * Children are tracked like runCli's; killAllCliIo kills what is left.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { cleanEnv } from "./child-env.js";
import { REPO_ROOT } from "./repo-root.js";
import { shippedBundle } from "./shipped-bundle.js";

const TSX_LOADER = pathToFileURL(join(REPO_ROOT, "node_modules/tsx/dist/loader.mjs")).href;

/** How to start the CLI: a built .mjs (REPO_ROOT-relative, as runCli takes it; by default the shipped bundle), or the source through tsx. */
function nodeArgs(entry: string): string[] {
  return entry.endsWith(".ts") ? ["--import", TSX_LOADER, join(REPO_ROOT, entry)] : [join(REPO_ROOT, entry)];
}

export interface CliIo {
  child: ChildProcess;
  /** Everything written so far (for a terminal: stdout and stderr together, as the terminal shows them). */
  output(): string;
  stderr(): string;
  /** Send bytes to its stdin (a terminal's keyboard: "\r" is Enter, "\x03" Ctrl-C, "\x04" Ctrl-D). */
  write(text: string): void;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves with the output once `pattern` matches it (ANSI escapes removed), or rejects after `timeoutMs` or on exit. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
}

const children = new Set<ChildProcess>();

/** Terminal output without colour and cursor escapes, and with \r\n as \n. */
export function stripAnsi(text: string): string {
  return text.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "").replace(/\r+\n/g, "\n");
}

function track(child: ChildProcess, stdinOpen: boolean): CliIo {
  children.add(child);
  let out = "";
  let err = "";
  const listeners = new Set<() => void>();
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    out += chunk;
    for (const listener of listeners) listener();
  });
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (err += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on("close", (code, signal) => {
      children.delete(child);
      for (const listener of listeners) listener();
      resolve({ code, signal });
    });
  });
  let done = false;
  void exited.then(() => (done = true));
  return {
    child,
    output: () => out,
    stderr: () => err,
    write: (text) => {
      if (stdinOpen) child.stdin!.write(text);
    },
    exited,
    waitFor(pattern, timeoutMs = 15_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const clean = stripAnsi(out);
          if (pattern.test(clean)) finish(undefined, clean);
          else if (done) finish(new Error(`exited before ${pattern}; output: ${clean}\nstderr: ${err}`));
        };
        const timer = setTimeout(() => finish(new Error(`no ${pattern} within ${timeoutMs} ms; output: ${stripAnsi(out)}\nstderr: ${err}`)), timeoutMs);
        const finish = (error?: Error, text?: string) => {
          clearTimeout(timer);
          listeners.delete(check);
          if (error) reject(error);
          else resolve(text!);
        };
        listeners.add(check);
        check();
      });
    },
  };
}

/** `agentwire ARGS` with `input` on stdin (a pipe, not a terminal), then end of input. */
export function runCliWithInput(args: string[], input: string, extraEnv: Record<string, string> = {}, cwd = REPO_ROOT, entry = shippedBundle()): CliIo {
  const child = spawn(process.execPath, [...nodeArgs(entry), ...args], { cwd, env: cleanEnv(extraEnv), stdio: ["pipe", "pipe", "pipe"] });
  child.stdin!.end(input);
  return track(child, false);
}

const shellQuote = (arg: string) => `'${arg.replace(/'/g, `'\\''`)}'`;

/**
 * `agentwire ARGS` on a pseudo-terminal: `script -qfec CMD /dev/null` gives the
 * command a pty (stdin, stdout and stderr all TTYs) and relays our stdin to
 * it; its exit status is the command's (-e).
 */
export function runCliInTerminal(args: string[], extraEnv: Record<string, string> = {}, cwd = REPO_ROOT, entry = shippedBundle()): CliIo {
  const command = [process.execPath, ...nodeArgs(entry), ...args].map(shellQuote).join(" ");
  const child = spawn("script", ["-qfec", command, "/dev/null"], {
    cwd,
    env: cleanEnv({ TERM: "xterm", COLUMNS: "120", LINES: "40", ...extraEnv }),
    stdio: ["pipe", "pipe", "pipe"],
  });
  return track(child, true);
}

/** Kill every child still running (by its own pid) and wait for it to be gone. */
export async function killAllCliIo(): Promise<void> {
  await Promise.all(
    [...children].map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once("close", () => resolve());
          child.kill("SIGKILL");
        }),
    ),
  );
  children.clear();
}
