import { readFileSync } from "node:fs";
import type { AgentwireConfig } from "../../protocol/config.js";
import { CONFIG_DEFAULTS } from "../../protocol/config-defaults.js";
import type { Notice } from "../../protocol/notices.js";
import { defaultDataDir } from "./user-dirs.js";

/**
 * Everything the server needs to start: agentwire.json's schema parsed
 * (every default applied; resolve-config.ts merges the files, environment
 * and flags first), and what resolving it has to tell clients. Each part
 * of the server receives its own section (`limits`, `tools`, `server`…).
 */
export interface ServerConfig extends AgentwireConfig {
  /**
   * What the server tells every client (initialize, server.status) and logs
   * at start: configuration it skipped (an untrusted or unreadable file).
   * Filled by resolve-config.ts; not a setting.
   */
  notices: Notice[];
}

/** File descriptors kept free for the store, tool processes and model requests, whatever the connections do. */
export const FD_RESERVE = 512;

/**
 * Every key at its default. One default depends on the machine: the
 * connection cap is lowered to leave FD_RESERVE descriptors under the
 * open-file limit (the schema's `limits.maxConnections` default is the cap
 * when the limit is high enough). One depends on the user: the data dir,
 * $XDG_DATA_HOME/agentwire (read from `env`).
 */
export function defaultConfig(env: NodeJS.ProcessEnv = process.env, home?: string): ServerConfig {
  const parsed = structuredClone(CONFIG_DEFAULTS) as ServerConfig;
  parsed.limits.maxConnections = withinOpenFileLimit(parsed.limits.maxConnections);
  return { ...parsed, server: { ...parsed.server, dataDir: defaultDataDir(env, home) }, notices: [] };
}

/** `connections`, or fewer when the open-file limit would not leave FD_RESERVE descriptors for everything else. */
function withinOpenFileLimit(connections: number): number {
  const limit = openFileLimit();
  return limit === undefined ? connections : Math.max(16, Math.min(connections, limit - FD_RESERVE));
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
