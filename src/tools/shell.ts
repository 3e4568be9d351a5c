import { spawn, type ChildProcess } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { stat } from "node:fs/promises";
import { delimiter, isAbsolute, join } from "node:path";
import type { Writable } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import { DEFAULT_SHELL_COMMAND } from "../../protocol/tool-defaults.js";
import { OutputBudget, StreamBudget } from "./output-budget.js";
import { isProcessGroupAlive, signalProcessGroup, toolProcessEnvironment, trackProcessGroup } from "./process-group.js";
import { toolEnvironment } from "./tool-environment.js";
import type { ShellArguments } from "./shell-arguments.js";
import type { Tool, ToolPrepareContext, ToolResult, ToolRunContext } from "./tool.js";
import { builtinParameters } from "./tool-parameters.js";
import { commandCall } from "./tool-display.js";

export interface ShellToolOptions {
  /** Output kept for the model; beyond it the middle is cut (head and tail kept). Default 64 KiB. */
  maxOutputBytes?: number;
  /** Output streamed through onOutput; beyond it one notice is sent and streaming stops. Default 8 MiB. */
  maxStreamBytes?: number;
  /** On timeout, time between SIGTERM and SIGKILL to the process group. Default 500 ms. */
  killGraceMs?: number;
  /** After killing the group, resolve at most this much later even if the pipes stay open. Default 1000 ms. */
  closeWaitMs?: number;
  /**
   * After bash exits, how long background processes may keep its stdout/stderr
   * open before the group is killed. Background jobs that redirected their
   * output (`server > log 2>&1 &`) do not hold the pipes and are left running
   * until the server stops. Default 500 ms.
   */
  exitDrainMs?: number;
  /**
   * The command's environment (plus the server's scope marker, see
   * process-group.ts). Default: `toolEnvironment(process.env)` at creation —
   * the harmless defaults only, never the server's secrets.
   */
  env?: Readonly<Record<string, string>>;
  /**
   * The program and arguments a command line is run with, the line passed
   * last (config `tools.shell.command`). Default ["bash", "-c"].
   */
  command?: readonly string[];
}

type Settings = Required<ShellToolOptions>;

const DEFAULTS: Omit<Settings, "env"> = {
  command: DEFAULT_SHELL_COMMAND,
  maxOutputBytes: 64 * 1024,
  maxStreamBytes: 8 * 1024 * 1024,
  killGraceMs: 500,
  closeWaitMs: 1000,
  exitDrainMs: 500,
};

/** setTimeout fires at once for delays above this. */
const MAX_TIMER_MS = 2_147_483_647;

export function createShellTool(options: ShellToolOptions = {}): Tool<ShellArguments> {
  const settings = resolveSettings(options);
  const held = new Map<string, HeldProcess>();
  return {
    name: "shell",
    description:
      `Run a command with \`${settings.command.join(" ")}\` in the workspace directory and return its stdout and stderr ` +
      "interleaved, followed by the exit code when it is not 0. Non-interactive: no stdin and no " +
      "terminal, so avoid commands that prompt, page or open an editor. Output beyond " +
      `${Math.round(settings.maxOutputBytes / 1024)} KiB is cut in the middle (start and end kept); ` +
      "pipe through `head`, `tail` or `grep` for long output. The command is stopped at the time " +
      "limit, and background processes still attached to its output are stopped when it ends.",
    parameters: builtinParameters("shell", async () => (await import("./shell-arguments.js")).ShellArguments),
    // A command can do anything: never read-only, possibly destructive.
    annotations: { readOnlyHint: false, destructiveHint: true },
    source: "builtin",
    kind: "execute",
    title: "Run command",
    describeCall: (args) => commandCall(args.command),
    prepare: (args, context) => holdCommand(args.command, context, settings, held),
    run: (args, context) =>
      runShellCommand(args.command, { ...context, timeoutMs: effectiveTimeout(context.timeoutMs, args.timeoutMs) }, settings, held),
  };
}

function resolveSettings(options: ShellToolOptions): Settings {
  return { ...DEFAULTS, ...definedOnly(options), env: options.env ?? toolEnvironment(process.env) };
}

/**
 * Runs one command line exactly as the shell tool does — streamed output,
 * output budgets, the time limit, process-group kill on interrupt, the
 * reaper — for tools that are commands underneath (custom tools). Data for
 * the command belongs in `options.env`, never in `command`.
 */
export function runCommandLine(command: string, context: RunContext, options: ShellToolOptions = {}): Promise<ToolResult> {
  return runShellCommand(command, context, resolveSettings(options));
}

