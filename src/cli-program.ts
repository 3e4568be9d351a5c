/**
 * Every `agentwire` command, its flags, help and examples, declared with
 * commander. Parsing only: each command's action turns its flags into what
 * the command needs (a ParsedCli) and src/cli.ts then loads and runs the
 * command itself, lazily, so serve's start-up never loads a client command.
 *
 * The flags that set a configuration key are the schema's (`.meta({ flag })`
 * in protocol/config*.ts), with the schema's help text, each read as its
 * key's type (valueFromText): serve and config take all of them, the client
 * commands those that make sense for the server they embed when no --url is
 * given.
 */
import { Command, Option } from "commander";
import type { McpArgs, ChatArgs, ConnectionTarget, ConversationsArgs, FlagValues, InfoArgs } from "./chat/chat-options.js";
import { chatArgs, conversationsArgs, infoArgs, mcpDefinition, mcpServerName, NOT_FOR_EMBEDDED, connectionTarget } from "./chat/chat-options.js";
import { clientEnvironmentHelp, CONFIG_FILES_HELP, environmentHelp, examples, HELP_WIDTH, optionDescription } from "./cli-help.js";
import { userConfigPath } from "./config/config-discovery.js";
import { type ConfigKey, flaggedKeys, valueFromText } from "./config/config-keys.js";
import { type ConfigLayer, setAt } from "./config/config-layers.js";
import { type CommandPlace, type ResolvedConfig, resolveCommandConfig } from "./config/resolve-config.js";
import type { ServerConfig } from "./config/server-config.js";
import { type TrustArgs, trustArgs } from "./config/trust-command.js";
import { SERVER_VERSION } from "./server-version.js";
import { readTokenFile } from "./token-file.js";
import { UsageError } from "./usage-error.js";

export type CliCommand = "serve" | "config" | "chat" | "acp" | "conversations" | "trust" | "mcp" | "models" | "tools" | "status" | "help" | "version";

export interface ParsedCli {
  command: CliCommand;
  /** The effective configuration (serve, config). */
  config?: ServerConfig;
  resolved?: ResolvedConfig;
  /** `--json`: config, and the client commands that are not chat. */
  json?: boolean;
  /** `agentwire config --schema`. */
  schema?: boolean;
  chat?: ChatArgs;
  /** `agentwire acp`: where to reach agentwire. */
  acp?: { target: ConnectionTarget; maxUnsentBytes?: number };
  conversations?: ConversationsArgs;
  trust?: TrustArgs;
  mcp?: McpArgs;
  /** `agentwire models`, `tools`, `status`. */
  info?: InfoArgs;
  /** help: the text; `error` when it stands for a command that was missing (stderr, exit 2). */
  help?: { text: string; error: boolean };
}

export interface ProgramSinks {
  /** Called by the action of the command that was given. */
  parsed(result: ParsedCli): void;
  /** Where commander writes help (stdout's) and errors (stderr's). */
  out(text: string): void;
  err(text: string): void;
  /**
   * The top-level command that will run (`chat` of `chat "hello"`): the
   * configuration keys' flags, ~40 options a command, are added to it
   * alone — adding them to every command was ~5–15 ms of each start. Unset:
   * every command gets its options (help, the reference docs).
   */
  runs?: string;
}

/** Each program's `runs` (see ProgramSinks). */
const RUNS = new WeakMap<Command, string>();

/** Whether `command` belongs to another top-level command than the one that will run: its flags are never read. */
function notRun(command: Command): boolean {
  let top = command;
  while (top.parent?.parent) top = top.parent;
  const runs = top.parent ? RUNS.get(top.parent) : undefined;
  return runs !== undefined && top.name() !== runs && !top.aliases().includes(runs);
}

/** `--data-dir DIR` → `--data-dir <DIR>`; a list flag repeats (and each may hold commas). */
function configOption(key: ConfigKey): Option {
  const [flag, argument] = key.flag!.split(" ");
  const option = new Option(`${flag} <${argument}>`, optionDescription(key));
  if (key.value.kind === "list") option.argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]);
  return option;
}

