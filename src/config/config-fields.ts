/**
 * Where each ServerConfig field lives in agentwire.json. One table, read
 * both ways: the merged file shape becomes a ServerConfig, and the
 * defaults become a layer so `agentwire config` can say "default".
 */
import { LimitsSection } from "../../protocol/config.js";
import type { ServerConfig } from "./server-config.js";

type Field = keyof ServerConfig;

/** Every limits.* key is the ServerConfig field of the same name (a test holds the two together). */
const LIMIT_FIELDS = Object.keys(LimitsSection.shape) as Field[];

export const CONFIG_FIELDS: readonly (readonly [path: string, field: Field])[] = [
  ["model", "model"],
  ["defaultProvider", "defaultProvider"],
  ["providers", "providers"],
  ["server.host", "host"],
  ["server.port", "port"],
  ["server.dataDir", "dataDir"],
  ["server.store", "store"],
  ["server.token", "token"],
  ["server.redis", "redis"],
  ["server.ownerLeaseMs", "ownerLeaseMs"],
  ["server.redisPrefix", "redisPrefix"],
  ["server.allowOrigins", "allowOrigins"],
  ["server.heartbeatMs", "heartbeatMs"],
  ["server.logLevel", "logLevel"],
  ["server.logFormat", "logFormat"],
  ...LIMIT_FIELDS.map((field) => [`limits.${field}`, field] as const),
  ["llm.baseUrl", "openaiBaseUrl"],
  ["llm.apiKey", "openaiApiKey"],
  ["llm.idleTimeoutMs", "llmIdleTimeoutMs"],
  ["tools.timeoutMs", "toolTimeoutMs"],
  ["tools.envAllow", "toolEnvAllow"],
  ["tools.files.allowHardLinks", "allowHardLinks"],
  ["tools.custom", "customTools"],
  ["tools.web", "webTools"],
  ["mcpServers", "mcpServers"],
  ["conversations.settings", "conversationDefaults"],
  ["conversations.systemPrompt", "systemPrompt"],
];
