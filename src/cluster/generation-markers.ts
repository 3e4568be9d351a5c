import type { Redis } from "ioredis";
import type { Logger } from "../logging/logger.js";
import type { ClusterKeys } from "./cluster-keys.js";
import { LuaScript } from "./lua-script.js";

/**
 * Which generations run in the cluster, and on which instance: a mark per
 * conversation ("<nodeId> <generationId>", in the conversation's own slot),
 * set when a generation starts and deleted by the same publish script that
 * puts the generation's ending (generation_complete final, interrupted,
 * error) on the bus — fenced like every publish. So a mark is there exactly
 * while no ending of its generation is on the bus, whatever happened to the
 * owner (killed; or fenced out after losing its lease, its own ending
 * refused), and the instance that takes such a conversation over ends that
 * generation for the clients — once: had the former owner's ending got
 * through, the mark would be gone.
 *
 * An index hash lists the marked conversations for the failover sweep; it
 * is cleaned up after each ending and may hold stale entries, which the
 * sweep prunes. Two commands per generation, none per token.
 */
export interface CutOffGeneration {
  nodeId: string;
  generationId: string;
}

// KEYS: hash. ARGV: field, value. Removes the field only if it still holds that value.
const CLEAR_IF = new LuaScript(
  `
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then return redis.call('HDEL', KEYS[1], ARGV[1]) end
return 0
`,
  1,
);

// KEYS: hash. ARGV: field, generationId. Removes the field only if it still names that generation (of whichever node).
const CLEAR_GENERATION = new LuaScript(
  `
local value = redis.call('HGET', KEYS[1], ARGV[1])
if value and string.sub(value, -(#ARGV[2] + 1)) == ' ' .. ARGV[2] then return redis.call('HDEL', KEYS[1], ARGV[1]) end
return 0
`,
  1,
);

// KEYS: mark. ARGV: value. Deletes the mark only if it still holds that value.
const DELETE_IF = new LuaScript(
  `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`,
  1,
);

function parseMark(value: string): CutOffGeneration {
  const space = value.lastIndexOf(" ");
  return { nodeId: value.slice(0, space), generationId: value.slice(space + 1) };
}

export class GenerationMarkers {
  constructor(
    private readonly redis: Redis,
    private readonly keys: ClusterKeys,
    private readonly nodeId: string,
    private readonly log: Logger,
  ) {}

  started(conversationId: string, generationId: string): void {
    const value = `${this.nodeId} ${generationId}`;
    const failed = (error: unknown) =>
      this.log.warn(`could not mark the generation of conversation ${conversationId} as running; a failover would not end it`, error);
    // The mark first: the index only helps the sweep find it.
    this.redis.set(this.keys.generationMark(conversationId), value).catch(failed);
    this.redis.hset(this.keys.generating(), conversationId, value).catch(failed);
  }

  /** The generation's ending is on the bus (its mark went with it): drop its index entry. */
  ended(conversationId: string, generationId: string): void {
    CLEAR_GENERATION.run(this.redis, [this.keys.generating()], [conversationId, generationId]).catch((error: unknown) => {
      this.log.warn(`could not clear the index entry of conversation ${conversationId}'s generation; the sweep prunes it`, error);
    });
  }

  /** The generation still marked as running in this conversation (its ending is not on the bus), if any. */
  async left(conversationId: string): Promise<CutOffGeneration | null> {
    const value = await this.redis.get(this.keys.generationMark(conversationId));
    return value ? parseMark(value) : null;
  }

  /** Remove a mark whose generation is known to have ended (its ending is stored), unless another generation marked the conversation since. */
  async clear(conversationId: string, mark: CutOffGeneration): Promise<void> {
    await DELETE_IF.run(this.redis, [this.keys.generationMark(conversationId)], [`${mark.nodeId} ${mark.generationId}`]);
    await CLEAR_GENERATION.run(this.redis, [this.keys.generating()], [conversationId, mark.generationId]);
  }

  /** Remove the conversation's mark, whoever set it (the conversation is gone, or its ending is known otherwise). */
  async drop(conversationId: string): Promise<void> {
    await this.redis.del(this.keys.generationMark(conversationId));
    await this.redis.hdel(this.keys.generating(), conversationId);
  }

  /**
   * Conversations whose generation is marked as running, on any instance.
   * Index entries whose mark is gone (the ending reached the bus but the
   * index was not cleaned, e.g. Redis went away in between) are pruned here.
   */
  async marked(): Promise<string[]> {
    const index = await this.redis.hgetall(this.keys.generating());
    const ids = Object.keys(index);
    if (ids.length === 0) return [];
    // One GET per key (not MGET): each mark lives in its own conversation's slot.
    const replies = (await this.redis.pipeline(ids.map((id) => ["get", this.keys.generationMark(id)])).exec()) ?? [];
    const out: string[] = [];
    for (const [i, id] of ids.entries()) {
      const [error, mark] = replies[i] ?? [new Error("no reply"), null];
      if (error) throw error;
      if (mark) out.push(id);
      else await CLEAR_IF.run(this.redis, [this.keys.generating()], [id, index[id]!]);
    }
    return out;
  }
}
