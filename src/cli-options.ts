/**
 * Command-line flags and environment into a ServerConfig. Kept apart from
 * cli.ts (which starts the server on import) so it can be tested.
 */
import { parseArgs } from "node:util";
import { type ConfigLayer, setAt } from "./config/config-layers.js";
import { type ResolvedConfig, resolveCommandConfig } from "./config/resolve-config.js";
import { parseTrustArgs, type TrustArgs } from "./config/trust-command.js";
import { DEFAULT_PORT, type ServerConfig } from "./config/server-config.js";
import { SERVER_VERSION } from "./server-version.js";
import { readTokenFile } from "./token-file.js";
import { isToolEnvEntry, splitToolEnvList } from "./tools/tool-environment.js";
import { UsageError } from "./usage-error.js";
import { type ChatArgs, type ConversationsArgs, parseChatArgs, parseConversationsArgs } from "./chat/chat-options.js";

export const HELP = `agentwire ${SERVER_VERSION} — agent protocol server (JSON-RPC 2.0 over one WebSocket)

Usage:
  agentwire serve [options]     start the server
  agentwire config [options]    print the effective configuration and where each
                                value came from (secrets masked); --json for JSON
  agentwire chat [PROMPT] [chat options]
                                talk to an agent from the terminal or a script
  agentwire conversations list | show ID | rm ID | export ID [--format json|markdown]
                                list, print, delete or export stored conversations
  agentwire trust [DIR]         trust DIR's agentwire.json (default: the working
                                directory's) as it is now, so that what it sets that
                                runs commands or sends credentials applies (see
                                Configuration files); a later change asks again
  agentwire trust --list | --revoke [DIR]
                                list the trusted files, or stop trusting one
  agentwire --help | --version

Options (each can also be set in agentwire.json; see Configuration files):
  --host HOST            address to listen on (default 127.0.0.1). A non-loopback
                         address requires --token.
  --port PORT            port (default ${DEFAULT_PORT}; 0 picks a free one)
  --data-dir DIR         where conversations are stored (default ./.agentwire).
                         One server per data dir: a second one refuses to start.
  --store STORE          lowdb (default: conversations in --data-dir) or a PostgreSQL
                         URL, postgres://USER@HOST:PORT/DATABASE, which several
                         servers may share. Give a password as PGPASSWORD rather
                         than in the URL; it is never printed.
  --token-file FILE      require the token in FILE (read once, whitespace trimmed) on
                         every WebSocket upgrade (Authorization: Bearer, ?token=, or
                         subprotocol bearer.TOKEN). Or set AGENTWIRE_TOKEN.
  --token TOKEN          the same with the token itself; avoid it: a command line is
                         visible to every local user (ps) until the server has started
  --redis URL            cluster mode: several instances on one shared store
                         (PostgreSQL) and this Redis (redis://HOST:6379); see the
                         README's "Running several instances". Not with lowdb.
  --redis-prefix PREFIX  cluster mode: prefix of the Redis keys (default agentwire:);
                         one prefix, one cluster
  --owner-lease-ms MS    cluster mode: a conversation's ownership lease (default
                         10000): the longest a dead instance keeps a conversation
  --allow-origin ORIGIN  let browser pages from ORIGIN connect (repeatable, or
                         comma-separated). The server's own origin is always allowed;
                         no other origin is by default.
  --max-payload BYTES    largest accepted frame (default 4194304); a larger frame
                         closes that socket with 1009
  --model MODEL          default model (else AGENTWIRE_MODEL)
  --tool-timeout MS      default time limit of one tool call (default 120000)
  --tool-env NAME        let tools see environment variable NAME (repeatable, or
                         comma-separated; PREFIX* for a prefix, which never matches
                         names that look like credentials). Tools otherwise get only
                         PATH HOME USER LOGNAME SHELL LANG LANGUAGE LC_* TERM TZ TMPDIR.
  --llm-idle-timeout MS  fail a model stream silent this long (default 60000)
  --event-log-size N     recent events kept per conversation for replay (default 4096,
                         and at most 4 MiB of them)
  --max-connections N    open WebSocket connections at most (default 10000, or fewer
                         when the open-file limit is lower); more get HTTP 503
  --max-connections-per-address N
                         open connections from one address at most (default 1024)
  --max-message-bytes N  largest message content or system prompt (default 1048576)
  --max-loaded-conversations N
                         conversations kept in memory at most; beyond it the least
                         recently used ones that are not running are unloaded
                         (default 10000)
  --log-level LEVEL      debug | info | warn | error | silent (default info)
  --log-format FORMAT    text | json (default text); json writes one object per
                         line: {time, level, msg, conversationId?, generationId?, err?}
  --config FILE          read FILE after the configuration files found (below)
  -h, --help             show this help
  -v, --version          print the version

Chat and conversations options:
  --url URL              a running server (ws://HOST:PORT; else AGENTWIRE_URL). Without
                         one, a server is started inside the command on a free loopback
                         port, configured as serve would be (--data-dir, --config,
                         configuration files, environment).
  --token-file FILE      the server's token, read from FILE (else AGENTWIRE_TOKEN;
                         --token TOKEN works too, but shows it to ps)
  --data-dir DIR, --store STORE, --config FILE, --log-level LEVEL (default error)
                         for the embedded server, as for serve
  --json                 chat: every notification and result as one JSON object per
                         line on stdout; conversations: JSON output
  --conversation ID      continue this conversation (default: a new one, whose
                         workspace is the current directory)
  --model MODEL          model for this conversation / step
  --attach PATH[:START-END]
                         attach a workspace file, or lines START to END of it
                         (repeatable)
  -y, --yes              run every tool call without asking
  --auto N               run the first N tool calls of each step without asking,
                         then ask (or skip, without a terminal)
  --deny                 skip every tool call
  --format json|markdown conversations export: the output format (default json)
  --limit N              conversations list: at most N (default all)
  PROMPT comes from the arguments, else from stdin when it is not a terminal. On a
  terminal, chat streams the answer, asks about each tool call ([y]es, [n]o = skip,
  [e]dit the arguments in $EDITOR, [a]uto N), and then reads the next message
  (Ctrl-D ends). Ctrl-C interrupts the generation; a second Ctrl-C exits. Without
  a terminal and without --yes/--auto/--deny, tool calls are skipped.
  Exit status: 0 the generation completed, 1 an error (model, connection,
  request), 2 bad usage, 130 interrupted.

Environment:
  OPENAI_BASE_URL        OpenAI-compatible endpoint (e.g. http://localhost:11434/v1 for Ollama)
  OPENAI_API_KEY         its API key (optional for local endpoints)
  AGENTWIRE_MODEL        default model
  AGENTWIRE_TOKEN        same as --token-file's content (--token and --token-file win)
  AGENTWIRE_URL          chat, conversations: same as --url
  EDITOR, VISUAL         chat: the editor for [e]dit (default vi)
  NO_COLOR               chat: no colours (also off when the output is not a terminal)
  AGENTWIRE_TOOL_ENV     same as --tool-env, comma-separated (ignored when --tool-env is given)

Configuration files:
  agentwire.json (JSON with comments) in the working directory and each parent,
  and $XDG_CONFIG_HOME/agentwire/agentwire.json (default ~/.config/agentwire/).
  Precedence, lowest first: defaults < user file < parent files < nearest file
  < --config FILE < environment < flags. Objects merge by key; a list set by a
  later layer replaces the earlier one. Schema: protocol/config.schema.json.
  A bad file stops the server, naming the file, the key and the problem.
  The walk up from the working directory stops at your home directory and
  before any directory that is not yours or that others can write (such as
  /tmp); a file there is not read. A project file (any but the user file and
  --config FILE) applies its keys that run commands or send credentials (MCP
  servers, custom tools, endpoints, API keys and key names, approval settings;
  the README lists them all) only once you have run agentwire trust on it;
  until then the server starts without them and says which. Trust is kept in
  $XDG_DATA_HOME/agentwire/ (default ~/.local/share/). agentwire config shows
  how each file was taken.
`;

