/**
 * What the client commands (`agentwire chat`, `conversations`, `mcp`,
 * `models`, `tools`, `status`) need, from their parsed flags (src/cli-program.ts
 * declares the flags): where to connect (a URL, or an embedded server's
 * configuration resolved exactly as `serve` resolves it) and what to do.
 * Flags arrive as a record by flag name without the dashes ("data-dir").
 */
import { flaggedKeys, valueFromText } from "../config/config-keys.js";
import { type ConfigLayer, setAt } from "../config/config-layers.js";
import { type CommandPlace, resolveCommandConfig } from "../config/resolve-config.js";
import type { ServerConfig } from "../config/server-config.js";
import { readTokenFile } from "../token-file.js";
import { UsageError } from "../usage-error.js";
import type { McpServerDefinition } from "../../protocol/config-mcp.js";
import { MCP_SERVER_NAME_PATTERN } from "../../protocol/mcp-defaults.js";
import { safeParseConfigPart } from "../config/config-check.js";

/** Where a client command talks to: a running server, or one started in this process. */
export interface ConnectionTarget {
  /** ws:// URL of a running server (--url or AGENTWIRE_URL). */
  url?: string;
  token?: string;
  /** Without a URL: the configuration of the embedded server (port 0 on 127.0.0.1). */
  embedded?: ServerConfig;
}

/** A file to attach: `PATH` or `PATH:START-END`. */
export interface AttachSpec {
  path: string;
  lines?: { start: number; end: number };
}

/** How tool calls are decided. ask: prompt on a terminal, skip without one. */
export type ToolDecisionMode = "ask" | "yes" | "deny";

export interface ChatArgs {
  target: ConnectionTarget;
  /** The prompt from the arguments (joined with spaces); absent: stdin or the REPL. */
  prompt?: string;
  json: boolean;
  tools: ToolDecisionMode;
  /** --auto N: run this many tool calls without asking, then decide as `tools` says. */
  auto?: number;
  conversationId?: string;
  /** --continue: the most recent conversation whose workspace is the working directory. */
  continueLast: boolean;
  model?: string;
  /** --mode NAME: the conversation's mode (settings.mode; conversation.update { mode } on a continued one). */
  mode?: string;
  attachments: AttachSpec[];
}

export type ConversationsAction = "list" | "show" | "rm" | "export" | "rewind" | "unrewind" | "compact";

export interface ConversationsArgs {
  target: ConnectionTarget;
  action: ConversationsAction;
  id?: string;
  format: "json" | "markdown";
  json: boolean;
  limit?: number;
  /** rewind: the first record to take back (--before). */
  before?: string;
  /** rewind: also put back the files the tools changed (--restore-files). */
  restoreFiles?: boolean;
  /** rewind / unrewind: restore files even when changed on disk since (--force). */
  force?: boolean;
  /** compact: what the summary should keep (--instructions). */
  instructions?: string;
}

/** `PATH` or `PATH:START-END` (lines counted from 1, inclusive). A colon not followed by a range stays part of the path. */
export function parseAttachSpec(spec: string): AttachSpec {
  const match = /^(.+):(\d+)-(\d+)$/.exec(spec);
  if (!match) {
    if (spec === "") throw new UsageError("--attach needs a path");
    return { path: spec };
  }
  const start = Number(match[2]);
  const end = Number(match[3]);
  if (start < 1 || end < start) throw new UsageError(`--attach ${spec}: the line range must be START-END with 1 ≤ START ≤ END`);
  return { path: match[1]!, lines: { start, end } };
}

/** Flag values by flag name without the dashes: "data-dir" → "/tmp/x"; a repeated list flag gives an array. */
export type FlagValues = Record<string, string | string[] | boolean | undefined>;

/** Configuration flags that do not reach an embedded server: it does not listen (its command speaks to it in memory). */
export const NOT_FOR_EMBEDDED = new Set(["--host", "--port"]);

const text = (values: FlagValues, name: string): string | undefined => {
  const value = values[name];
  return typeof value === "string" ? value : undefined;
};

/**
 * --url / AGENTWIRE_URL and a token, or else the embedded server's
 * configuration: the same layers as `serve`, with the configuration flags
 * given (each sets the key the schema gives it to), then what an embedded
 * server must be: loopback, any free port, and quiet (its log would
 * interleave with the output) unless asked otherwise.
 */
