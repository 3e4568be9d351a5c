/**
 * The start-up failures a user can act on, listed once for every command
 * that starts a server (`serve`, and `chat` / `conversations` when they embed
 * one): a configuration the server refuses, a data dir another server holds,
 * a store that cannot be opened, a tool configuration that cannot be used,
 * an address that cannot be listened on. Each is told in one line; anything
 * else is a fault and keeps its stack trace. Loaded with the server (lazily),
 * like the modules whose errors it names.
 */
import { ConfigError } from "./server.js";
import { DataDirLockedError } from "./store/conversation-store.js";
import { StoreUnavailableError } from "./store/store-unavailable-error.js";
import { ToolConfigError } from "./tools/tool-config-error.js";

export interface StartFailure {
  kind: "config" | "data-dir-locked" | "store" | "tools" | "address";
  /** The one line to show. */
  message: string;
  /** For an address failure: EADDRINUSE, EACCES or EADDRNOTAVAIL. */
  code?: string;
}

const ADDRESS_CODES = new Set(["EADDRINUSE", "EACCES", "EADDRNOTAVAIL"]);

/** What startServer's failure was, when it is one of the known ones; undefined for a fault. */
export function knownStartFailure(error: unknown): StartFailure | undefined {
  if (!(error instanceof Error)) return undefined;
  const { message } = error;
  if (error instanceof ConfigError) return { kind: "config", message };
  if (error instanceof DataDirLockedError) return { kind: "data-dir-locked", message };
  if (error instanceof StoreUnavailableError) return { kind: "store", message };
  if (error instanceof ToolConfigError) return { kind: "tools", message };
  const code = (error as NodeJS.ErrnoException).code;
  if (code !== undefined && ADDRESS_CODES.has(code)) return { kind: "address", message, code };
  return undefined;
}