export { UsageError } from "./usage-error.js";

/** Flags that set one whole-number value: flag → [path in agentwire.json, smallest value]. */
const INTEGER_FLAGS = {
  port: ["server.port", 0],
  "max-payload": ["limits.maxPayloadBytes", 1024],
  "tool-timeout": ["tools.timeoutMs", 100],
  "llm-idle-timeout": ["llm.idleTimeoutMs", 100],
  "event-log-size": ["limits.eventLogSize", 1],
  "max-connections": ["limits.maxConnections", 1],
  "max-connections-per-address": ["limits.maxConnectionsPerAddress", 1],
  "max-message-bytes": ["limits.maxMessageBytes", 1024],
  "max-loaded-conversations": ["limits.maxLoadedConversations", 1],
  "owner-lease-ms": ["server.ownerLeaseMs", 300],
} as const satisfies Record<string, readonly [string, number]>;

/** Flags that set one string value: flag → path. */
const STRING_FLAGS = {
  host: "server.host",
  "data-dir": "server.dataDir",
  store: "server.store",
  token: "server.token",
  redis: "server.redis",
  "redis-prefix": "server.redisPrefix",
  model: "model",
  "log-level": "server.logLevel",
  "log-format": "server.logFormat",
} as const;

/** Flags that set a list (repeatable, or comma-separated): flag → path. */
const LIST_FLAGS = {
  "allow-origin": "server.allowOrigins",
  "tool-env": "tools.envAllow",
} as const;

/** Every flag that sets a configuration key: flag (without `--`) → its path in agentwire.json. docs/reference/config.md lists them from here. */
export const CONFIG_KEY_FLAGS: Readonly<Record<string, string>> = {
  ...STRING_FLAGS,
  ...Object.fromEntries(Object.entries(INTEGER_FLAGS).map(([flag, [path]]) => [flag, path])),
  ...LIST_FLAGS,
};

function intOption(name: string, value: string | undefined, min: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`--${name} must be an integer ≥ ${min}, got "${value}"`);
  return n;
}

