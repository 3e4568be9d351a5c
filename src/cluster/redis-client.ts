import type { Redis, RedisOptions } from "ioredis";
import { importCommonJs } from "../lazy-commonjs.js";
import type { Logger } from "../logging/logger.js";

/**
 * Opening a Redis connection for the cluster modules.
 *
 * ioredis is imported here and only here, lazily: the embedded default (one
 * process, lowdb) never reaches this file, so it never loads the client.
 * Everything else in src/cluster/ takes a connection and imports ioredis
 * for types only.
 */
type IoRedis = typeof import("ioredis");

let loading: Promise<IoRedis["Redis"]> | undefined;

function redisClass(): Promise<IoRedis["Redis"]> {
  loading ??= importCommonJs(import("ioredis")).then((ioredis) => ioredis.Redis);
  return loading;
}

/** Longest wait between reconnection attempts: Redis coming back is noticed within this. */
const MAX_RECONNECT_DELAY_MS = 2000;

export interface RedisConnectOptions {
  /** Shown in the log and as CLIENT SETNAME, so `CLIENT LIST` tells the connections apart. */
  name: string;
  log: Logger;
  /** Extra ioredis options (tests shorten timeouts). */
  options?: RedisOptions;
}

/**
 * A connection that survives Redis going away: it reconnects forever with a
 * capped backoff, and its errors go to the log instead of crashing the
 * process (an `error` event with no listener is printed by ioredis and, for
 * an EventEmitter, would be thrown). One line when it breaks, one when it is
 * back, not one per failed attempt.
 */
export async function connectRedis(url: string, { name, log, options = {} }: RedisConnectOptions): Promise<Redis> {
  const RedisClient = await redisClass();
  const client = new RedisClient(url, {
    connectionName: name,
    retryStrategy: (attempt) => Math.min(50 * 2 ** Math.min(attempt, 10), MAX_RECONNECT_DELAY_MS),
    lazyConnect: true,
    ...options,
  });
  watchConnection(client, name, log);
  // The first connection is awaited so a wrong URL or a stopped Redis is reported at start (and nothing is left
  // retrying in the background); after that it reconnects by itself.
  try {
    await client.connect();
  } catch (error) {
    client.disconnect();
    throw new Error(`cannot connect to Redis at ${redactUrl(url)}: ${(error as Error).message}`);
  }
  return client;
}

/** The URL without its password, for messages. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(unparsable URL)";
  }
}

/** Log a connection's outages (once each); every connection the cluster modules open gets this. */
export function watchConnection(client: Redis, name: string, log: Logger): void {
  let broken = false;
  client.on("error", (error: Error) => {
    if (broken) return;
    broken = true;
    log.warn(`redis connection ${name}: ${error.message}; reconnecting`);
  });
  client.on("ready", () => {
    if (!broken) return;
    broken = false;
    log.info(`redis connection ${name} is back`);
  });
}
