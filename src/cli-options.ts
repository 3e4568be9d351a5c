/**
 * Command-line flags and environment into a ServerConfig. Kept apart from
 * cli.ts (which starts the server on import) so it can be tested.
 */
import { parseArgs } from "node:util";
import { DEFAULT_PORT, defaultConfig, type ServerConfig } from "./config/server-config.js";
import type { LogLevel } from "./logging/logger.js";
import { SERVER_VERSION } from "./server-version.js";
import { isToolEnvEntry, splitToolEnvList } from "./tools/tool-environment.js";

export const HELP = `agentwire ${SERVER_VERSION} — agent protocol server (JSON-RPC 2.0 over one WebSocket)

Usage:
  agentwire serve [options]
  agentwire --help | --version

Options:
  --host HOST            address to listen on (default 127.0.0.1). A non-loopback
                         address requires --token.
  --port PORT            port (default ${DEFAULT_PORT}; 0 picks a free one)
  --data-dir DIR         where conversations are stored (default ./.agentwire).
                         One server per data dir: a second one refuses to start.
  --token TOKEN          require this token on every WebSocket upgrade
                         (Authorization: Bearer, ?token=, or subprotocol bearer.TOKEN).
                         Also from AGENTWIRE_TOKEN.
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
  -h, --help             show this help
  -v, --version          print the version

Environment:
  OPENAI_BASE_URL        OpenAI-compatible endpoint (e.g. http://localhost:11434/v1 for Ollama)
  OPENAI_API_KEY         its API key (optional for local endpoints)
  AGENTWIRE_MODEL        default model
  AGENTWIRE_TOKEN        same as --token
  AGENTWIRE_TOOL_ENV     same as --tool-env, comma-separated (ignored when --tool-env is given)
`;

export class UsageError extends Error {}

/** Flags that set one whole-number field of the config: flag → [field, smallest value]. */
const INTEGER_FLAGS = {
  "max-payload": ["maxPayloadBytes", 1024],
  "tool-timeout": ["toolTimeoutMs", 100],
  "llm-idle-timeout": ["llmIdleTimeoutMs", 100],
  "event-log-size": ["eventLogSize", 1],
  "max-connections": ["maxConnections", 1],
  "max-connections-per-address": ["maxConnectionsPerAddress", 1],
  "max-message-bytes": ["maxMessageBytes", 1024],
  "max-loaded-conversations": ["maxLoadedConversations", 1],
} as const satisfies Record<string, readonly [keyof ServerConfig, number]>;

function intOption(name: string, value: string | undefined, min: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`--${name} must be an integer ≥ ${min}, got "${value}"`);
  return n;
}

/** `--tool-env` entries (each may be comma-separated), else AGENTWIRE_TOOL_ENV's; each checked. */
function toolEnvOption(flags: string[] | undefined, fromEnv: string | undefined): string[] {
  const source = flags !== undefined ? "--tool-env" : "AGENTWIRE_TOOL_ENV";
  const entries = flags !== undefined ? flags.flatMap(splitToolEnvList) : splitToolEnvList(fromEnv ?? "");
  for (const entry of entries) {
    if (!isToolEnvEntry(entry)) {
      throw new UsageError(`${source} takes environment variable names or NAME* prefixes, got "${entry}"`);
    }
  }
  return [...new Set(entries)];
}

export function parseCli(argv: string[], env: NodeJS.ProcessEnv): { command: "serve" | "help" | "version"; config?: ServerConfig } {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        host: { type: "string" },
        port: { type: "string" },
        "data-dir": { type: "string" },
        token: { type: "string" },
        "allow-origin": { type: "string", multiple: true },
        model: { type: "string" },
        "tool-env": { type: "string", multiple: true },
        "log-level": { type: "string" },
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
  if (positionals[0] !== "serve" || positionals.length > 1) {
    throw new UsageError(`unknown command "${positionals.join(" ")}"; try: agentwire serve`);
  }
  const logLevel = (values["log-level"] ?? "info") as LogLevel;
  if (!["debug", "info", "warn", "error", "silent"].includes(logLevel)) {
    throw new UsageError(`--log-level must be debug, info, warn, error or silent, got "${logLevel}"`);
  }
  const port = intOption("port", values.port, 0);
  if (port !== undefined && port > 65535) throw new UsageError(`--port must be at most 65535, got ${port}`);
  const config = defaultConfig({
    ...(values.host ? { host: values.host } : {}),
    ...(port !== undefined ? { port } : {}),
    ...(values["data-dir"] ? { dataDir: values["data-dir"] } : {}),
    token: values.token ?? (env.AGENTWIRE_TOKEN || undefined),
    allowOrigins: (values["allow-origin"] ?? []).flatMap((o) => o.split(",").map((s) => s.trim()).filter(Boolean)),
    model: values.model ?? (env.AGENTWIRE_MODEL || undefined),
    openaiBaseUrl: env.OPENAI_BASE_URL || undefined,
    openaiApiKey: env.OPENAI_API_KEY || undefined,
    logLevel,
  });
  config.toolEnvAllow = toolEnvOption(values["tool-env"], env.AGENTWIRE_TOOL_ENV);
  for (const [flag, [field, min]] of Object.entries(INTEGER_FLAGS)) {
    const value = intOption(flag, values[flag as keyof typeof INTEGER_FLAGS], min);
    if (value !== undefined) config[field] = value;
  }
  return { command: "serve", config };
}

