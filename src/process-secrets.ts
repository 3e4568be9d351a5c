/**
 * Keeps the secrets this process was started with out of what other
 * processes can read about it. Tools run as children of this process and as
 * the same user: `/proc/$PPID/environ` (the environment block as it was at
 * exec: OPENAI_API_KEY, AGENTWIRE_TOKEN, whatever the user had exported) and
 * `/proc/$PPID/cmdline` (`--token …`) were one `cat` away, whatever the
 * tool's own scrubbed environment (tools/tool-environment.ts) left out; and
 * `ps` shows every command line to every local user.
 *
 * Done in this process, first thing at start, rather than by a supervisor
 * that starts the server without the secrets and hands them over a pipe: the
 * supervisor would itself be a process of the same user with the secrets in
 * its environment, one `/proc/$PPID/stat` away from the tool (its parent's
 * parent), so it would need the same clearing anyway — plus signal, exit
 * status and terminal forwarding for chat.
 *
 * How (Linux): /proc/PID/environ reads the memory between env_start and
 * env_end (fields 50 and 51 of /proc/self/stat), the strings the kernel put
 * on the stack at exec. Setting each variable again makes libc copy it to the
 * heap (setenv), so process.env keeps every value; then that stack range is
 * overwritten with zeros through /proc/self/mem. The command line is replaced
 * by setting process.title (libuv writes the title over the original argv
 * area and zero-fills the rest), with secret values masked.
 *
 * What this does not do: a process of the same user may still read this
 * process's heap through /proc/PID/mem where ptrace rules allow it (no Yama,
 * or ptrace_scope 0); the processes that started this one (a shell, npm, a
 * service manager) keep their own environment and command line. A separate
 * user or a sandbox for tools is the boundary for those.
 */
import { closeSync, openSync, readFileSync, writeSync } from "node:fs";

/** Flags whose value is a secret; shown as `***` in the process title (`mcp add`'s --header and --env carry keys as often as not). */
const SECRET_FLAGS = new Set(["--token", "--header", "--env"]);
export const MASK = "***";

/** The command line without secrets: flag values masked, passwords and tokens in URLs masked. */
export function maskedArgs(args: readonly string[]): string[] {
  return splitSecrets(args).masked;
}

/** The masked command line, and the values of SECRET_FLAGS it held (to check they are gone). */
function splitSecrets(args: readonly string[]): { masked: string[]; secrets: string[] } {
  const masked: string[] = [];
  const secrets: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const eq = arg.indexOf("=");
    if (arg.startsWith("--") && eq > 0 && SECRET_FLAGS.has(arg.slice(0, eq))) {
      masked.push(`${arg.slice(0, eq)}=${MASK}`);
      secrets.push(arg.slice(eq + 1));
    } else if (SECRET_FLAGS.has(arg) && i + 1 < args.length) {
      masked.push(arg, MASK);
      secrets.push(args[++i]!);
    } else {
      masked.push(maskUrlSecrets(arg));
    }
  }
  return { masked, secrets: secrets.filter((value) => value !== "") };
}

/** `postgres://u:pw@h` → `postgres://u:***@h`; `?token=x` → `?token=***`. */
function maskUrlSecrets(text: string): string {
  return text
    .replace(/([a-z][a-z0-9+.-]*:\/\/[^\s/@:]*:)[^\s/@]*@/gi, `$1${MASK}@`)
    .replace(/([?&][a-z_-]*(?:token|key|secret|password|passwd|auth)[a-z_-]*=)[^&\s#]*/gi, `$1${MASK}`);
}

/** What `ps` shows for this process: `agentwire serve --port 8765 --token ***`. */
export function processTitle(args: readonly string[]): string {
  return ["agentwire", ...maskedArgs(args)].join(" ");
}

/**
 * Replaces the command line and clears the environment block. Never throws:
 * returns a one-line warning when either could not be done (the caller prints
 * it and goes on), undefined when all went well or there is nothing to clear
 * on this platform. `memPath` is for tests of that warning.
 */
export function hideProcessSecrets(args: readonly string[], options: { memPath?: string } = {}): string | undefined {
  try {
    process.title = processTitle(args);
  } catch {
    // Not settable here: checked below on Linux.
  }
  if (process.platform !== "linux") return undefined;
  const problems: string[] = [];
  try {
    clearEnvironBlock(options.memPath ?? "/proc/self/mem");
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    problems.push(`its environment from /proc/${process.pid}/environ (${reason})`);
  }
  try {
    const cmdline = readFileSync("/proc/self/cmdline", "utf8");
    if (splitSecrets(args).secrets.some((value) => cmdline.includes(value))) problems.push(`--token from /proc/${process.pid}/cmdline`);
  } catch {
    // No cmdline to read: nothing shows it either.
  }
  if (problems.length === 0) return undefined;
  return `could not clear ${problems.join(" or ")}: other processes of this user, tools included, can read them there`;
}

/** Moves every variable to the heap, then zeroes the stack copy /proc/self/environ shows. */
function clearEnvironBlock(memPath: string): void {
  const { envStart, envEnd } = environBounds();
  if (envEnd <= envStart) return;
  // setenv copies NAME=VALUE to the heap and repoints environ at the copy: process.env keeps working.
  for (const name of Object.keys(process.env)) process.env[name] = process.env[name];
  const fd = openSync(memPath, "r+");
  try {
    const length = envEnd - envStart;
    writeSync(fd, Buffer.alloc(length), 0, length, envStart);
  } finally {
    closeSync(fd);
  }
  // Checked, not assumed: a kernel that ignored the write must not pass for a cleared one.
  if (readFileSync("/proc/self/environ").some((byte) => byte !== 0)) throw new Error("the environment block is still readable after clearing");
}

/** env_start and env_end: fields 50 and 51 of /proc/self/stat (Linux ≥ 3.5). */
function environBounds(): { envStart: number; envEnd: number } {
  const stat = readFileSync("/proc/self/stat", "utf8");
  // Field 2, the command name, is in parentheses and may hold spaces: count from after it (field 3).
  const fields = stat.slice(stat.lastIndexOf(")") + 2).trim().split(" ");
  const envStart = Number(fields[50 - 3]);
  const envEnd = Number(fields[51 - 3]);
  if (!Number.isSafeInteger(envStart) || !Number.isSafeInteger(envEnd) || envStart <= 0) {
    throw new Error("/proc/self/stat gives no environment bounds");
  }
  return { envStart, envEnd };
}
