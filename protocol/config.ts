/**
 * The configuration file, `agentwire.json` (JSON with comments). Looked up
 * in the server's working directory and each parent (nearest first) and in
 * `$XDG_CONFIG_HOME/agentwire/agentwire.json` (or
 * `~/.config/agentwire/agentwire.json`). Precedence, lowest first: defaults <
 * user file < parent files (farthest first) < nearest file < environment
 * variables < command-line flags. Objects merge key by key; an array (or any
 * other value) set by a later layer replaces the earlier one whole.
 *
 * The parent walk stops at the user's home directory (nothing above it is
 * read) and at the first directory that is not the user's own or that its
 * group or others may write (such as /tmp). A project file's keys listed in
 * TRUST_REQUIRED_CONFIG_PATHS apply only once the user trusts that file
 * (src/config/config-trust.ts).
 *
 * Every key is optional; an unknown key is an error (a typo must not pass
 * silently). `protocol/config.schema.json` is generated from this schema:
 * point `"$schema"` at it for completion in an editor.
 *
 * This schema is the one place a key is declared: its type and bounds, its
 * default (`.default()`), its description, and in `.meta()` the flag and
 * the environment variable that set it (config-meta.ts). The first sentence
 * of a description is what `agentwire --help` shows beside the flag; the
 * whole of it goes to the editor schema and docs/reference/config.md. A
 * section (an object whose keys are settings) is `.prefault({})`, so that
 * parsing `{}` gives every default; the parsed file, AgentwireConfig, is
 * what the server runs with, and each part of it receives its own section.
 */
import * as z from "zod";
// Types .meta({ flag, env, defaultText, defaultNote }) (see config-meta.ts); a type-only import, so the bundle gets no empty module for it.
import type {} from "./config-meta.js";
import { HistorySection } from "./config-history.js";
import { McpServersConfig } from "./config-mcp.js";
import { ENV_PROVIDER_NAME, ProviderName, ProvidersConfig } from "./config-providers.js";
import { RuntimesConfig } from "./config-runtimes.js";
import { CustomToolDefinition, DEFAULT_TOOL_ENV_ALLOW, FileToolsConfig, ShellToolConfig, ToolEnvEntry, WebToolsConfig } from "./config-tools.js";
import { ModesConfig } from "./modes.js";
import { ConversationSettingsPatch, DEFAULT_CONVERSATION_SETTINGS } from "./conversation-settings.js";

const MiB = 1024 * 1024;

/** A size in bytes, at least 1. */
const bytes = (value: number) => z.number().int().min(1).default(value);
/** A count, at least 1. */
const count = (value: number) => z.number().int().min(1).default(value);
/** A duration in milliseconds, 0 or more (where 0 disables, the description says so). */
const millis = (value: number) => z.number().int().min(0).default(value);

/** server.dataDir's default in words (help, docs): it is the user's, not one value the schema can hold. */
export const DATA_DIR_DEFAULT_TEXT = "$XDG_DATA_HOME/agentwire, else ~/.local/share/agentwire: one per user, whatever the working directory";

const LOG_LEVELS = ["debug", "info", "warn", "error", "silent"] as const;
const LOG_FORMATS = ["text", "json"] as const;