/** The command's flag values by flag name without the dashes, as chat-options.ts reads them. */
function flagValues(command: Command): FlagValues {
  const values: FlagValues = {};
  for (const option of command.options) {
    const value = command.getOptionValue(option.attributeName()) as FlagValues[string];
    if (value !== undefined && option.long) values[option.long.slice(2)] = value;
  }
  return values;
}

/** serve's and config's flags: every configuration key's, --token-file and --config. */
function addServerOptions(command: Command): Command {
  if (notRun(command)) return command;
  for (const key of flaggedKeys().values()) command.addOption(configOption(key));
  return command
    .option("--token-file <FILE>", "require the token in FILE (read once, whitespace trimmed); prefer it to --token, which every local user can read (ps) until the server has started")
    .option("--config <FILE>", "read FILE after the configuration files found (see Configuration files)");
}

/** The configuration from serve's or config's flags, over the files and the environment. */
function serverConfig(command: Command, env: NodeJS.ProcessEnv, where: CommandPlace): ResolvedConfig {
  const values = flagValues(command);
  const flags: ConfigLayer = { label: "flags", values: {}, sources: {} };
  const set = (flag: string, path: string, value: unknown) => {
    setAt(flags.values, path, value);
    flags.sources![path] = `flag ${flag}`;
  };
  for (const [flag, key] of flaggedKeys()) {
    const text = values[flag.slice(2)];
    if (text === undefined) continue;
    const read = valueFromText(key, typeof text === "string" ? [text] : (text as string[]));
    if ("problem" in read) throw new UsageError(`${flag} ${read.problem}`);
    set(flag, key.path, read.value);
  }
  const tokenFile = values["token-file"] as string | undefined;
  if (tokenFile !== undefined) {
    if (values.token !== undefined) throw new UsageError("--token and --token-file cannot go together");
    set("--token-file", "server.token", readTokenFile(tokenFile));
  }
  return resolveCommandConfig(flags, env, where, values.config as string | undefined);
}

/**
 * A client command's connection flags, then, grouped apart, the flags of
 * the server it embeds when no --url is given (the configuration keys'
 * flags, but those that place a server: it does not listen, its command speaks to it in memory).
 */
function addClientOptions(command: Command, jsonHelp: string | undefined, own: (command: Command) => void = () => {}, environment: [string, string][] = []): Command {
  if (notRun(command)) return command;
  command
    .option("--url <URL>", "a running server (ws://HOST:PORT; else AGENTWIRE_URL); without one, the server running here that holds the data dir, else one started inside the command")
    .option("--token-file <FILE>", "the server's token, read from FILE (else AGENTWIRE_TOKEN)")
    .option("--token <TOKEN>", "the token itself (ps shows it to every local user: prefer --token-file)");
  if (jsonHelp !== undefined) command.option("--json", jsonHelp);
  own(command);
  command.optionsGroup("Embedded server (without --url; as for serve):");
  command.option("--config <FILE>", "read FILE after the configuration files found");
  const taken = new Set(command.options.map((option) => option.long));
  for (const [flag, key] of flaggedKeys()) {
    if (NOT_FOR_EMBEDDED.has(flag) || taken.has(flag)) continue;
    const option = configOption(key);
    // The embedded server is quiet unless asked: its log would interleave with the command's output.
    if (flag === "--log-level") option.description = `${option.description.replace(/; default [a-z]+\)$/, ")")} (default error here)`;
    // Taken, but listed once, under serve: a client command's help stays about the command.
    if (!SHOWN_EMBEDDED.has(flag)) option.hideHelp();
    command.addOption(option);
  }
  command.optionsGroup("Options:");
  // afterAll: below the command's examples (added later, "after").
  command.addHelpText("afterAll", `\n${clientEnvironmentHelp(environment)}`);
  return command;
}

/** The embedded server's flags a client command's help lists; it takes the others too (its help says so). */
const SHOWN_EMBEDDED = new Set(["--data-dir", "--store", "--model", "--log-level"]);

