/**
 * Command-line flags and environment into a ServerConfig. Kept apart from
 * cli.ts (which starts the server on import) so it can be tested. The flags
 * that set a configuration key are the schema's (`.meta({ flag })` in
 * protocol/config.ts), each read as its key's type.
 */
import { parseArgs } from "node:util";
import { flaggedKeys, valueFromText } from "./config/config-keys.js";
import { type ConfigLayer, setAt } from "./config/config-layers.js";
import { type CommandPlace, type ResolvedConfig, resolveCommandConfig } from "./config/resolve-config.js";
import type { ServerConfig } from "./config/server-config.js";
import { parseTrustArgs, type TrustArgs } from "./config/trust-command.js";
import { readTokenFile } from "./token-file.js";
import { UsageError } from "./usage-error.js";
import { type ChatArgs, type ConversationsArgs, parseChatArgs, parseConversationsArgs } from "./chat/chat-options.js";

export { UsageError } from "./usage-error.js";

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

/**
 * Flags, environment and configuration files into a ServerConfig. A bad
 * flag is a UsageError; a bad file or variable a ConfigFileError naming it.
 */
export function parseCli(argv: string[], env: NodeJS.ProcessEnv, where: CommandPlace = {}): ParsedCli {
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
  const configFlags = flaggedKeys();
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        // Every configuration flag takes a value; a list's may be repeated.
        ...Object.fromEntries([...configFlags].map(([flag, key]) => [flag.slice(2), { type: "string" as const, multiple: key.value.kind === "list" }])),
        "token-file": { type: "string" },
        config: { type: "string" },
        json: { type: "boolean" },
        help: { type: "boolean", short: "h" },
        version: { type: "boolean", short: "v" },
      },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  // The configuration flags' names come from the schema, so TypeScript knows only the fixed ones.
  const given = values as Record<string, string | string[] | undefined>;
  if (values.help) return { command: "help" };
  if (values.version) return { command: "version" };
  if (positionals.length === 0) return { command: "help" };
  const command = positionals[0];
  if ((command !== "serve" && command !== "config") || positionals.length > 1) {
    throw new UsageError(`unknown command "${positionals.join(" ")}"; try: agentwire serve, config, chat, conversations or trust`);
  }
  if (values.json && command !== "config") throw new UsageError("--json goes with agentwire config");

  const flags: ConfigLayer = { label: "flags", values: {}, sources: {} };
  const set = (flag: string, path: string, value: unknown) => {
    setAt(flags.values, path, value);
    flags.sources![path] = `flag ${flag}`;
  };
  for (const [flag, key] of configFlags) {
    const text = given[flag.slice(2)];
    if (text === undefined) continue;
    const read = valueFromText(key, typeof text === "string" ? [text] : text);
    if ("problem" in read) throw new UsageError(`${flag} ${read.problem}`);
    set(flag, key.path, read.value);
  }
  if (values["token-file"] !== undefined) {
    if (given.token !== undefined) throw new UsageError("--token and --token-file cannot go together");
    set("--token-file", "server.token", readTokenFile(values["token-file"]));
  }

  const resolved = resolveCommandConfig(flags, env, where, values.config);
  return { command, config: resolved.config, resolved, json: values.json === true };
}