export const ServerSection = z
  .strictObject({
    host: z
      .string()
      .min(1)
      .default("127.0.0.1")
      .describe("Address to listen on; a non-loopback address requires a token.")
      .meta({ flag: "--host HOST" }),
    port: z.number().int().min(0).max(65535).default(8765).describe("Port to listen on; 0 picks a free one.").meta({ flag: "--port PORT" }),
    dataDir: z
      .string()
      .min(1)
      // No .default(): the default depends on the user (DATA_DIR_DEFAULT_TEXT, filled by src/config/user-dirs.ts).
      .optional()
      .describe(
        "Where conversations are stored. One server per data dir: it advertises its address there, and `agentwire chat` and the other client commands connect to it rather than start their own. " +
          "A relative path is taken from the directory of the file that sets it, else from the working directory (`--data-dir .agentwire` reads a store an older agentwire kept in the project).",
      )
      .meta({ flag: "--data-dir DIR", defaultText: DATA_DIR_DEFAULT_TEXT }),
    store: z
      .string()
      .regex(/^(?:lowdb|postgres(?:ql)?:\/\/.*)$/i, 'must be "lowdb" or a postgres:// URL')
      .default("lowdb")
      .describe(
        "Which store keeps conversations: lowdb (files in dataDir) or a PostgreSQL URL, postgres://USER@HOST:PORT/DATABASE, which several instances may share " +
          "(a password may stand in the URL but is better given as PGPASSWORD; it is never printed).",
      )
      .meta({ flag: "--store STORE" }),
    redis: z
      .string()
      .regex(/^rediss?:\/\/.+/i, "must be a redis:// or rediss:// URL")
      .optional()
      .describe(
        "Cluster mode: a Redis URL (redis://HOST:6379) shared by several agentwire instances on one shared store (PostgreSQL). " +
          "Redis carries event fan-out between instances, conversation ownership leases and forwarded requests. " +
          "Refused with the embedded lowdb store, whose data dir only one process may use. Secret when the URL holds a password.",
      )
      .meta({ flag: "--redis URL" }),
    ownerLeaseMs: z
      .number()
      .int()
      .min(300)
      .default(10_000)
      .describe(
        "Cluster mode: how long a conversation's ownership lease lasts without renewal, which is also the longest a conversation stays with an instance that died before another takes it over. " +
          "It is renewed every quarter of it; an instance whose renewals Redis does not confirm gives it up a quarter of it before it runs out.",
      )
      .meta({ flag: "--owner-lease-ms MS" }),
    redisPrefix: z
      .string()
      .min(1)
      .max(100)
      .default("agentwire:")
      .describe(
        "Cluster mode: the prefix of every Redis key and channel the instances use; instances with the same prefix form one cluster. Several clusters can share one Redis.",
      )
      .meta({ flag: "--redis-prefix PREFIX" }),
    token: z
      .string()
      .min(1)
      .optional()
      .describe(
        "Require this token on every WebSocket upgrade (Authorization: Bearer, ?token=, or the subprotocol bearer.TOKEN). " +
          "Secret: prefer --token-file FILE or the AGENTWIRE_TOKEN variable to this file, and either to --token (a command line is visible to every local user).",
      )
      .meta({ flag: "--token TOKEN", env: "AGENTWIRE_TOKEN" }),
    allowOrigins: z
      .array(z.string().min(1))
      .default([])
      .describe("Browser origins allowed besides the server's own, e.g. http://localhost:5173; no other origin is by default.")
      .meta({ flag: "--allow-origin ORIGIN" }),
    heartbeatMs: millis(30_000).describe("Ping interval; a peer that misses a pong is terminated. 0 disables."),
    logLevel: z.enum(LOG_LEVELS).default("info").describe("Log level on stderr.").meta({ flag: "--log-level LEVEL" }),
    logFormat: z
      .enum(LOG_FORMATS)
      .default("text")
      .describe(
        "Log lines on stderr: text for people, or json for log collectors (one object per line: time, level, msg, and conversationId, generationId, err when they apply).",
      )
      .meta({ flag: "--log-format FORMAT" }),
  })
  .describe("Listening, storage and logging.");

