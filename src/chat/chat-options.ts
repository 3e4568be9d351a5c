/**
 * Flags of the client commands, `agentwire chat` and `agentwire conversations`,
 * into what they need: where to connect (a URL, or an embedded server's
 * configuration resolved exactly as `serve` resolves it) and what to do.
 */
import { parseArgs } from "node:util";
import { flaggedKeys, valueFromText } from "../config/config-keys.js";
import { type ConfigLayer, setAt } from "../config/config-layers.js";
import { type CommandPlace, resolveCommandConfig } from "../config/resolve-config.js";
import type { ServerConfig } from "../config/server-config.js";
import { readTokenFile } from "../token-file.js";
import { UsageError } from "../usage-error.js";

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
  model?: string;
  attachments: AttachSpec[];
}

export type ConversationsAction = "list" | "show" | "rm" | "export";

export interface ConversationsArgs {
  target: ConnectionTarget;
  action: ConversationsAction;
  id?: string;
  format: "json" | "markdown";
  json: boolean;
  limit?: number;
}

const CONNECTION_OPTIONS = {
  url: { type: "string" },
  token: { type: "string" },
  "token-file": { type: "string" },
  "data-dir": { type: "string" },
  store: { type: "string" },
  config: { type: "string" },
  "log-level": { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

const CHAT_OPTIONS = {
  ...CONNECTION_OPTIONS,
  yes: { type: "boolean", short: "y" },
  deny: { type: "boolean" },
  auto: { type: "string" },
  conversation: { type: "string" },
  model: { type: "string" },
  attach: { type: "string", multiple: true },
} as const;

const CONVERSATIONS_OPTIONS = {
  ...CONNECTION_OPTIONS,
  format: { type: "string" },
  limit: { type: "string" },
} as const;

function parse<O extends typeof CHAT_OPTIONS | typeof CONVERSATIONS_OPTIONS>(argv: string[], options: O) {
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
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

function connectionTarget(
  values: {
    url?: string;
    token?: string;
    "token-file"?: string;
    "data-dir"?: string;
    store?: string;
    config?: string;
    "log-level"?: string;
    model?: string;
  },
  env: NodeJS.ProcessEnv,
  where: CommandPlace,
): ConnectionTarget {
  if (values.token !== undefined && values["token-file"] !== undefined) throw new UsageError("--token and --token-file cannot go together");
  const flagToken = values["token-file"] !== undefined ? readTokenFile(values["token-file"]) : values.token;
  const url = values.url ?? (env.AGENTWIRE_URL || undefined);
  const token = flagToken ?? (env.AGENTWIRE_TOKEN || undefined);
  if (url !== undefined) {
    if (!/^wss?:\/\//.test(url)) throw new UsageError(`--url must be a ws:// or wss:// URL, got "${url}"`);
    for (const flag of ["data-dir", "store", "config"] as const) {
      if (values[flag] !== undefined) throw new UsageError(`--${flag} is for the embedded server; it cannot go with --url`);
    }
    return { url, token };
  }
  // The same layers as `serve`, then what an embedded server must be: loopback, any free port,
  // and quiet (its log would interleave with the conversation) unless asked otherwise.
  // These flags are serve's: they set the keys the schema gives them to.
  const keys = flaggedKeys();
  const flags: ConfigLayer = { label: "flags", values: {}, sources: {} };
  const set = (flag: string, value: string | number, shownAs = flag) => {
    const key = keys.get(flag)!;
    const read = typeof value === "number" ? { value } : valueFromText(key, [value]);
    if ("problem" in read) throw new UsageError(`${flag} ${read.problem}`);
    setAt(flags.values, key.path, read.value);
    flags.sources![key.path] = `flag ${shownAs}`;
  };
  set("--log-level", values["log-level"] ?? "error");
  set("--host", "127.0.0.1");
  set("--port", 0);
  if (values["data-dir"] !== undefined) set("--data-dir", values["data-dir"]);
  if (values.store !== undefined) set("--store", values.store);
  if (flagToken !== undefined) set("--token", flagToken, values.token !== undefined ? "--token" : "--token-file");
  if (values.model !== undefined) set("--model", values.model);
  const resolved = resolveCommandConfig(flags, env, where, values.config);
  return { embedded: resolved.config, token: resolved.config.server.token };
}

function positiveInt(flag: string, value: string | undefined, min: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`--${flag} must be an integer ≥ ${min}, got "${value}"`);
  return n;
}

/** `agentwire chat …` (argv without the command word). Returns null for --help. */
export function parseChatArgs(argv: string[], env: NodeJS.ProcessEnv, where: CommandPlace = {}): ChatArgs | null {
  const { values, positionals } = parse(argv, CHAT_OPTIONS);
  if (values.help) return null;
  const chosen = [values.yes && "--yes", values.deny && "--deny"].filter(Boolean);
  if (chosen.length > 1) throw new UsageError("--yes and --deny cannot go together");
  const auto = positiveInt("auto", values.auto, 0);
  if (auto !== undefined && values.yes) throw new UsageError("--auto N and --yes cannot go together (--yes runs every tool call)");
  if (values.model === "") throw new UsageError("--model needs a model name");
  return {
    target: connectionTarget(values, env, where),
    prompt: positionals.length > 0 ? positionals.join(" ") : undefined,
    json: values.json === true,
    tools: values.yes ? "yes" : values.deny ? "deny" : "ask",
    auto,
    conversationId: values.conversation,
    model: values.model,
    attachments: (values.attach ?? []).map(parseAttachSpec),
  };
}

const ACTIONS: readonly ConversationsAction[] = ["list", "show", "rm", "export"];

/** `agentwire conversations …` (argv without the command word). Returns null for --help. */
export function parseConversationsArgs(argv: string[], env: NodeJS.ProcessEnv, where: CommandPlace = {}): ConversationsArgs | null {
  const { values, positionals } = parse(argv, CONVERSATIONS_OPTIONS);
  if (values.help) return null;
  const [action, id, ...rest] = positionals;
  if (!action || !ACTIONS.includes(action as ConversationsAction)) {
    throw new UsageError(`agentwire conversations needs one of: list, show ID, rm ID, export ID${action ? ` (got "${action}")` : ""}`);
  }
  if (action === "list" ? id !== undefined : id === undefined || rest.length > 0) {
    throw new UsageError(action === "list" ? "conversations list takes no ID" : `conversations ${action} takes exactly one conversation ID`);
  }
  const format = values.format ?? "json";
  if (format !== "json" && format !== "markdown") throw new UsageError(`--format must be json or markdown, got "${format}"`);
  if (values.format !== undefined && action !== "export") throw new UsageError("--format goes with conversations export");
  return {
    target: connectionTarget(values, env, where),
    action: action as ConversationsAction,
    id,
    format,
    json: values.json === true,
    limit: positiveInt("limit", values.limit, 1),
  };
}
