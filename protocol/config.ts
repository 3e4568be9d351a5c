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
 */
import * as z from "zod";
import { McpServersConfig } from "./config-mcp.js";
import { ProviderName, ProvidersConfig } from "./config-providers.js";
import { CustomToolDefinition, FileToolsConfig, WebToolsConfig } from "./config-tools.js";
import { ConversationSettingsPatch } from "./records.js";

const Bytes = (what: string) => z.number().int().min(1).describe(what);
const Count = (what: string) => z.number().int().min(1).describe(what);
const Millis = (what: string) => z.number().int().min(0).describe(what);

export const ServerSection = z
  .strictObject({
    host: z.string().min(1).describe("Address to listen on (default 127.0.0.1). A non-loopback address requires a token. Flag: --host."),
    port: z.number().int().min(0).max(65535).describe("Port (default 8765; 0 picks a free one). Flag: --port."),
    dataDir: z
      .string()
      .min(1)
      .describe("Where conversations are stored (default ./.agentwire), relative to the file that sets it. Flag: --data-dir."),
    store: z
      .string()
      .regex(/^(?:lowdb|postgres(?:ql)?:\/\/.*)$/i, 'must be "lowdb" or a postgres:// URL')
      .describe(
        "Which store keeps conversations: lowdb (default; files in dataDir) or PostgreSQL, as a URL postgres://USER@HOST:PORT/DATABASE (several instances may share one database). A password may stand in the URL but is better given as PGPASSWORD; it is never printed. Flag: --store.",
      ),
    redis: z
      .string()
      .regex(/^rediss?:\/\/.+/i, "must be a redis:// or rediss:// URL")
      .describe(
        "Cluster mode: a Redis URL (redis://HOST:6379) shared by several agentwire instances on one shared store (PostgreSQL). Redis carries event fan-out between instances, conversation ownership leases and forwarded requests. Refused with the embedded lowdb store, whose data dir only one process may use. Secret when the URL holds a password. Flag: --redis.",
      ),
    ownerLeaseMs: z
      .number()
      .int()
      .min(300)
      .describe(
        "Cluster mode: how long a conversation's ownership lease lasts without renewal (renewed every quarter of it; an instance whose renewals Redis does not confirm gives it up a quarter of it before it runs out); also the longest a conversation stays with an instance that died before another takes it over. Default 10000. Flag: --owner-lease-ms.",
      ),
    redisPrefix: z
      .string()
      .min(1)
      .max(100)
      .describe(
        "Cluster mode: the prefix of every Redis key and channel the instances use (default \"agentwire:\"); instances with the same prefix form one cluster, so several clusters can share one Redis. Flag: --redis-prefix.",
      ),
    token: z
      .string()
      .min(1)
      .describe("Require this token on every WebSocket upgrade. Secret: prefer --token-file FILE or the AGENTWIRE_TOKEN variable to this file, and either to --token (a command line is visible to every local user). Flags: --token-file, --token."),
    allowOrigins: z
      .array(z.string().min(1))
      .describe("Browser origins allowed besides the server's own (e.g. http://localhost:5173). Flag: --allow-origin."),
    heartbeatMs: Millis("Ping interval; a peer that misses a pong is terminated. 0 disables. Default 30000."),
    logLevel: z.enum(["debug", "info", "warn", "error", "silent"]).describe("Log level on stderr (default info). Flag: --log-level."),
    logFormat: z
      .enum(["text", "json"])
      .describe(
        "Log lines on stderr: text (default, for people) or json (one object per line: time, level, msg, and conversationId, generationId, err when they apply; for log collectors). Flag: --log-format.",
      ),
  })
  .partial()
  .describe("Listening, storage and logging.");

export const LimitsSection = z
  .strictObject({
    maxPayloadBytes: Bytes("Largest accepted frame; a larger one closes that socket with 1009. Default 4194304. Flag: --max-payload."),
    maxBufferedBytes: Bytes("A connection whose unsent backlog passes this is terminated. Default 67108864."),
    maxConnections: Count("Open connections at most. Default 10000, or fewer when the open-file limit is lower. Flag: --max-connections."),
    maxConnectionsPerAddress: Count("Open connections from one address at most. Default 1024. Flag: --max-connections-per-address."),
    initializeTimeoutMs: Millis("A connection that has not sent initialize this long is closed. 0 disables. Default 10000."),
    maxInFlightPerConnection: Count("Frames of one connection handled at once. Default 64."),
    maxBatch: Count("Most requests in one batch. Default 100."),
    maxDepth: Count("Deepest nesting of arrays and objects in a frame. Default 64."),
    maxReplyBytes: Bytes("Largest reply to one frame. Default 16777216."),
    maxMessageBytes: Bytes("Largest message content or system prompt, in UTF-8 bytes. Default 1048576. Flag: --max-message-bytes."),
    maxContextBytes: Bytes("Largest model request built from a conversation, in bytes of text. Default 33554432."),
    maxSubscriptionsPerConnection: Count("Conversations one connection may subscribe to. Default 1000."),
    maxGenerations: Count("Generations running at once. Default 1000."),
    maxLoadedConversations: Count("Conversations kept in memory at most. Default 10000. Flag: --max-loaded-conversations."),
    idleUnloadMs: Millis("Unload a conversation nobody watches or runs after this long. 0 disables. Default 600000."),
    eventLogSize: Count("Recent events kept per conversation for replay. Default 4096. Flag: --event-log-size."),
    eventLogBytes: Bytes("Bytes of replay frames kept per conversation. Default 4194304."),
    replayBudgetBytes: Bytes("Bytes of replay frames kept across all conversations. Default 67108864."),
    storeCacheBytes: Bytes("Bytes of records the store keeps cached in memory. Default 67108864."),
    maxConversationAssetBytes: Bytes(
      "Bytes of uploaded images (asset.upload) one conversation may keep; an upload that would pass it is refused (LIMIT_EXCEEDED) and stores nothing; deleting the conversation frees its share. Default 268435456 (256 MiB: about 50 images at the 5 MiB per-image cap, hundreds of screenshots).",
    ),
    maxTotalAssetBytes: Bytes(
      "Bytes of uploaded images the store keeps across all conversations (every instance of a cluster together); an upload that would pass it is refused (LIMIT_EXCEEDED) and stores nothing. Default 2147483648 (2 GiB).",
    ),
    maxMcpServers: Count(
      "MCP servers declared at most, configuration file and mcp.add together (each may be a process with its pipes); mcp.add beyond it is refused (LIMIT_EXCEEDED), and servers over it at start are not started (the log says which). Default 32.",
    ),
  })
  .partial()
  .describe("Bounds on what clients can make the server hold; each answers with a clear error when reached.");