export const LimitsSection = z
  .strictObject({
    maxPayloadBytes: bytes(4 * MiB)
      .describe("Largest accepted frame; a larger one closes that socket with 1009.")
      .meta({ flag: "--max-payload BYTES" }),
    maxBufferedBytes: bytes(64 * MiB).describe("A connection whose unsent backlog passes this is terminated."),
    maxConnections: count(10_000)
      .describe("Open connections at most; more get HTTP 503.")
      .meta({ flag: "--max-connections N", defaultNote: "or fewer when the open-file limit is lower" }),
    maxConnectionsPerAddress: count(1024)
      .describe("Open connections from one address at most.")
      .meta({ flag: "--max-connections-per-address N" }),
    initializeTimeoutMs: millis(10_000).describe("A connection that has not sent initialize this long is closed. 0 disables."),
    maxInFlightPerConnection: count(64).describe("Frames of one connection handled at once."),
    maxBatch: count(100).describe("Most requests in one batch."),
    maxDepth: count(64).describe("Deepest nesting of arrays and objects in a frame."),
    maxReplyBytes: bytes(16 * MiB).describe("Largest reply to one frame."),
    maxMessageBytes: bytes(1 * MiB)
      .describe("Largest message content or system prompt, in UTF-8 bytes.")
      .meta({ flag: "--max-message-bytes N" }),
    maxContextBytes: bytes(32 * MiB).describe("Largest model request built from a conversation, in bytes of text."),
    maxCheckpointBytes: bytes(16 * MiB).describe(
      "Bytes of file checkpoints (the content each write_file / edit_file call replaced, kept so conversation.rewind can restore it) one conversation keeps; beyond it the oldest are dropped, with a checkpoint_dropped notice.",
    ),
    clientToolGraceMs: millis(30_000).describe(
      "How long a client tool call (tools.register) whose connection closed waits for the same client (same clientInfo.name) to register the tool again on the conversation and take the call over; after it the call fails, telling the model the client disconnected.",
    ),
    maxSubscriptionsPerConnection: count(1000).describe("Conversations one connection may subscribe to."),
    maxGenerations: count(1000).describe("Generations running at once."),
    // 0 is allowed for the depth: it turns spawn_agent off (every call fails with a tool error saying so).
    maxAgentDepth: z
      .number()
      .int()
      .min(0)
      .max(8)
      .default(2)
      .describe(
        "How deep sub-agents may nest: a conversation a client created is depth 0, the child its spawn_agent call creates is 1, that child's child 2. A spawn_agent call that would pass it fails with a tool error the model reads; 0 turns sub-agents off.",
      ),
    maxChildAgents: count(16).describe(
      "Sub-agents one conversation's spawn_agent calls may create over its life (its children, as conversation.list { parentConversationId } counts them); one more fails with a tool error the model reads.",
    ),
    maxQueuedMessages: count(32).describe(
      "Messages one conversation holds for later (message.append delivery steer or queue while a generation runs); one more is refused (LIMIT_EXCEEDED) and nothing is stored.",
    ),
    maxQueuedBytes: bytes(2 * MiB).describe(
      "Bytes (UTF-8, as stored) of the messages one conversation holds for later, all together; a message that would pass it is refused (LIMIT_EXCEEDED) and nothing is stored. Held messages travel whole in state.queue and every queue_changed, so this keeps those frames within maxReplyBytes and the event log.",
    ),
    maxLoadedConversations: count(10_000)
      .describe("Conversations kept in memory at most; beyond it the least recently used that are not running are unloaded.")
      .meta({ flag: "--max-loaded-conversations N" }),
    idleUnloadMs: millis(600_000).describe("Unload a conversation nobody watches or runs after this long. 0 disables."),
    eventLogSize: count(4096)
      .describe("Recent events kept per conversation for replay (and at most limits.eventLogBytes of them).")
      .meta({ flag: "--event-log-size N" }),
    eventLogBytes: bytes(4 * MiB).describe("Bytes of replay frames kept per conversation."),
    replayBudgetBytes: bytes(64 * MiB).describe("Bytes of replay frames kept across all conversations."),
    storeCacheBytes: bytes(64 * MiB).describe("Bytes of records the store keeps cached in memory."),
    // 256 MiB is about 50 images at the 5 MiB per-image cap (hundreds of screenshots) per conversation;
    // 2 GiB bounds the disk all clients together can fill (907 MB went in 6.7 s without a bound).
    maxConversationAssetBytes: bytes(256 * MiB)
      .describe(
        "Bytes of uploaded images (asset.upload) one conversation may keep; an upload that would pass it is refused (LIMIT_EXCEEDED) and stores nothing; deleting the conversation frees its share.",
      )
      .meta({ defaultNote: "(256 MiB: about 50 images at the 5 MiB per-image cap, hundreds of screenshots)" }),
    maxTotalAssetBytes: bytes(2048 * MiB)
      .describe(
        "Bytes of uploaded images the store keeps across all conversations (every instance of a cluster together); an upload that would pass it is refused (LIMIT_EXCEEDED) and stores nothing.",
      )
      .meta({ defaultNote: "(2 GiB)" }),
    // Well above common setups (a handful to a score of servers); 32 stdio servers hold about 100
    // pipes, far inside the descriptors the server keeps for everything but connections.
    maxMcpServers: count(32).describe(
      "MCP servers declared at most, configuration file and mcp.add together (each may be a process with its pipes); mcp.add beyond it is refused (LIMIT_EXCEEDED), and servers over it at start are not started (the log says which).",
    ),
    maxConversationMcpServers: count(64).describe(
      "Conversation MCP servers (conversation.create mcpServers) running at most on this instance, all loaded conversations together (each may be a process with its pipes); a server beyond it is not started and shows as failed in mcp.list { conversationId }.",
    ),
  })
  .describe("Bounds on what clients can make the server hold; each answers with a clear error when reached.");

