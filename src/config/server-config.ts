import { readFileSync } from "node:fs";
import type { McpServersConfig } from "../../protocol/config-mcp.js";
import type { Notice } from "../../protocol/notices.js";
import type { ProvidersConfig } from "../../protocol/config-providers.js";
import type { CustomToolDefinition, WebToolsConfig } from "../../protocol/config-tools.js";
import type { ConversationSettings } from "../../protocol/records.js";
import { DEFAULT_SYSTEM_PROMPT_TEMPLATE } from "../context/system-prompt.js";
import type { LogFormat, LogLevel } from "../logging/logger.js";

/** Everything the server needs to start; the CLI fills it from flags and environment. */
export interface ServerConfig {
  host: string;
  /** 0 = let the OS pick a free port. */
  port: number;
  dataDir: string;
  /** "lowdb": the embedded store in dataDir; or a postgres:// URL (src/store/configured-store.ts). */
  store: string;
  /** When set, every WebSocket upgrade must carry it. Required to bind beyond loopback. */
  token?: string;
  /** Cluster mode (src/cluster/cluster-node.ts): the Redis shared by the instances. Unset: one process, no Redis. */
  redis?: string;
  /** Cluster mode: a conversation's ownership lease, ms without renewal. */
  ownerLeaseMs: number;
  /** Cluster mode: prefix of every Redis key and channel; one prefix, one cluster. */
  redisPrefix: string;
  /** Browser origins allowed besides the server's own (e.g. http://localhost:5173). */
  allowOrigins: string[];
  /** Largest accepted frame; a larger one closes that socket with 1009. */
  maxPayloadBytes: number;
  /** A socket whose unsent backlog exceeds this is terminated; it can reconnect with afterSeq. */
  maxBufferedBytes: number;
  /** Recent events kept per conversation for replay on reconnect: at most this many… */
  eventLogSize: number;
  /** …and at most this many bytes of frames per conversation. */
  eventLogBytes: number;
  /** Bytes of replay frames kept across all conversations; beyond it the least recently used logs are trimmed. */
  replayBudgetBytes: number;
  /** Ping interval; a peer that misses a pong is terminated. 0 disables. */
  heartbeatMs: number;
  /** Unload a conversation from memory after this long without subscribers, generation or requests. 0 disables. */
  idleUnloadMs: number;
  /** Conversations held in memory at most; beyond it the least recently used idle ones are unloaded. */
  maxLoadedConversations: number;
  /** Bytes of record data the store keeps cached in memory across all conversations. */
  storeCacheBytes: number;
  /** Bytes of uploaded images one conversation may keep (asset.upload beyond it is refused). */
  maxConversationAssetBytes: number;
  /** Bytes of uploaded images kept across all conversations (the whole store, every instance of a cluster). */
  maxTotalAssetBytes: number;
  /** MCP servers declared at most, configuration file and mcp.add together. */
  maxMcpServers: number;
  /** Open WebSocket connections at most (new upgrades get HTTP 503). */
  maxConnections: number;
  /** Open WebSocket connections from one remote address at most. */
  maxConnectionsPerAddress: number;
  /** A connection that has not sent initialize this long after opening is closed. 0 disables. */
  initializeTimeoutMs: number;
  /** Frames of one connection handled at once; further frames wait (the socket is paused). */
  maxInFlightPerConnection: number;
  /** Most members in one JSON-RPC batch. */
  maxBatch: number;
  /** Deepest nesting of arrays/objects in one frame. */
  maxDepth: number;
  /** Largest reply to one frame, in bytes. */
  maxReplyBytes: number;
  /** Largest message content accepted by message.append, in UTF-8 bytes. */
  maxMessageBytes: number;
  /** Largest model request a generation may build from the conversation, in bytes of message text. */
  maxContextBytes: number;
  /** Conversations one connection may subscribe to at once. */
  maxSubscriptionsPerConnection: number;
  /** Generations running at once across the server. */
  maxGenerations: number;
  /** Default model (AGENTWIRE_MODEL / --model): bare, or as provider/model. */
  model?: string;
  /** Endpoint and key of the provider named "default" (config `llm`, OPENAI_BASE_URL / OPENAI_API_KEY). */
  openaiBaseUrl?: string;
  openaiApiKey?: string;
  /** Model providers by name (config `providers`); see src/llm/provider-registry.ts. */
  providers: ProvidersConfig;
  /** The provider a bare model name goes to (config `defaultProvider`); unset means "default". */
  defaultProvider?: string;
  /** A model stream silent for this long fails the generation. */
  llmIdleTimeoutMs: number;
  /** Default per-tool-call time limit. */
  toolTimeoutMs: number;
  /**
   * Environment variables tools may see besides the harmless defaults: names,
   * or prefixes ending in `*` (which never match credential-looking names).
   * See src/tools/tool-environment.ts.
   */
  toolEnvAllow: string[];
  /**
   * File tools and file attachments accept regular files with more than one
   * hard link (config `tools.files.allowHardLinks`); refused by default, as
   * another name of the file may be outside the workspace.
   */
  allowHardLinks: boolean;
  /** Shell commands offered as tools (config `tools.custom`). */
  customTools: CustomToolDefinition[];
  /** web_fetch / web_search (config `tools.web`); off unless enabled. */
  webTools: WebToolsConfig;
  /** MCP servers from the configuration file (config `mcpServers`); those added with mcp.add live in the data dir. */
  mcpServers: McpServersConfig;
  /** Settings new conversations start with (config `conversations.settings`), over the protocol's defaults. */
  conversationDefaults: Partial<ConversationSettings>;
  /**
   * System prompt template for conversations without their own (config
   * `conversations.systemPrompt`; placeholders in src/context/system-prompt.ts).
   * Default: the built-in template. "": no system prompt.
   */
  systemPrompt?: string;
  logLevel: LogLevel;
  /**
   * What the server tells every client (initialize, server.status) and logs
   * at start: configuration it skipped (an untrusted or unreadable file).
   * Filled by resolve-config.ts; not a setting.
   */
  notices: Notice[];
  /** text: one human line per entry; json: one JSON object per line ({time, level, msg, conversationId?, generationId?, err?}). */
  logFormat: LogFormat;
}

