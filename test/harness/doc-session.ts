/**
 * One bash session per documentation page, as a reader who types the page's
 * commands into one terminal: blocks run in order in the same shell, so an
 * `export` or `cd` in one block holds for the next, and a server started with
 * `&` keeps running. The session runs in its own process group, killed whole
 * at the end.
 *
 * Each block runs as `{ …; } </dev/null 2>&1` followed by a sentinel line
 * carrying its exit status; an ERR trap reports each command that failed
 * inside it (the group's own status is only the last command's).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";

export interface BlockRun {
  /** stdout and stderr, interleaved as written. */
  output: string;
  /** The block's exit status (its last command's). */
  code: number;
  /** Lines of the commands that failed inside it (from the ERR trap), if any. */
  failed: string[];
  /** With `until`: whether the text was printed (the block may have ended without it). */
  printed?: boolean;
}

export class ShellSession {
  private out = "";
  private readonly waiters = new Set<() => void>();
  private counter = 0;
  private exited = false;

  private constructor(private readonly child: ChildProcess, private readonly scratch: string) {
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => this.feed(chunk));
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => this.feed(chunk));
    child.on("close", () => {
      this.exited = true;
      for (const wake of this.waiters) wake();
    });
  }

  /** `scratch` is a directory the session may write its own files to (env snapshots). */
  static start(cwd: string, env: NodeJS.ProcessEnv, scratch: string): ShellSession {
    const child = spawn("bash", ["--noprofile", "--norc"], { cwd, env, stdio: ["pipe", "pipe", "pipe"], detached: true });
    return new ShellSession(child, scratch);
  }

  private feed(chunk: string): void {
    this.out += chunk;
    for (const wake of this.waiters) wake();
  }

  /** Resolves once `test(output so far)` holds; rejects after `timeoutMs` or if the shell died. */
  private waitFor<T>(test: (out: string) => T | undefined, timeoutMs: number, what: string): Promise<T> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = test(this.out);
        if (found !== undefined) finish(undefined, found);
        else if (this.exited) finish(new Error(`the shell exited while waiting for ${what}; output:\n${this.out}`));
      };
      const timer = setTimeout(() => finish(new Error(`no ${what} within ${timeoutMs} ms; output:\n${this.out}`)), timeoutMs);
      const finish = (error?: Error, value?: T) => {
        clearTimeout(timer);
        this.waiters.delete(check);
        if (error) reject(error);
        else resolve(value!);
      };
      this.waiters.add(check);
      check();
    });
  }

  /**
   * Run `script` in the session and wait for it to return; with `until`, also
   * wait until its output (background jobs' included) contains that text — for
   * a block that starts a server, in the background or in the foreground (then
   * the session cannot run anything after it). `times`: that many times (a
   * block that starts several servers).
   */
  async run(script: string, options: { until?: string; times?: number; timeoutMs?: number; trapErrors?: boolean } = {}): Promise<BlockRun> {
    const n = ++this.counter;
    const sentinel = `__docs_block_${n}_done__`;
    const errMark = `__docs_block_${n}_failed__`;
    const start = this.out.length;
    const timeoutMs = options.timeoutMs ?? 30_000;
    const trap = options.trapErrors === false ? "" : `trap 'echo "${errMark} line $LINENO: $BASH_COMMAND"' ERR\n`;
    this.child.stdin!.write(`${trap}{\n${script}\n} </dev/null 2>&1\necho "${sentinel} $?"\ntrap - ERR\n`);
    const since = () => this.out.slice(start);
    if (options.until !== undefined) {
      const until = options.until;
      const times = options.times ?? 1;
      const printed = (text: string) => text.split(until).length - 1 >= times;
      const done = () => new RegExp(`${sentinel} (\\d+)\\n`).exec(since());
      // The text, or a command of the block that failed (a server that could not start): no need to wait longer.
      await this.waitFor((out) => (printed(out.slice(start)) || out.includes(errMark) ? true : undefined), timeoutMs, JSON.stringify(until));
      // A foreground server never returns: what it printed so far stands for the block.
      const output = since();
      return { output, code: Number(done()?.[1] ?? 0), failed: failures(output, errMark), printed: printed(output) };
    }
    const code = await this.waitFor((out) => {
      const done = new RegExp(`${sentinel} (\\d+)\\n`).exec(out.slice(start));
      return done ? Number(done[1]) : undefined;
    }, timeoutMs, `end of block ${n}`);
    const output = since().replace(new RegExp(`${sentinel} \\d+\\n[\\s\\S]*$`), "");
    return { output, code, failed: failures(output, errMark) };
  }

  /** The session's working directory and environment now (for a command run on a terminal of its own). */
  async snapshot(): Promise<{ cwd: string; env: NodeJS.ProcessEnv }> {
    const n = this.counter + 1;
    const cwdFile = join(this.scratch, `cwd-${n}`);
    const envFile = join(this.scratch, `env-${n}`);
    await this.run(`pwd > '${cwdFile}'; env -0 > '${envFile}'`);
    const env: NodeJS.ProcessEnv = {};
    for (const entry of (await readFile(envFile, "utf8")).split("\0")) {
      const eq = entry.indexOf("=");
      if (eq > 0) env[entry.slice(0, eq)] = entry.slice(eq + 1);
    }
    return { cwd: (await readFile(cwdFile, "utf8")).trim(), env };
  }

  /** Kill the shell and everything it started (its process group). */
  async close(): Promise<void> {
    if (this.exited) return;
    const closed = new Promise<void>((resolve) => this.child.once("close", () => resolve()));
    try {
      process.kill(-this.child.pid!, "SIGKILL");
    } catch {
      // already gone
    }
    await closed;
  }
}

function failures(output: string, errMark: string): string[] {
  return output
    .split("\n")
    .filter((line) => line.startsWith(errMark))
    .map((line) => line.slice(errMark.length + 1));
}