export const LlmSection = z
  .strictObject({
    baseUrl: z
      .string()
      .url()
      .optional()
      .describe("OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 for Ollama.")
      .meta({ env: "OPENAI_BASE_URL" }),
    apiKey: z
      .string()
      .min(1)
      .optional()
      .describe("The endpoint's API key (optional for local endpoints). Secret: prefer apiKeyEnv or the OPENAI_API_KEY variable to a file.")
      .meta({ env: "OPENAI_API_KEY" }),
    apiKeyEnv: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
      .optional()
      .describe("Name of the environment variable holding the API key; the server refuses to start when it is not set. Leave it out for an endpoint that takes no key (Ollama, llama.cpp)."),
    idleTimeoutMs: z
      .number()
      .int()
      .min(100)
      .default(60_000)
      .describe("Fail a model stream silent this long.")
      .meta({ flag: "--llm-idle-timeout MS" }),
  })
  .describe("The endpoint of the provider named `default` (see `providers`): Chat Completions, from the environment or this section.");

export const ToolsSection = z
  .strictObject({
    timeoutMs: z
      .number()
      .int()
      .min(100)
      .default(DEFAULT_CONVERSATION_SETTINGS.toolTimeoutMs)
      .describe("Time limit of one tool call, for conversations that set none of their own (settings.toolTimeoutMs).")
      .meta({ flag: "--tool-timeout MS" }),
    envAllow: z
      .array(ToolEnvEntry)
      .default([])
      .describe(
        `Environment variables tools may see besides ${DEFAULT_TOOL_ENV_ALLOW.join(" ")}: a NAME, or a PREFIX* (which never matches names that look like credentials).`,
      )
      .meta({ flag: "--tool-env NAME", env: "AGENTWIRE_TOOL_ENV" }),
    shell: ShellToolConfig.prefault({}),
    files: FileToolsConfig.prefault({}),
    custom: z.array(CustomToolDefinition).default([]).describe("Shell commands offered to the model as tools."),
    web: WebToolsConfig.prefault({}),
  })
  .describe("Tools the model may call.");

/**
 * The placeholders a system prompt template may use, each `{{name}}`
 * (spaces inside the braces allowed). src/context/system-prompt.ts renders
 * them; anything else in double braces is refused, so a typo never reaches
 * the model as literal text.
 */
export const SYSTEM_PROMPT_PLACEHOLDERS = {
  workspace: "the conversation's workspace (absolute path)",
  date: "today's date, ISO (YYYY-MM-DD, UTC)",
  os: "the server's platform and release, e.g. \"linux 6.1.0\"",
  tools: "the names of the tools offered, comma-separated",
  skills: "the skills found for the workspace, one per line with its description, and how to load one (load_skill)",
  plan: "when update_plan is offered, when to keep a plan with it; nothing when it is not (turned off by settings.toolPolicy)",
} as const;
export type SystemPromptPlaceholder = keyof typeof SYSTEM_PROMPT_PLACEHOLDERS;

/** `{{ name }}` anywhere in a template. */
export const PLACEHOLDER_PATTERN = /\{\{\s*([^{}]*?)\s*\}\}/g;

/** The placeholder names a template uses that are not in SYSTEM_PROMPT_PLACEHOLDERS, in order, once each. */
export function unknownPlaceholders(template: string): string[] {
  const unknown = new Set<string>();
  for (const match of template.matchAll(PLACEHOLDER_PATTERN)) {
    if (!Object.hasOwn(SYSTEM_PROMPT_PLACEHOLDERS, match[1])) unknown.add(match[1]);
  }
  return [...unknown];
}

/** A template is refused when it names an unknown placeholder; the message lists it and the known ones. */
export function unknownPlaceholderMessage(unknown: readonly string[]): string {
  const known = Object.keys(SYSTEM_PROMPT_PLACEHOLDERS).map((n) => `{{${n}}}`).join(", ");
  return `unknown placeholder${unknown.length > 1 ? "s" : ""} ${unknown.map((n) => `{{${n}}}`).join(", ")} (known: ${known})`;
}

const placeholderDocs = Object.entries(SYSTEM_PROMPT_PLACEHOLDERS)
  .map(([name, what]) => `{{${name}}}: ${what}`)
  .join("; ");

/** The system prompt template of conversations without their own when `conversations.systemPrompt` is not set. */
export const DEFAULT_SYSTEM_PROMPT_TEMPLATE = [
  "You are agentwire, an assistant that works in the workspace {{workspace}} on {{os}}. Today is {{date}}.",
  "Use your tools ({{tools}}) to look before you change anything, and say plainly what you did and what you found.",
  "{{plan}}",
  "{{skills}}",
].join("\n");