/** The smaller of the configured and per-call limits; undefined when neither is a positive finite number. */
export function effectiveTimeout(configured: number, perCall: number | undefined): number | undefined {
  const limits = [configured, perCall].filter((ms): ms is number => typeof ms === "number" && Number.isFinite(ms) && ms > 0);
  return limits.length > 0 ? Math.min(...limits) : undefined;
}

export type RunContext = Omit<ToolRunContext, "timeoutMs"> & { timeoutMs: number | undefined };

function runShellCommand(command: string, context: RunContext, settings: Settings, held?: Map<string, HeldProcess>): Promise<ToolResult> {
  if (context.signal.aborted) {
    return Promise.resolve({ success: false, exitCode: null, output: "[interrupted before the command started]" });
  }
  const ready = held && context.toolCallId !== undefined ? takeHeld(held, context.toolCallId, command, context.cwd) : undefined;
  return new Promise<ToolResult>((resolve) => {
    if (ready) {
      // The call is approved (and stored as executing): let the held process run the command.
      (ready.child.stdio[3] as Writable).end("run\n");
      new ShellRun(ready.child, context, settings, resolve, ready.releaseGroup).start();
      return;
    }
    let child: ChildProcess;
    try {
      const [program, ...args] = settings.command;
      child = spawn(program!, [...args, command], {
        cwd: context.cwd,
        env: toolProcessEnvironment(settings.env),
        stdio: ["ignore", "pipe", "pipe"],
        detached: true,
      });
    } catch (error) {
      // Synchronous failures: e.g. a NUL byte in the command.
      resolve({ success: false, exitCode: null, output: `[could not start the command: ${errorMessage(error)}]` });
      return;
    }
    new ShellRun(child, context, settings, resolve).start();
  });
}

type Ending = "timeout" | "interrupt";

/** One running command: owns its timers and listeners and removes them all when it settles. */
class ShellRun {
  private readonly output: OutputBudget;
  private readonly stream: StreamBudget;
  private readonly decoders = { stdout: new StringDecoder("utf8"), stderr: new StringDecoder("utf8") };
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly cleanups: Array<() => void> = [];
  private ending: Ending | null = null;
  private exitCode: number | null = null;
  private exitSignal: NodeJS.Signals | null = null;
  private exited = false;
  private holdersKilled = false;
  private settled = false;

  constructor(
    private readonly child: ChildProcess,
    private readonly context: RunContext,
    private readonly settings: Settings,
    private readonly resolve: (result: ToolResult) => void,
    /** The group's release when it is tracked already (a held process); else start() tracks it. */
    private releaseGroup?: () => void,
  ) {
    this.output = new OutputBudget(settings.maxOutputBytes);
    this.stream = new StreamBudget(
      settings.maxStreamBytes,
      context.onOutput,
      `\n[output beyond ${settings.maxStreamBytes} bytes is not streamed; the command keeps running]\n`,
    );
  }

  start(): void {
    const { child, context } = this;
    this.listen(child, "error", (error: Error) => void this.onError(error));
    // Without a pid the spawn failed: 'error' settles, with a message naming the cause.
    this.listen(child, "exit", (code: number | null, signal: NodeJS.Signals | null) => {
      if (child.pid !== undefined) this.onExit(code, signal);
    });
    this.listen(child, "close", (code: number | null, signal: NodeJS.Signals | null) => {
      if (child.pid === undefined) return;
      this.onExit(code, signal);
      this.settle();
    });
    for (const kind of ["stdout", "stderr"] as const) {
      const pipe = child[kind];
      if (!pipe) continue;
      this.listen(pipe, "data", (chunk: Buffer) => this.receive(kind, this.decoders[kind].write(chunk)));
      this.listen(pipe, "end", () => this.receive(kind, this.decoders[kind].end()));
    }
    if (child.pid !== undefined) this.releaseGroup ??= trackProcessGroup(child.pid);

    const onAbort = () => this.kill("interrupt");
    context.signal.addEventListener("abort", onAbort, { once: true });
    this.cleanups.push(() => context.signal.removeEventListener("abort", onAbort));
    if (context.timeoutMs !== undefined) {
      this.later(Math.min(context.timeoutMs, MAX_TIMER_MS), () => this.kill("timeout"));
    }
  }

  private listen(emitter: NodeJS.EventEmitter, event: string, listener: (...args: never[]) => void): void {
    const handler = listener as (...args: unknown[]) => void;
    emitter.on(event, handler);
    this.cleanups.push(() => emitter.off(event, handler));
  }

