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
 * The start path does not build this schema: `npm run gen` writes it as data
 * (src/config/config-table.ts, protocol/config-defaults.ts), which parses a
 * valid configuration without zod; a configuration that needs zod (an error
 * to word, a key with a refinement) loads this module (src/config/config-check.ts).
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
import { ruleCheck } from "./schema-rule-check.js";
// Types .meta({ flag, env, defaultText, defaultNote }) (see config-meta.ts); a type-only import, so the bundle gets no empty module for it.
import type {} from "./config-meta.js";
import { HistorySection } from "./config-history.js";
import { McpServersConfig } from "./config-mcp.js";
import { ENV_PROVIDER_NAME, ProviderName, ProvidersConfig } from "./config-providers.js";
import { RuntimesConfig } from "./config-runtimes.js";
import { CustomToolDefinition, DEFAULT_TOOL_ENV_ALLOW, FileToolsConfig, ShellToolConfig, ToolEnvEntry, WebToolsConfig } from "./config-tools.js";
import { ModesConfig } from "./modes.js";
import { ConversationSettingsPatch, DEFAULT_CONVERSATION_SETTINGS } from "./conversation-settings.js";
import { DEFAULT_SYSTEM_PROMPT_TEMPLATE, SYSTEM_PROMPT_PLACEHOLDERS } from "./system-prompt-template.js";

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
    socketThread: z
      .boolean()
      .default(false)
      .describe(
        "Serve the WebSockets and the HTTP routes from a thread of their own: writing each frame to its socket then runs beside the agent's work " +
          "instead of within it, which pays when many clients watch busy conversations (see docs/performance.md). The port, limits and checks are the same.",
      ),
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

export {
  DEFAULT_SYSTEM_PROMPT_TEMPLATE,
  PLACEHOLDER_PATTERN,
  SYSTEM_PROMPT_PLACEHOLDERS,
  type SystemPromptPlaceholder,
  unknownPlaceholderMessage,
  unknownPlaceholders,
} from "./system-prompt-template.js";

const placeholderDocs = Object.entries(SYSTEM_PROMPT_PLACEHOLDERS)
  .map(([name, what]) => `{{${name}}}: ${what}`)
  .join("; ");

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
      .check(ruleCheck("systemPrompt placeholders"))
      .default(DEFAULT_SYSTEM_PROMPT_TEMPLATE)
      .describe(
        `System prompt template for conversations that have no system prompt of their own, rendered before every model call. Placeholders: ${placeholderDocs}. Any other {{…}} is an error; "" sends no system prompt.`,
      )
      .meta({ defaultText: "a short built-in template (DEFAULT_SYSTEM_PROMPT_TEMPLATE in protocol/system-prompt-template.ts)" }),
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

export { SECRET_CONFIG_PATHS, SECRET_URL_CONFIG_PATHS, TRUST_REQUIRED_CONFIG_PATHS, type TrustReason } from "./config-trust-paths.js";
