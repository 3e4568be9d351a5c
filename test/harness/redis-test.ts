import { randomBytes } from "node:crypto";
import type { Redis } from "ioredis";
import { afterAll } from "vitest";
import { ClusterKeys } from "../../src/cluster/cluster-keys.js";
import { connectRedis } from "../../src/cluster/redis-client.js";
import { createLogger, type Logger } from "../../src/logging/logger.js";

/**
 * Real Redis for the cluster tests: `AGENTWIRE_TEST_REDIS` or
 * redis://127.0.0.1:6379. Each test file works under its own random key
 * prefix and deletes its keys at the end, so files can run side by side on
 * one Redis. Without a reachable Redis the tests are skipped with a message
 * saying how to run them.
 */
export const REDIS_URL = process.env.AGENTWIRE_TEST_REDIS ?? "redis://127.0.0.1:6379";

const log: Logger = createLogger(process.env.AGENTWIRE_TEST_LOG === "1" ? "debug" : "silent");

async function probe(): Promise<boolean> {
  try {
    const client = await connectRedis(REDIS_URL, { name: "probe", log, options: { connectTimeout: 1000, retryStrategy: () => null } });
    await client.quit();
    return true;
  } catch {
    return false;
  }
}

export const redisAvailable = await probe();
if (!redisAvailable) {
  console.warn(
    `Redis is not reachable at ${REDIS_URL}: the tests that need Redis are skipped. Start one (redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no) or set AGENTWIRE_TEST_REDIS.`,
  );
}

export interface RedisTestContext {
  keys: ClusterKeys;
  log: Logger;
  /** A new connection, closed at the end of the file. */
  connect(name: string): Promise<Redis>;
}

/** A key prefix for this file and a connection factory; every connection is closed and every key under the prefix deleted afterwards. */
export function useRedis(): RedisTestContext {
  const prefix = `agentwire-test:${randomBytes(6).toString("hex")}:`;
  const connections: Redis[] = [];
  afterAll(async () => {
    if (!redisAvailable) return;
    const admin = await connectRedis(REDIS_URL, { name: "cleanup", log });
    let cursor = "0";
    do {
      const [next, found] = await admin.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
      if (found.length) await admin.del(...found);
      cursor = next;
    } while (cursor !== "0");
    await admin.quit();
    for (const c of connections) c.disconnect();
  });
  return {
    keys: new ClusterKeys(prefix),
    log,
    async connect(name) {
      const client = await connectRedis(REDIS_URL, { name, log });
      connections.push(client);
      return client;
    },
  };
}
