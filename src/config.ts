import type { LogLevel } from "./logging/logger.js";

/** Everything the server needs to start; the CLI fills it from flags and environment. */
export interface ServerConfig {
  host: string;
  /** 0 = let the OS pick a free port. */
  port: number;
  dataDir: string;
  /** When set, every WebSocket upgrade must carry it. Required to bind beyond loopback. */
  token?: string;
  /** Browser origins allowed besides the server's own (e.g. http://localhost:5173). */
  allowOrigins: string[];
  /** Largest accepted frame; a larger one closes that socket with 1009. */
  maxPayloadBytes: number;
  /** A socket whose unsent backlog exceeds this is closed (1013); it can reconnect with afterSeq. */
  maxBufferedBytes: number;
  /** Recent events kept per conversation for replay on reconnect. */
  eventLogSize: number;
  /** Ping interval; a peer that misses a pong is terminated. 0 disables. */
  heartbeatMs: number;
  /** Unload a conversation from memory after this long without subscribers, generation or requests. 0 disables. */
  idleUnloadMs: number;
  /** Default model (AGENTWIRE_MODEL / --model). */
  model?: string;
  openaiBaseUrl?: string;
  openaiApiKey?: string;
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
  logLevel: LogLevel;
}

export const DEFAULT_PORT = 8765;

export function defaultConfig(overrides: Partial<ServerConfig> = {}): ServerConfig {
  return {
    host: "127.0.0.1",
    port: DEFAULT_PORT,
    dataDir: ".agentwire",
    allowOrigins: [],
    maxPayloadBytes: 16 * 1024 * 1024,
    maxBufferedBytes: 64 * 1024 * 1024,
    eventLogSize: 4096,
    heartbeatMs: 30_000,
    idleUnloadMs: 10 * 60_000,
    llmIdleTimeoutMs: 60_000,
    toolTimeoutMs: 120_000,
    toolEnvAllow: [],
    logLevel: "info",
    ...overrides,
  };
}

export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h === "::1" || /^127(\.\d{1,3}){3}$/.test(h);
}