/** `--tool-env` entries (each may be comma-separated), each checked. */
function toolEnvOption(flags: string[]): string[] {
  const entries = flags.flatMap(splitToolEnvList);
  for (const entry of entries) {
    if (!isToolEnvEntry(entry)) throw new UsageError(`--tool-env takes environment variable names or NAME* prefixes, got "${entry}"`);
  }
  return [...new Set(entries)];
}

export type CliCommand = "serve" | "config" | "chat" | "conversations" | "trust" | "help" | "version";

export interface ParsedCli {
  command: CliCommand;
  /** The effective configuration (serve, config). */
  config?: ServerConfig;
  resolved?: ResolvedConfig;
  /** `agentwire config --json`. */
  json?: boolean;
  /** `agentwire chat`. */
  chat?: ChatArgs;
  /** `agentwire conversations …`. */
  conversations?: ConversationsArgs;
  /** `agentwire trust …`. */
  trust?: TrustArgs;
}

export interface CliEnvironment {
  /** Where the configuration file lookup starts; default process.cwd(). */
  cwd?: string;
  home?: string;
  /** false: read no configuration file (only --config FILE). */
  discover?: boolean;
}

/**
 * Flags, environment and configuration files into a ServerConfig. A bad
 * flag is a UsageError; a bad file or variable a ConfigFileError naming it.
 */
export function parseCli(argv: string[], env: NodeJS.ProcessEnv, where: CliEnvironment = {}): ParsedCli {
  // The client commands have flags of their own (--yes, --url, …) that serve must keep refusing.
  if (argv[0] === "chat") {
    const chat = parseChatArgs(argv.slice(1), env, where);
    return chat ? { command: "chat", chat } : { command: "help" };
  }
  if (argv[0] === "conversations") {
    const conversations = parseConversationsArgs(argv.slice(1), env, where);
    return conversations ? { command: "conversations", conversations } : { command: "help" };
  }
  if (argv[0] === "trust") {
    const trust = parseTrustArgs(argv.slice(1));
    return trust ? { command: "trust", trust } : { command: "help" };
  }
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        ...(Object.fromEntries(Object.keys(STRING_FLAGS).map((flag) => [flag, { type: "string" }])) as Record<
          keyof typeof STRING_FLAGS,
          { type: "string" }
        >),
        "allow-origin": { type: "string", multiple: true },
        "tool-env": { type: "string", multiple: true },
        "token-file": { type: "string" },
        config: { type: "string" },
        json: { type: "boolean" },
        ...(Object.fromEntries(Object.keys(INTEGER_FLAGS).map((flag) => [flag, { type: "string" }])) as Record<
          keyof typeof INTEGER_FLAGS,
          { type: "string" }
        >),
        help: { type: "boolean", short: "h" },
        version: { type: "boolean", short: "v" },
      },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) return { command: "help" };
  if (values.version) return { command: "version" };
  if (positionals.length === 0) return { command: "help" };
  const command = positionals[0];
  if ((command !== "serve" && command !== "config") || positionals.length > 1) {
    throw new UsageError(`unknown command "${positionals.join(" ")}"; try: agentwire serve, config, chat, conversations or trust`);
  }
  if (values.json && command !== "config") throw new UsageError("--json goes with agentwire config");
  const logLevel = values["log-level"];
  if (logLevel !== undefined && !["debug", "info", "warn", "error", "silent"].includes(logLevel)) {
    throw new UsageError(`--log-level must be debug, info, warn, error or silent, got "${logLevel}"`);
  }
  const logFormat = values["log-format"];
  if (logFormat !== undefined && !["text", "json"].includes(logFormat)) {
    throw new UsageError(`--log-format must be text or json, got "${logFormat}"`);
  }
  const port = intOption("port", values.port, 0);
  if (port !== undefined && port > 65535) throw new UsageError(`--port must be at most 65535, got ${port}`);

  const flags: ConfigLayer = { label: "flags", values: {}, sources: {} };
  const set = (flag: string, path: string, value: unknown) => {
    setAt(flags.values, path, value);
    flags.sources![path] = `flag --${flag}`;
  };
  for (const [flag, path] of Object.entries(STRING_FLAGS)) {
    const value = values[flag as keyof typeof STRING_FLAGS];
    if (value !== undefined) set(flag, path, value);
  }
  for (const [flag, [path, min]] of Object.entries(INTEGER_FLAGS)) {
    const value = intOption(flag, values[flag as keyof typeof INTEGER_FLAGS], min);
    if (value !== undefined) set(flag, path, value);
  }
  if (values["allow-origin"]) {
    set("allow-origin", LIST_FLAGS["allow-origin"], values["allow-origin"].flatMap((o) => o.split(",").map((s) => s.trim()).filter(Boolean)));
  }
  if (values["tool-env"]) set("tool-env", LIST_FLAGS["tool-env"], toolEnvOption(values["tool-env"]));
  if (values["token-file"] !== undefined) {
    if (values.token !== undefined) throw new UsageError("--token and --token-file cannot go together");
    set("token-file", "server.token", readTokenFile(values["token-file"]));
  }

  const resolved = resolveCommandConfig(flags, env, where, values.config);
  return { command, config: resolved.config, resolved, json: values.json === true };
}