export const LlmSection = z
  .strictObject({
    baseUrl: z.string().url().describe("OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 for Ollama. Environment: OPENAI_BASE_URL."),
    apiKey: z.string().min(1).describe("Its API key. Secret: prefer apiKeyEnv or the OPENAI_API_KEY variable to a file."),
    apiKeyEnv: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/).describe("Name of the environment variable holding the API key."),
    idleTimeoutMs: z.number().int().min(100).describe("Fail a model stream silent this long. Default 60000. Flag: --llm-idle-timeout."),
  })
  .partial()
  .describe("The endpoint of the provider named `default` (see `providers`): Chat Completions, from the environment or this section.");

export const ToolsSection = z
  .strictObject({
    timeoutMs: z.number().int().min(100).describe("Default time limit of one tool call. Default 120000. Flag: --tool-timeout."),
    envAllow: z
      .array(z.string().min(1))
      .describe("Environment variables tools may see besides the harmless defaults (NAME, or PREFIX* which never matches credential-like names). Flag: --tool-env."),
    files: FileToolsConfig,
    custom: z.array(CustomToolDefinition).describe("Shell commands offered to the model as tools."),
    web: WebToolsConfig,
  })
  .partial()
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

export const ConversationsSection = z
  .strictObject({
    settings: ConversationSettingsPatch.describe("Settings every new conversation starts with (a conversation.create may still set its own)."),
    systemPrompt: z
      .string()
      .max(1_000_000)
      .superRefine((template, ctx) => {
        const unknown = unknownPlaceholders(template);
        if (unknown.length > 0) ctx.addIssue({ code: "custom", message: unknownPlaceholderMessage(unknown) });
      })
      .describe(
        `System prompt template for conversations that have no system prompt of their own, rendered before every model call. Placeholders: ${placeholderDocs}. Any other {{…}} is an error. Default: a short built-in template; "" sends no system prompt.`,
      ),
  })
  .partial()
  .describe("Defaults for new conversations.");

export const AgentwireConfigFile = z
  .strictObject({
    $schema: z.string().describe("Where an editor finds this schema (protocol/config.schema.json); ignored by the server."),
    model: z
      .string()
      .min(1)
      .max(200)
      .describe("Default model, bare (goes to defaultProvider) or as provider/model. Environment: AGENTWIRE_MODEL. Flag: --model."),
    defaultProvider: ProviderName.describe(
      "The provider a bare model name goes to. Default \"default\": the `llm` endpoint (OPENAI_BASE_URL), unless `providers` declares one of that name.",
    ),
    providers: ProvidersConfig,
    server: ServerSection,
    limits: LimitsSection,
    llm: LlmSection,
    tools: ToolsSection,
    conversations: ConversationsSection,
    mcpServers: McpServersConfig,
  })
  .partial()
  .describe("agentwire configuration file (agentwire.json). Every key is optional.");

export type AgentwireConfigFile = z.infer<typeof AgentwireConfigFile>;

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
  { path: "conversations.settings.approval", reason: "runs commands", what: "can let tool calls run without asking" },
  { path: "conversations.settings.toolPolicy", reason: "runs commands", what: "can let tools run without asking" },
  { path: "server.host", reason: "runs commands", what: "can open the agent (and its shell) to other machines" },
  { path: "server.token", reason: "runs commands", what: "sets the token that lets a client in (a token the file's author knows)" },
  { path: "server.allowOrigins", reason: "runs commands", what: "lets web pages of other origins drive the agent" },
  { path: "tools.web.allowPrivateNetwork", reason: "runs commands", what: "lets web_fetch reach this machine's and the local network's services" },
  { path: "server.redis", reason: "runs commands", what: "takes forwarded requests and events from a Redis server" },
  { path: "server.store", reason: "sends credentials", what: "sends conversations (and PGPASSWORD) to a database server" },
  { path: "llm.baseUrl", reason: "sends credentials", what: "sends the API key (OPENAI_API_KEY) and conversations to this endpoint" },
  { path: "llm.apiKey", reason: "sends credentials", what: "sends conversations to another account's key" },
  { path: "llm.apiKeyEnv", reason: "sends credentials", what: "sends the environment variable it names as an API key" },
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