export const DEFAULT_PORT = 8765;

/** File descriptors kept free for the store, tool processes and model requests, whatever the connections do. */
export const FD_RESERVE = 512;

export function defaultConfig(overrides: Partial<ServerConfig> = {}): ServerConfig {
  return {
    host: "127.0.0.1",
    port: DEFAULT_PORT,
    dataDir: ".agentwire",
    ownerLeaseMs: 10_000,
    redisPrefix: "agentwire:",
    store: "lowdb",
    allowOrigins: [],
    maxPayloadBytes: 4 * 1024 * 1024,
    maxBufferedBytes: 64 * 1024 * 1024,
    eventLogSize: 4096,
    eventLogBytes: 4 * 1024 * 1024,
    replayBudgetBytes: 64 * 1024 * 1024,
    heartbeatMs: 30_000,
    idleUnloadMs: 10 * 60_000,
    maxLoadedConversations: 10_000,
    storeCacheBytes: 64 * 1024 * 1024,
    // 256 MiB is about 50 images at the 5 MiB per-image cap (hundreds of screenshots) per conversation;
    // 2 GiB bounds the disk all clients together can fill (907 MB went in 6.7 s without a bound).
    maxConversationAssetBytes: 256 * 1024 * 1024,
    maxTotalAssetBytes: 2 * 1024 * 1024 * 1024,
    // Well above common setups (a handful to a score of servers); 32 stdio servers hold about 100
    // pipes, far inside the descriptors FD_RESERVE keeps for everything but connections.
    maxMcpServers: 32,
    maxConnections: defaultMaxConnections(),
    maxConnectionsPerAddress: 1024,
    initializeTimeoutMs: 10_000,
    maxInFlightPerConnection: 64,
    maxBatch: 100,
    maxDepth: 64,
    maxReplyBytes: 16 * 1024 * 1024,
    maxMessageBytes: 1024 * 1024,
    maxContextBytes: 32 * 1024 * 1024,
    maxSubscriptionsPerConnection: 1000,
    maxGenerations: 1000,
    llmIdleTimeoutMs: 60_000,
    toolTimeoutMs: 120_000,
    toolEnvAllow: [],
    allowHardLinks: false,
    customTools: [],
    webTools: {},
    mcpServers: {},
    providers: {},
    conversationDefaults: {},
    systemPrompt: DEFAULT_SYSTEM_PROMPT_TEMPLATE,
    logLevel: "info",
    logFormat: "text",
    notices: [],
    ...overrides,
  };
}

/** 10,000, or fewer when the open-file limit would not leave FD_RESERVE descriptors for everything else. */
export function defaultMaxConnections(): number {
  const limit = openFileLimit();
  return limit === undefined ? 10_000 : Math.max(16, Math.min(10_000, limit - FD_RESERVE));
}

/** The soft limit on open files (Linux: /proc/self/limits); undefined when it cannot be read or is unlimited. */
export function openFileLimit(): number | undefined {
  try {
    const line = readFileSync("/proc/self/limits", "utf8")
      .split("\n")
      .find((l) => l.startsWith("Max open files"));
    const soft = line?.split(/\s{2,}/)[1];
    const n = Number(soft);
    return Number.isFinite(n) && n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h === "::1" || /^127(\.\d{1,3}){3}$/.test(h);
}
