import { createHash } from "node:crypto";
import type { Redis } from "ioredis";

/**
 * A Lua script run by SHA (EVALSHA), sent in full only when Redis does not
 * know it yet (NOSCRIPT: first use, or after a restart or SCRIPT FLUSH).
 * Scripts are how the cluster modules make read-compare-write steps atomic
 * (a lease renewed only if still ours, an event stored only if the sender is
 * not fenced out).
 */
export class LuaScript {
  private readonly sha: string;

  constructor(
    private readonly source: string,
    private readonly keyCount: number,
  ) {
    this.sha = createHash("sha1").update(source).digest("hex");
  }

  async run(redis: Redis, keys: string[], args: (string | number)[]): Promise<unknown> {
    if (keys.length !== this.keyCount) throw new Error(`script expects ${this.keyCount} keys, got ${keys.length}`);
    try {
      return await redis.evalsha(this.sha, this.keyCount, ...keys, ...args);
    } catch (error) {
      if (!String((error as Error).message).startsWith("NOSCRIPT")) throw error;
      return redis.eval(this.source, this.keyCount, ...keys, ...args);
    }
  }
}
