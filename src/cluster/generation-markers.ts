import type { Redis } from "ioredis";
import type { Logger } from "../logging/logger.js";
import type { ClusterKeys } from "./cluster-keys.js";
import { LuaScript } from "./lua-script.js";

/**
 * Which generations run in the cluster, and on which instance: one hash
 * field per conversation, set when a generation starts and removed when it
 * ends. When an owner dies its fields stay; the instance that takes such a
 * conversation over knows a generation was cut off, and ends it for the
 * clients with an `error` notification. Two commands per generation, none
 * per token.
 */
export interface CutOffGeneration {
  nodeId: string;
  generationId: string;
}

// KEYS: hash. ARGV: field, value. Removes the field only if it still names this generation.
const CLEAR_IF = new LuaScript(
  `
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then return redis.call('HDEL', KEYS[1], ARGV[1]) end
return 0
`,
  1,
);

export class GenerationMarkers {
  constructor(
    private readonly redis: Redis,
    private readonly keys: ClusterKeys,
    private readonly nodeId: string,
    private readonly log: Logger,
  ) {}

  started(conversationId: string, generationId: string): void {
    this.redis.hset(this.keys.generating(), conversationId, `${this.nodeId} ${generationId}`).catch((error: unknown) => {
      this.log.warn(`could not mark the generation of conversation ${conversationId} as running; a failover would not end it`, error);
    });
  }

  ended(conversationId: string, generationId: string): void {
    CLEAR_IF.run(this.redis, [this.keys.generating()], [conversationId, `${this.nodeId} ${generationId}`]).catch((error: unknown) => {
      this.log.warn(`could not clear the running mark of conversation ${conversationId}`, error);
    });
  }

  /** The generation another instance was running in this conversation, if it is still marked. */
  async left(conversationId: string): Promise<CutOffGeneration | null> {
    const value = await this.redis.hget(this.keys.generating(), conversationId);
    if (!value) return null;
    const space = value.lastIndexOf(" ");
    return { nodeId: value.slice(0, space), generationId: value.slice(space + 1) };
  }

  clear(conversationId: string, marker: CutOffGeneration): Promise<unknown> {
    return CLEAR_IF.run(this.redis, [this.keys.generating()], [conversationId, `${marker.nodeId} ${marker.generationId}`]);
  }

  /** Remove the conversation's mark whoever set it (the conversation is gone). */
  async drop(conversationId: string): Promise<void> {
    await this.redis.hdel(this.keys.generating(), conversationId);
  }

  /** Conversations marked as generating, on any instance. */
  marked(): Promise<string[]> {
    return this.redis.hkeys(this.keys.generating());
  }
}
