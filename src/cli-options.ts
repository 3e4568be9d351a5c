/**
 * The command line into what to run (a ParsedCli): src/cli-program.ts
 * declares the commands and their flags; this runs the parse. Kept apart
 * from cli.ts (which starts the server on import) so it can be tested.
 * Help and errors are captured, not written: cli.ts writes them and chooses
 * the exit status (a bad command line is 2).
 */
import { CommanderError } from "commander";
import { buildProgram, commandPaths, type ParsedCli } from "./cli-program.js";
import type { CommandPlace } from "./config/resolve-config.js";
import { UsageError } from "./usage-error.js";

export { UsageError } from "./usage-error.js";
export type { CliCommand, ParsedCli } from "./cli-program.js";

/**
 * Flags, environment and configuration files into what to run. A bad
 * command line is a UsageError naming the command, flag or value; a bad
 * file or variable a ConfigFileError naming it.
 */
export function parseCli(argv: string[], env: NodeJS.ProcessEnv, where: CommandPlace = {}): ParsedCli {
  let parsed: ParsedCli | undefined;
  let out = "";
  let err = "";
  // No command at all: the overview, as --help (commander would count it an error).
  // `help mcp add`: commander's help command takes one word, so it becomes `mcp add --help`.
  const words = argv.length === 0 ? ["--help"] : argv[0] === "help" && argv.length > 2 ? [...argv.slice(1), "--help"] : argv;
  const first = words[0];
  const program = buildProgram(env, where, {
    parsed: (result) => (parsed = result),
    out: (text) => (out += text),
    err: (text) => (err += text),
    // `help serve` shows serve's options: only a command word names what runs.
    runs: first !== undefined && !first.startsWith("-") && first !== "help" ? first : undefined,
  });
  try {
    program.parse(words, { from: "user" });
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    if (error.code === "commander.version") return { command: "version" };
    if (error.code === "commander.helpDisplayed" || error.code === "commander.help") {
      // exitCode 0: asked for; otherwise it stands for a missing subcommand (`agentwire mcp`).
      return { command: "help", help: { text: error.exitCode === 0 ? out : err || out, error: error.exitCode !== 0 } };
    }
    throw new UsageError(error.message.replace(/^error: /, ""));
  }
  return parsed!;
}

/** Where to look after a usage error: the help of the command given (`agentwire mcp add --help`), else the overview. */
export function usageHint(argv: string[]): string {
  const known = commandPaths(buildProgram({}, {}, { parsed: () => {}, out: () => {}, err: () => {} })).map((path) => path.join(" "));
  const words = argv.filter((word) => !word.startsWith("-"));
  for (let n = Math.min(2, words.length); n > 0; n--) {
    const path = words.slice(0, n).join(" ");
    if (known.includes(path) && path !== "help") return `agentwire ${path} --help`;
  }
  return "agentwire --help";
}

/**
 * Help texts one after the other, each under its command line: by default
 * `agentwire --help` then every command's own (what the docs' flags are
 * checked against); `commands` picks some (docs/configuration.md shows the
 * overview and serve's).
 */
export function helpReference(commands?: string[][]): string {
  const program = buildProgram({}, { discover: false }, { parsed: () => {}, out: () => {}, err: () => {} });
  const chosen = commands ?? [[], ...commandPaths(program).filter((path) => path[0] !== "help")];
  const texts = chosen.map((path) => {
    const argv = [...path, "--help"];
    return `$ agentwire ${argv.join(" ")}\n${parseCli(argv, {}, { discover: false }).help!.text.trimEnd()}`;
  });
  return `${texts.join("\n\n")}\n`;
}