export function connectionTarget(values: FlagValues, env: NodeJS.ProcessEnv, where: CommandPlace, clientOnly: ReadonlySet<string> = new Set()): ConnectionTarget {
  const tokenFlag = text(values, "token");
  const tokenFile = text(values, "token-file");
  if (tokenFlag !== undefined && tokenFile !== undefined) throw new UsageError("--token and --token-file cannot go together");
  const flagToken = tokenFile !== undefined ? readTokenFile(tokenFile) : tokenFlag;
  const url = text(values, "url") ?? (env.AGENTWIRE_URL || undefined);
  const token = flagToken ?? (env.AGENTWIRE_TOKEN || undefined);
  const keys = flaggedKeys();
  const given = [...keys.keys()].filter((flag) => flag !== "--token" && !clientOnly.has(flag) && values[flag.slice(2)] !== undefined);
  if (url !== undefined) {
    if (!/^wss?:\/\//.test(url)) throw new UsageError(`--url must be a ws:// or wss:// URL, got "${url}"`);
    for (const flag of [...given, ...(values.config !== undefined ? ["--config"] : [])]) {
      throw new UsageError(`${flag} is for the embedded server; it cannot go with --url`);
    }
    return { url, token };
  }
  const flags: ConfigLayer = { label: "flags", values: {}, sources: {} };
  const set = (flag: string, value: string | string[] | number, shownAs = flag) => {
    const key = keys.get(flag)!;
    const read = typeof value === "number" ? { value } : valueFromText(key, typeof value === "string" ? [value] : value);
    if ("problem" in read) throw new UsageError(`${flag} ${read.problem}`);
    setAt(flags.values, key.path, read.value);
    flags.sources![key.path] = `flag ${shownAs}`;
  };
  set("--log-level", "error");
  for (const flag of given) {
    if (NOT_FOR_EMBEDDED.has(flag)) throw new UsageError(`${flag} is serve's: an embedded server does not listen (the command speaks to it in memory)`);
    set(flag, values[flag.slice(2)] as string | string[]);
  }
  set("--host", "127.0.0.1");
  set("--port", 0);
  if (flagToken !== undefined) set("--token", flagToken, tokenFlag !== undefined ? "--token" : "--token-file");
  const resolved = resolveCommandConfig(flags, env, where, text(values, "config"));
  return { embedded: resolved.config, token: resolved.config.server.token };
}

function positiveInt(flag: string, value: string | undefined, min: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`--${flag} must be an integer ≥ ${min}, got "${value}"`);
  return n;
}

/** `agentwire chat [PROMPT…]`. */
export function chatArgs(words: string[], values: FlagValues, env: NodeJS.ProcessEnv, where: CommandPlace = {}): ChatArgs {
  const chosen = [values.yes && "--yes", values.deny && "--deny"].filter(Boolean);
  if (chosen.length > 1) throw new UsageError("--yes and --deny cannot go together");
  const auto = positiveInt("auto", text(values, "auto"), 0);
  if (auto !== undefined && values.yes) throw new UsageError("--auto N and --yes cannot go together (--yes runs every tool call)");
  const model = text(values, "model");
  if (model === "") throw new UsageError("--model needs a model name");
  const mode = text(values, "mode");
  if (mode === "") throw new UsageError("--mode needs a mode name (agentwire chat, then /mode, lists them)");
  const conversationId = text(values, "conversation");
  if (values.continue === true && conversationId !== undefined) throw new UsageError("--continue and --conversation cannot go together");
  return {
    // --model names the conversation's model; it is also the embedded server's default, as before.
    target: connectionTarget(values, env, where, new Set(["--model"])),
    prompt: words.length > 0 ? words.join(" ") : undefined,
    json: values.json === true,
    tools: values.yes ? "yes" : values.deny ? "deny" : "ask",
    auto,
    conversationId,
    continueLast: values.continue === true,
    model,
    mode,
    attachments: ((values.attach as string[] | undefined) ?? []).map(parseAttachSpec),
  };
}

const ACTIONS: readonly ConversationsAction[] = ["list", "show", "rm", "export", "rewind", "unrewind", "compact"];