  private later(ms: number, action: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      action();
    }, ms);
    this.timers.add(timer);
  }

  private receive(kind: "stdout" | "stderr", text: string): void {
    if (text === "") return;
    this.output.append(text);
    this.stream.send(kind, text);
  }

  private onExit(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.exited) return;
    this.exited = true;
    this.exitCode = code;
    this.exitSignal = signal;
    if (this.ending !== null) return;
    // bash is gone; anything still holding the pipes is a background job of
    // this command. Give it a moment to finish writing, then end it.
    this.later(this.settings.exitDrainMs, () => {
      const pid = this.child.pid;
      if (pid !== undefined && signalProcessGroup(pid, "SIGKILL")) this.holdersKilled = true;
      this.later(this.settings.closeWaitMs, () => this.settle());
    });
  }

  private async onError(error: Error): Promise<void> {
    if (this.child.pid !== undefined) return; // Spawned fine; 'close' still comes.
    const message = await describeSpawnError(error, this.context.cwd, this.settings.command[0]!);
    this.settle(message);
  }

  private kill(ending: Ending): void {
    const pid = this.child.pid;
    if (this.settled || this.ending !== null || pid === undefined) return;
    this.ending = ending;
    if (ending === "interrupt") {
      signalProcessGroup(pid, "SIGKILL");
    } else {
      signalProcessGroup(pid, "SIGTERM");
      this.later(this.settings.killGraceMs, () => {
        if (isProcessGroupAlive(pid)) signalProcessGroup(pid, "SIGKILL");
      });
    }
    // A process that left the group may still hold the pipes: do not wait for it.
    this.later(this.settings.closeWaitMs, () => this.settle());
  }

  private settle(spawnError?: string): void {
    if (this.settled) return;
    this.settled = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const cleanup of this.cleanups.splice(0)) cleanup();

    const pid = this.child.pid;
    // Cut the SIGTERM grace short rather than leave a timer or a survivor behind.
    if (this.ending !== null && pid !== undefined && isProcessGroupAlive(pid)) signalProcessGroup(pid, "SIGKILL");
    // stdout, stderr and, for a held process, the pipe it was told to go on.
    for (const pipe of this.child.stdio.slice(1)) pipe?.destroy();
    for (const kind of ["stdout", "stderr"] as const) {
      const rest = this.decoders[kind].end();
      if (rest !== "") this.output.append(rest);
    }

    if (spawnError !== undefined) {
      this.resolve({ success: false, exitCode: null, output: spawnError });
      return;
    }
    const notes: string[] = [];
    if (this.ending === "timeout") notes.push(`[timed out after ${this.context.timeoutMs} ms]`);
    else if (this.ending === "interrupt") notes.push("[interrupted]");
    else if (this.exitSignal !== null) notes.push(`[killed by signal ${this.exitSignal}]`);
    else if (this.exitCode !== 0) notes.push(`[exit code: ${this.exitCode ?? "unknown"}]`);
    if (this.holdersKilled) notes.push("[background processes that kept the output open were stopped]");

    let text = this.output.toString();
    if (notes.length > 0) text += (text === "" || text.endsWith("\n") ? "" : "\n") + notes.join("\n");
    this.resolve({
      success: this.ending === null && this.exitCode === 0,
      exitCode: this.exitCode,
      output: text,
    });
    this.releaseLater();
  }

  /**
   * Hand the group back (see trackProcessGroup) once the result is on its
   * way: telling whether anything of it still lives is a kill(2) that fails
   * with ESRCH — a thrown error — and forgetting it is a write to the
   * reaper, ~0.1 ms that the result need not wait for. The group stays
   * covered meanwhile (killed on exit, watched by the reaper).
   */
  private releaseLater(): void {
    const release = this.releaseGroup;
    this.releaseGroup = undefined;
    if (release) setImmediate(release);
  }
}

/**
 * A call waiting for approval gets its process started at once, held before
 * the command: `/bin/sh` with the command line in its arguments, reading its
 * fd 3. Told `run` (once the call is approved and stored as executing), it
 * closes fd 3 and execs the configured program in its own place — the same
 * pid and process group, working directory, stdio, arguments and environment
 * as a direct spawn. Anything else (its pipe closed, or killed) ends it with
 * nothing run. What the approval then costs is an exec from a small shell:
 * the fork of this server, whose cost grows with its memory, and the exec
 * that tears the copy down were done while the user decided.
 * `unset PWD`: sh would otherwise add the variable for the program.
 */
const HOLD = 'IFS= read -r go <&3 && [ "$go" = run ] || exit 125; exec 3<&-; unset PWD; exec "$0" "$@"';