/** Settings every command takes from its parent at creation: set on the program before any command is added. */
// Help lines wrap at HELP_WIDTH whatever the terminal, so the copy in docs/configuration.md is the same everywhere.
function configure(program: Command, sinks: ProgramSinks): Command {
  return program
    .exitOverride()
    .configureOutput({ writeOut: sinks.out, writeErr: sinks.err, outputError: () => {}, getOutHelpWidth: () => HELP_WIDTH, getErrHelpWidth: () => HELP_WIDTH })
    .configureHelp({ helpWidth: HELP_WIDTH, showGlobalOptions: false });
}

/** The whole command line. `env` and `where` are the process's (tests pass others). */
export function buildProgram(env: NodeJS.ProcessEnv, where: CommandPlace, sinks: ProgramSinks): Command {
  const program = configure(new Command("agentwire"), sinks)
    .description(`agentwire ${SERVER_VERSION} — agent protocol server (JSON-RPC 2.0 over one WebSocket)`)
    .version(SERVER_VERSION, "-v, --version", "print the version")
    .helpOption("-h, --help", "show this help")
    .helpCommand("help [command]", "a command's help and examples")
    .addHelpText("after", "\nagentwire help COMMAND (or agentwire COMMAND --help): its options and examples.");
  if (sinks.runs !== undefined) RUNS.set(program, sinks.runs);

  // The help texts that list every variable are written when help is shown: built here, they were ~10 % of building the program.
  addServerOptions(program.command("serve").summary("start the server").description("start the server: prints `agentwire listening on ws://HOST:PORT` once ready; logs go to stderr"))
    .addHelpText("after", () => `${examples([
      ["serve --port 7600", "listen on 127.0.0.1:7600"],
      ["serve --host 0.0.0.0 --token-file ~/.agentwire-token", "listen on every interface, requiring the token in the file"],
    ])}\n\n${environmentHelp()}\n\n${CONFIG_FILES_HELP}`)
    .action((_options: unknown, command: Command) => {
      const resolved = serverConfig(command, env, where);
      sinks.parsed({ command: "serve", config: resolved.config, resolved });
    });

  addServerOptions(program.command("config").summary("print the effective configuration").description("print the effective configuration and where each value came from (secrets masked)"))
    .option("--json", "the configuration and its sources as JSON")
    .option("--schema", "print the path of the configuration file's JSON Schema (for $schema in agentwire.json)")
    .addHelpText("after", () => `${examples([
      ["config", "what serve would run with here, and why"],
      ["config --json --port 9000", "the same as JSON, with a flag on top"],
      ["config --schema", "the JSON Schema's path, for editors"],
    ])}\n\n${environmentHelp()}\n\n${CONFIG_FILES_HELP}`)
    .action((options: { json?: boolean; schema?: boolean }, command: Command) => {
      if (options.schema) return sinks.parsed({ command: "config", schema: true, json: options.json === true });
      const resolved = serverConfig(command, env, where);
      sinks.parsed({ command: "config", config: resolved.config, resolved, json: options.json === true });
    });

  addClientOptions(
    program
      .command("chat")
      .summary("talk to an agent (terminal or script)")
      .description(
        "talk to an agent from the terminal or a script. PROMPT comes from the arguments, else from stdin when it is not a terminal. " +
          "On a terminal, chat streams the answer, asks about each tool call ([y]es, [n]o = skip, [e]dit the arguments in $EDITOR, [a]uto N), " +
          "then reads the next message (Ctrl-D ends); Ctrl-C interrupts the generation, a second one exits. Without a terminal and without " +
          "--yes/--auto/--deny, tool calls are skipped; a question the agent or an MCP server asks is answered on a terminal and declined without one. Exit status: 0 the generation completed, 1 an error (model, connection, request), " +
          "2 bad usage, 130 interrupted.",
      )
      .argument("[prompt...]", "the message (words are joined with spaces)"),
    "every notification and result as one JSON object per line on stdout, ending with {\"type\":\"end\",\"outcome\":…}",
    (command) =>
      command
        .option("--conversation <ID>", "continue this conversation (default: a new one, whose workspace is the working directory)")
        .option("-c, --continue", "continue the most recent conversation whose workspace is the working directory")
        .option("--model <MODEL>", "model for this conversation / step (and the embedded server's default)")
        .option("--mode <NAME>", "the conversation's mode: ask, plan, code, auto or a configured one (settings.mode; /mode switches on the terminal)")
        .option("--attach <PATH[:START-END]>", "attach a workspace file, or lines START to END of it (repeatable)", (value: string, previous: string[] | undefined) => [...(previous ?? []), value])
        .option("-y, --yes", "run every tool call without asking")
        .option("--auto <N>", "run the first N tool calls of each step without asking, then ask (or skip, without a terminal)")
        .option("--deny", "skip every tool call"),
    [
      ["EDITOR, VISUAL", "the editor for [e]dit (default vi)"],
      ["NO_COLOR", "no colours (also off when the output is not a terminal)"],
    ],
  )
    .addHelpText("after", `${examples([
      ['chat "What does src/cli.ts do?"', "one question; the answer streams to stdout"],
      ["chat", "a conversation on the terminal (Ctrl-D ends)"],
      ['chat --continue "and the tests?"', "go on with the last conversation of this directory"],
      ['chat --mode plan "how would you add caching?"', "read-only tools: explore and propose a plan"],
      ['chat --yes --json "run the tests" | jq .', "a script: tools run without asking, NDJSON out"],
      ["chat --attach src/cli.ts:1-40 \"explain this\"", "with lines 1-40 of a file attached"],
      ["chat --url ws://127.0.0.1:7600 --token-file tok \"hi\"", "through a running server"],
    ])}`)
    .action((words: string[], _options: unknown, command: Command) => {
      sinks.parsed({ command: "chat", chat: chatArgs(words, flagValues(command), env, where) });
    });

  addClientOptions(
    program
      .command("acp")
      .summary("an Agent Client Protocol agent on stdio (for Zed, JetBrains, Neovim…)")
      .description(
        "speak the Agent Client Protocol (ACP) on stdin/stdout, for an editor that starts agents as child processes (see docs/acp.md): " +
          "each editor session is an agentwire conversation, which other clients of the same server can watch and approve. " +
          "stdout carries only ACP frames; logs go to stderr. Ends when stdin closes, with its embedded server and the tool processes.",
      ),
    undefined,
    (command) =>
      command.option(
        "--max-unsent-bytes <N>",
        "bound of the session updates waiting for an editor that stopped reading stdout (default 8388608): past it the editor's running prompts are interrupted and streamed output is dropped with a marker",
      ),
  )
    .addHelpText("after", `${examples([
      ["acp", "for an editor: an embedded server on the usual data dir (or the server running here that holds it)"],
      ["acp --url ws://127.0.0.1:7600 --token-file tok", "the editor's sessions on a running server, where a web client can follow them"],
    ])}`)
    .action((_options: unknown, command: Command) => {
      const values = flagValues(command);
      const bound = values["max-unsent-bytes"] as string | undefined;
      const maxUnsentBytes = bound === undefined ? undefined : Number(bound);
      if (maxUnsentBytes !== undefined && !(Number.isSafeInteger(maxUnsentBytes) && maxUnsentBytes >= 65536)) {
        throw new UsageError(`--max-unsent-bytes must be an integer ≥ 65536, got "${bound}"`);
      }
      sinks.parsed({ command: "acp", acp: { target: connectionTarget(values, env, where), ...(maxUnsentBytes !== undefined ? { maxUnsentBytes } : {}) } });
    });

  addClientOptions(
    program
      .command("conversations")
      .summary("list, show, rm, export, rewind or compact conversations")
      .description("list, print, delete or export the stored conversations; take back the end of one (rewind, with its files), put it back (unrewind), or compact it (the model summarizes it)")
      .argument("[action]", "list, show, rm, export, rewind, unrewind or compact")
      .argument("[id]", "the conversation (every action but list)"),
    "JSON output (list, show, rewind, unrewind, compact)",
    (command) =>
      command
        .option("--format <FORMAT>", "conversations export: json or markdown (default json)")
        .option("--limit <N>", "conversations list: at most N (default all)")
        .option("--before <RECORD_ID>", "conversations rewind: the first record to take back (it and every later one leave the conversation)")
        .option("--restore-files", "conversations rewind: also put back the files write_file / edit_file changed since")
        .option("--force", "conversations rewind / unrewind: restore files even when they changed on disk since the tool wrote them")
        .option("--instructions <TEXT>", "conversations compact: what the summary should keep"),
  )
    .addHelpText("after", examples([
      ["conversations list --limit 5", "the five newest"],
      ["conversations show c_0123", "a conversation's messages and tool calls"],
      ["conversations export c_0123 --format markdown > chat.md", "as Markdown"],
      ["conversations rm c_0123", "delete it"],
      ["conversations rewind c_0123 --before r_0456 --restore-files", "take back r_0456 and all after it, and the files they changed"],
      ["conversations unrewind c_0123", "put the last rewind back"],
      ['conversations compact c_0123 --instructions "keep the failing tests"', "summarize it; the model sees the summary from then on"],
    ]))
    .action((action: string | undefined, id: string | undefined, _options: unknown, command: Command) => {
      sinks.parsed({ command: "conversations", conversations: conversationsArgs([action, id].filter((w): w is string => w !== undefined), flagValues(command), env, where) });
    });

  const mcp = program
    .command("mcp")
    .summary("list, add, remove or probe MCP servers")
    .description("the MCP servers whose tools the agent may call: list them, add or remove one (kept in your configuration file), probe one without adding it")
    .addHelpText("after", examples([
      ["mcp list", "every server, its state and its tools"],
      ["mcp add fs -- npx -y @modelcontextprotocol/server-filesystem ~/src", "add a command (stdio) server"],
      ["mcp add docs --http http://127.0.0.1:3000/mcp", "add a Streamable HTTP server"],
      ["mcp probe -- node my-server.js", "what a server offers, without adding it"],
      ["mcp remove fs", "remove it again"],
    ]));
  const definitionOptions = (command: Command) =>
    command
      .option("--http <URL>", "a Streamable HTTP server at URL (instead of a command after --)")
      .option("--header <NAME=VALUE>", "--http: a request header (repeatable)", (value: string, previous: string[] | undefined) => [...(previous ?? []), value])
      .option("--env <NAME=VALUE>", "a command server: an environment variable for it (repeatable)", (value: string, previous: string[] | undefined) => [...(previous ?? []), value])
      .option("--cwd <DIR>", "a command server: its working directory");
  addClientOptions(mcp.command("list").summary("every MCP server, its state and its tools").description("every MCP server (configuration file and added), its state (connected, failed with why…) and its tools"), "the servers as JSON (mcp.list's result)")
    .addHelpText("after", examples([["mcp list", "one line per server, then its tools"], ["mcp list --json | jq '.servers[].state'", "for scripts"]]))
    .action((_options: unknown, command: Command) => {
      const values = flagValues(command);
      sinks.parsed({ command: "mcp", mcp: { action: "list", target: connectionTarget(values, env, where), json: values.json === true } });
    });
  addClientOptions(
    mcp
      .command("add")
      .summary("add a server to your configuration file (and a running server)")
      .description(
        "add an MCP server to your configuration file ($XDG_CONFIG_HOME/agentwire/agentwire.json, comments kept), so every later server has it; a running server reached with --url (or found running) starts it now",
      )
      .argument("<name>", "its name: letters, digits, _ and -; its tools are offered as mcp__NAME__TOOL")
      .argument("[command...]", "after --: the program to start and its arguments (a stdio server)"),
    "what was done as JSON",
    definitionOptions,
  )
    .addHelpText("after", examples([
      ["mcp add fs -- npx -y @modelcontextprotocol/server-filesystem ~/src", "a command (stdio) server"],
      ["mcp add docs --http http://127.0.0.1:3000/mcp --header 'Authorization=Bearer x'", "a Streamable HTTP server"],
    ]))
    .action((name: string, words: string[], _options: unknown, command: Command) => {
      const values = flagValues(command);
      sinks.parsed({
        command: "mcp",
        mcp: {
          action: "add",
          name: mcpServerName(name),
          server: mcpDefinition(words, values),
          configFile: userConfigPath({ env, home: where.home }),
          target: connectionTarget(values, env, where),
          json: values.json === true,
        },
      });
    });
  addClientOptions(
    mcp
      .command("remove")
      .summary("remove a server from your configuration file (and a running server)")
      .description("remove an MCP server from your configuration file (or one added with mcp.add); a running server stops it now")
      .argument("<name>", "the server's name"),
    "what was done as JSON",
  )
    .addHelpText("after", examples([["mcp remove fs", "no more mcp__fs__* tools"]]))
    .action((name: string, _options: unknown, command: Command) => {
      const values = flagValues(command);
      sinks.parsed({
        command: "mcp",
        mcp: { action: "remove", name: mcpServerName(name), configFile: userConfigPath({ env, home: where.home }), target: connectionTarget(values, env, where), json: values.json === true },
      });
    });
  addClientOptions(
    mcp
      .command("probe")
      .summary("what a server offers, without adding it")
      .description("connect to an MCP server, list what it offers and disconnect: nothing is saved and nothing is offered to the agent")
      .argument("[command...]", "after --: the program to start and its arguments (a stdio server)"),
    "mcp.probe's result as JSON (server info and every tool with its input schema)",
    definitionOptions,
  )
    .addHelpText("after", examples([
      ["mcp probe -- npx -y @modelcontextprotocol/server-everything", "a command (stdio) server"],
      ["mcp probe --http http://127.0.0.1:3000/mcp", "a Streamable HTTP server"],
    ]))
    .action((words: string[], _options: unknown, command: Command) => {
      const values = flagValues(command);
      sinks.parsed({ command: "mcp", mcp: { action: "probe", server: mcpDefinition(words, values), target: connectionTarget(values, env, where), json: values.json === true } });
    });

  const info = (name: "models" | "tools" | "status", summary: string, description: string, jsonHelp: string, rows: [string, string][]) =>
    addClientOptions(program.command(name).summary(summary).description(description), jsonHelp)
      .addHelpText("after", examples(rows))
      .action((_options: unknown, command: Command) => sinks.parsed({ command: name, info: infoArgs(flagValues(command), env, where) }));
  info("models", "list the models", "the models every configured provider serves, and whether each provider answered", "models.list's result as JSON", [
    ["models", "one line per model; the default is marked"],
    ["models --json | jq -r '.models[].id'", "the ids, for scripts"],
  ]);
  info("tools", "the tools the agent may call", "the tools the agent may call (built in, custom, web, MCP)", "tools.list's result as JSON", [
    ["tools", "one line per tool, with where it comes from"],
    ["tools --json | jq -r '.tools[].name'", "the names"],
  ]);
  info("status", "the server's state at a glance", "the server's state: version, uptime, connections, conversations, generations, MCP servers", "server.status's result as JSON", [
    ["status", "at a glance"],
    ["status --url ws://127.0.0.1:7600 --json", "a running server's, as JSON"],
  ]);

  program
    .command("trust")
    .summary("trust a project's agentwire.json")
    .description(
      "trust DIR's agentwire.json (default: the working directory's) as it is now, so that what it sets that runs commands or sends credentials applies (see agentwire help serve, Configuration files); a later change asks again",
    )
    .argument("[dir]", "the directory (or its agentwire.json)")
    .option("--list", "list the trusted files")
    .option("--revoke", "stop trusting DIR's agentwire.json")
    .addHelpText("after", examples([
      ["trust", "trust ./agentwire.json as it is now"],
      ["trust --list", "every trusted file, and whether it changed since"],
      ["trust --revoke ~/src/project", "stop trusting that project's file"],
    ]))
    .action((dir: string | undefined, options: { list?: boolean; revoke?: boolean }) => sinks.parsed({ command: "trust", trust: trustArgs(dir, options) }));

  return program;
}

/** The commands, for the help reference. */
export function commandPaths(program: Command): string[][] {
  const paths: string[][] = [];
  const walk = (command: Command, path: string[]) => {
    for (const sub of command.commands) {
      paths.push([...path, sub.name()]);
      walk(sub, [...path, sub.name()]);
    }
  };
  walk(program, []);
  return paths;
}