/**
 * `conversations.settings` is the wire's settings patch (records.ts), whose
 * descriptions the protocol reference shares. Here each key also shows the
 * value a new conversation gets when neither this file nor
 * conversation.create sets it, as a JSON Schema `default` for editors and
 * the reference page only: parsing adds nothing, so an unset key stays
 * unset (and toolTimeoutMs follows tools.timeoutMs).
 */
const ConfigConversationSettings = z
  .strictObject(
    Object.fromEntries(
      Object.entries(ConversationSettingsPatch.shape).map(([key, schema]) => {
        if (key === "toolTimeoutMs") return [key, schema.meta({ defaultText: "`tools.timeoutMs` (`--tool-timeout`)" })];
        if (!Object.hasOwn(DEFAULT_CONVERSATION_SETTINGS, key)) return [key, schema];
        return [key, schema.meta({ default: DEFAULT_CONVERSATION_SETTINGS[key as keyof typeof DEFAULT_CONVERSATION_SETTINGS] })];
      }),
    ) as typeof ConversationSettingsPatch.shape,
  )
  .default({})
  .describe("Settings every new conversation starts with (a conversation.create may still set its own).");

export const ConversationsSection = z
  .strictObject({
    settings: ConfigConversationSettings,
    systemPrompt: z
      .string()
      .max(1_000_000)
      .superRefine((template, ctx) => {
        const unknown = unknownPlaceholders(template);
        if (unknown.length > 0) ctx.addIssue({ code: "custom", message: unknownPlaceholderMessage(unknown) });
      })
      .default(DEFAULT_SYSTEM_PROMPT_TEMPLATE)
      .describe(
        `System prompt template for conversations that have no system prompt of their own, rendered before every model call. Placeholders: ${placeholderDocs}. Any other {{…}} is an error; "" sends no system prompt.`,
      )
      .meta({ defaultText: "a short built-in template (DEFAULT_SYSTEM_PROMPT_TEMPLATE in protocol/config.ts)" }),
  })
  .describe("Defaults for new conversations.");

export const AgentwireConfigFile = z
  .strictObject({
    $schema: z.string().optional().describe("Where an editor finds this schema (protocol/config.schema.json); ignored by the server."),
    model: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe("Default model, bare (goes to defaultProvider) or as provider/model.")
      .meta({ flag: "--model MODEL", env: "AGENTWIRE_MODEL" }),
    defaultProvider: ProviderName.default(ENV_PROVIDER_NAME).describe(
      `The provider a bare model name goes to. "${ENV_PROVIDER_NAME}" is the \`llm\` endpoint (OPENAI_BASE_URL), unless \`providers\` declares one of that name.`,
    ),
    providers: ProvidersConfig.default({}),
    runtimes: RuntimesConfig.default({}),
    server: ServerSection.prefault({}),
    limits: LimitsSection.prefault({}),
    llm: LlmSection.prefault({}),
    tools: ToolsSection.prefault({}),
    conversations: ConversationsSection.prefault({}),
    mcpServers: McpServersConfig.default({}),
    modes: ModesConfig.default({}),
    history: HistorySection.prefault({}),
  })
  .describe("agentwire configuration file (agentwire.json). Every key is optional.");

/** A configuration file as written: every key optional. */
export type AgentwireConfigFile = z.input<typeof AgentwireConfigFile>;
/** A file (or the layers merged) parsed: every default the schema can hold applied. */
export type ParsedConfigFile = z.output<typeof AgentwireConfigFile>;
/** The server section the server runs with: server.dataDir is always set (to the per-user default when no layer sets it). */
export type ServerSettings = ParsedConfigFile["server"] & { dataDir: string };
/** The configuration the server runs with: a file (or the layers merged) parsed, every default applied. */
export type AgentwireConfig = Omit<ParsedConfigFile, "server"> & { server: ServerSettings };
export type LimitsConfig = AgentwireConfig["limits"];
export type LlmSettings = AgentwireConfig["llm"];
export type ToolsConfig = AgentwireConfig["tools"];
export type ConversationsConfig = AgentwireConfig["conversations"];
export type ModesConfigSection = AgentwireConfig["modes"];
export type HistoryConfig = AgentwireConfig["history"];
export type LogLevel = ServerSettings["logLevel"];
export type LogFormat = ServerSettings["logFormat"];