/**
 * Processes held at once by one server, whatever number of calls wait: each is a process, and what
 * clients can make the server hold is bounded. A call past it starts its process when approved.
 */
export const MAX_HELD_PROCESSES = 16;

interface HeldProcess {
  child: ChildProcess;
  command: string;
  cwd: string;
  /** trackProcessGroup's release, for the run that uses the process. */
  releaseGroup: () => void;
  /** Kill it, nothing run; a no-op once a run has taken it. */
  discard(): void;
  /** Hand it to a run: false when it was discarded. */
  take(): boolean;
}

/** Tool.prepare of the shell tool: hold a process for the call (see HOLD); returns what discards it. */
function holdCommand(command: string, context: ToolPrepareContext, settings: Settings, held: Map<string, HeldProcess>): () => void {
  const none = () => {};
  if (held.has(context.toolCallId) || held.size >= MAX_HELD_PROCESSES || !canHold(settings, context.cwd)) return none;
  const env = toolProcessEnvironment(settings.env);
  let child: ChildProcess;
  try {
    child = spawn("/bin/sh", ["-c", HOLD, ...settings.command, command], {
      cwd: context.cwd,
      env,
      stdio: ["ignore", "pipe", "pipe", "pipe"],
      detached: true,
    });
  } catch {
    return none; // the run spawns it itself and reports why it cannot
  }
  child.on("error", () => {}); // a spawn that failed (no pid: the run reports it) or a kill that did
  const pid = child.pid;
  if (pid === undefined) return none;
  child.stdio[3]!.on("error", () => {}); // EPIPE when it is gone already
  const releaseGroup = trackProcessGroup(pid);
  let over = false;
  const onExit = () => entry.discard(); // killed while held: forget it
  const entry: HeldProcess = {
    child,
    command,
    cwd: context.cwd,
    releaseGroup,
    discard() {
      if (over) return;
      over = true;
      if (held.get(context.toolCallId) === entry) held.delete(context.toolCallId);
      child.off("exit", onExit);
      try {
        signalProcessGroup(pid, "SIGKILL");
      } catch {
        // Not ours to signal any more: nothing ran in it.
      }
      for (const pipe of child.stdio.slice(1)) pipe?.destroy();
      releaseGroup();
    },
    take() {
      if (over) return false;
      over = true;
      held.delete(context.toolCallId);
      child.off("exit", onExit);
      return true;
    },
  };
  child.once("exit", onExit);
  held.set(context.toolCallId, entry);
  return () => entry.discard();
}

/** The process held for this call, when it is for this command line and directory and still waiting. */
function takeHeld(held: Map<string, HeldProcess>, toolCallId: string, command: string, cwd: string): HeldProcess | undefined {
  const entry = held.get(toolCallId);
  if (!entry) return undefined;
  const waiting = entry.child.exitCode === null && entry.child.signalCode === null;
  if (!waiting || entry.command !== command || entry.cwd !== cwd) {
    entry.discard(); // other arguments (tool.confirm edited them): a direct spawn
    return undefined;
  }
  return entry.take() ? entry : undefined;
}

/**
 * Whether sh can stand in for the spawn unnoticed: every variable name is
 * one sh passes on (it drops names such as `A.B`), PWD is not set (HOLD
 * unsets it), and the program is found — otherwise the direct spawn reports
 * a missing program as it always has.
 */
function canHold(settings: Settings, cwd: string): boolean {
  if (process.platform === "win32") return false;
  const names = Object.keys(settings.env);
  if (names.includes("PWD") || !names.every((name) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(name))) return false;
  const program = settings.command[0]!;
  const candidates = program.includes("/")
    ? [isAbsolute(program) ? program : join(cwd, program)]
    : (settings.env.PATH ?? "").split(delimiter).filter((dir) => isAbsolute(dir)).map((dir) => join(dir, program));
  return candidates.some((file) => {
    try {
      accessSync(file, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

async function describeSpawnError(error: Error, cwd: string, program: string): Promise<string> {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "ENOENT" || code === "ENOTDIR") {
    // Node reports a bad cwd as "spawn bash ENOENT", like a missing program; say which one it was.
    try {
      const info = await stat(cwd);
      if (!info.isDirectory()) return `[could not start the command: working directory ${cwd} is not a directory]`;
    } catch {
      return `[could not start the command: working directory ${cwd} does not exist]`;
    }
    return `[could not start the command: ${program} was not found on PATH (tools.shell.command)]`;
  }
  return `[could not start the command in ${cwd}: ${error.message}]`;
}

function definedOnly<T extends object>(options: T): Partial<T> {
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)) as Partial<T>;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