/** `agentwire conversations ACTION [ID]`. */
export function conversationsArgs(words: string[], values: FlagValues, env: NodeJS.ProcessEnv, where: CommandPlace = {}): ConversationsArgs {
  const [action, id, ...rest] = words;
  if (!action || !ACTIONS.includes(action as ConversationsAction)) {
    throw new UsageError(
      `agentwire conversations needs one of: list, show ID, rm ID, export ID, rewind ID --before RECORD_ID, unrewind ID, compact ID${action ? ` (got "${action}")` : ""}`,
    );
  }
  if (action === "list" ? id !== undefined : id === undefined || rest.length > 0) {
    throw new UsageError(action === "list" ? "conversations list takes no ID" : `conversations ${action} takes exactly one conversation ID`);
  }
  const format = text(values, "format") ?? "json";
  if (format !== "json" && format !== "markdown") throw new UsageError(`--format must be json or markdown, got "${format}"`);
  if (values.format !== undefined && action !== "export") throw new UsageError("--format goes with conversations export");
  const before = text(values, "before");
  if (action === "rewind" && !before) throw new UsageError("conversations rewind needs --before RECORD_ID (the first record to take back; see conversations show ID --json)");
  if (action !== "rewind" && (before !== undefined || values["restore-files"] !== undefined)) throw new UsageError("--before and --restore-files go with conversations rewind");
  if (values.force !== undefined && action !== "rewind" && action !== "unrewind") throw new UsageError("--force goes with conversations rewind or unrewind");
  const instructions = text(values, "instructions");
  if (instructions !== undefined && action !== "compact") throw new UsageError("--instructions goes with conversations compact");
  return {
    target: connectionTarget(values, env, where),
    action: action as ConversationsAction,
    id,
    format,
    json: values.json === true,
    limit: positiveInt("limit", text(values, "limit"), 1),
    before,
    restoreFiles: values["restore-files"] === true,
    force: values.force === true,
    instructions,
  };
}

/** `agentwire models`, `tools`, `status`: where to ask, and how to print. */
export interface InfoArgs {
  target: ConnectionTarget;
  json: boolean;
}

export function infoArgs(values: FlagValues, env: NodeJS.ProcessEnv, where: CommandPlace = {}): InfoArgs {
  return { target: connectionTarget(values, env, where), json: values.json === true };
}

export type McpArgs =
  | { action: "list"; target: ConnectionTarget; json: boolean }
  | { action: "add"; target: ConnectionTarget; json: boolean; name: string; server: McpServerDefinition; configFile: string }
  | { action: "remove"; target: ConnectionTarget; json: boolean; name: string; configFile: string }
  | { action: "probe"; target: ConnectionTarget; json: boolean; server: McpServerDefinition };

/** `NAME=VALUE` (--env) or `NAME: VALUE` / `NAME=VALUE` (--header) pairs into a record. */
function pairs(flag: string, given: string[] | undefined, separators: RegExp): Record<string, string> | undefined {
  if (given === undefined || given.length === 0) return undefined;
  const out: Record<string, string> = {};
  for (const item of given) {
    const match = separators.exec(item);
    if (!match || match.index === 0) throw new UsageError(`${flag} takes NAME=VALUE, got "${item}"`);
    out[item.slice(0, match.index)] = item.slice(match.index + match[0].length);
  }
  return out;
}

/**
 * The MCP server `mcp add` / `mcp probe` describe: `--http URL` (Streamable
 * HTTP) or a command after `--` (stdio), checked against the same schema as
 * agentwire.json's mcpServers, naming the flag at fault.
 */
export function mcpDefinition(command: string[], values: FlagValues): McpServerDefinition {
  const http = text(values, "http");
  const env = pairs("--env", values.env as string[] | undefined, /=/);
  const headers = pairs("--header", values.header as string[] | undefined, /\s*[:=]\s*/);
  const cwd = text(values, "cwd");
  let definition: unknown;
  if (http !== undefined) {
    if (command.length > 0) throw new UsageError(`--http URL and a command (${command.join(" ")}) cannot go together: an MCP server is one or the other`);
    if (env || cwd !== undefined) throw new UsageError("--env and --cwd are for a command (stdio) server, not --http");
    definition = { url: http, ...(headers ? { headers } : {}) };
  } else {
    if (command.length === 0) throw new UsageError("name the MCP server's command after -- (e.g. -- npx -y @modelcontextprotocol/server-everything), or give --http URL");
    if (headers) throw new UsageError("--header is for an --http server");
    const [program, ...args] = command;
    definition = { command: program, ...(args.length > 0 ? { args } : {}), ...(env ? { env } : {}), ...(cwd !== undefined ? { cwd } : {}) };
  }
  // As data (config-check.ts); an invalid definition is worded by zod's schema, loaded for it.
  const parsed = safeParseConfigPart<McpServerDefinition>("mcpServers.*", definition);
  if (!parsed.success) {
    const issue = parsed.issues[0]!;
    const field = String(issue.path.at(-1) ?? "");
    const flag = field === "url" ? "--http" : field === "command" ? "the command" : `--${field}`;
    throw new UsageError(`${flag}: ${issue.message}`);
  }
  return parsed.data;
}

export function mcpServerName(name: string): string {
  if (!MCP_SERVER_NAME_PATTERN.test(name)) throw new UsageError(`MCP server name "${name}": letters, digits, _ and -, at most 32`);
  return name;
}