/**
 * Every key at its default, read off the schema: for a part built without a
 * configuration (a test, a bench) to fall back on the same value the server
 * would start with. Frozen: shared, never changed. Parsed jitless, as
 * src/config parses the configuration (PARSE_CONFIG): this parse runs when the
 * module loads, on every start, where zod's generated fast path for the schema
 * (~5-10 ms of code generation) would never pay back.
 */
export const CONFIG_DEFAULTS: ParsedConfigFile = deepFreeze(AgentwireConfigFile.parse({}, { jitless: true }));

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/** What a trust-gated key does that makes it need the user's say-so. */
export type TrustReason = "runs commands" | "sends credentials";

/**
 * Keys (dot-separated paths; each covers everything under it) that a project
 * agentwire.json — one found in the working directory or a parent, not the
 * user file and not `--config FILE` — may set only once the user has trusted
 * that file as it is (`agentwire trust DIR`). A cloned repository must not be
 * able to start a program, make tool calls run unasked, or send the user's
 * keys (or conversations) to an address it chooses. An untrusted file's
 * other keys apply; these are skipped with a config_untrusted notice.
 *
 * The one list: discovery, `agentwire config`, `agentwire trust` and the
 * notices all read it.
 */
export const TRUST_REQUIRED_CONFIG_PATHS: readonly { path: string; reason: TrustReason; what: string }[] = [
  { path: "mcpServers", reason: "runs commands", what: "starts MCP server programs (and sends headers to MCP URLs)" },
  { path: "tools.custom", reason: "runs commands", what: "offers shell commands to the model as tools" },
  { path: "tools.shell", reason: "runs commands", what: "chooses the program every shell command line runs through" },
  { path: "conversations.settings.approval", reason: "runs commands", what: "can let tool calls run without asking" },
  { path: "conversations.settings.toolPolicy", reason: "runs commands", what: "can let tools run without asking" },
  { path: "conversations.settings.approvalRules", reason: "runs commands", what: "can let tool calls run without asking" },
  { path: "conversations.settings.mode", reason: "runs commands", what: "can start conversations in a mode whose tool calls run without asking (auto)" },
  { path: "modes", reason: "runs commands", what: "can define modes whose tool calls run without asking" },
  { path: "server.host", reason: "runs commands", what: "can open the agent (and its shell) to other machines" },
  { path: "server.token", reason: "runs commands", what: "sets the token that lets a client in (a token the file's author knows)" },
  { path: "server.allowOrigins", reason: "runs commands", what: "lets web pages of other origins drive the agent" },
  { path: "tools.web.allowPrivateNetwork", reason: "runs commands", what: "lets web_fetch reach this machine's and the local network's services" },
  { path: "server.redis", reason: "runs commands", what: "takes forwarded requests and events from a Redis server" },
  { path: "server.store", reason: "sends credentials", what: "sends conversations (and PGPASSWORD) to a database server" },
  { path: "llm.baseUrl", reason: "sends credentials", what: "sends the API key (OPENAI_API_KEY) and conversations to this endpoint" },
  { path: "llm.apiKey", reason: "sends credentials", what: "sends conversations to another account's key" },
  { path: "llm.apiKeyEnv", reason: "sends credentials", what: "sends the environment variable it names as an API key" },
  { path: "runtimes", reason: "runs commands", what: "starts agent runtimes (Codex) that run commands of their own" },
  { path: "providers", reason: "sends credentials", what: "sends API keys, headers and conversations to the endpoints it declares" },
  { path: "defaultProvider", reason: "sends credentials", what: "chooses which endpoint gets the requests" },
  { path: "tools.envAllow", reason: "sends credentials", what: "lets tools (and so the model) read environment variables" },
  { path: "tools.web.search", reason: "sends credentials", what: "sends a search API key to a search endpoint" },
];

/** Paths (dot-separated) whose values are secrets: `agentwire config` masks them. */
/** `*` stands for one key: an MCP server's env and header names show, their values do not. */
export const SECRET_CONFIG_PATHS: readonly string[] = [
  "server.token",
  "llm.apiKey",
  "tools.web.search.apiKey",
  "mcpServers.*.env.*",
  "mcpServers.*.headers.*",
  "providers.*.apiKey",
  "providers.*.headers.*",
];

/** Paths whose values are URLs that may carry a password: `agentwire config` shows them with the password masked. */
export const SECRET_URL_CONFIG_PATHS: readonly string[] = ["server.store", "server.redis"];
