import type { Redis } from "ioredis";
import type { Logger } from "../logging/logger.js";
import { ClusterKeys } from "./cluster-keys.js";

/**
 * Which instances are alive. Each instance keeps a key with its
 * announcement (id, address, start time, how many conversations it owns)
 * that expires unless its heartbeat refreshes it, so an instance that dies
 * drops out of the list within `ttlMs` without anyone cleaning up after it.
 * A set indexes the ids, so listing needs no SCAN of the keyspace; ids whose
 * key has expired are pruned from it when listing.
 */
export interface InstanceInfo {
  id: string;
  /** Where clients (or a load balancer) reach it, e.g. ws://10.0.0.5:8765. */
  address: string;
  startedAt: string;
  ownedCount: number;
  heartbeatAt: string;
}

export interface InstanceRegistryOptions {
  instanceId: string;
  address: string;
  /** Read at every heartbeat (OwnershipLeases.heldCount). */
  ownedCount: () => number;
  /** An instance is listed this long after its last heartbeat. */
  ttlMs?: number;
  /** Heartbeat period; a third of ttlMs by default, so one missed beat does not drop the instance. */
  heartbeatMs?: number;
  keys?: ClusterKeys;
  log: Logger;
}

const DEFAULT_TTL_MS = 15_000;

export class InstanceRegistry {
  private readonly keys: ClusterKeys;
  private readonly ttlMs: number;
  private readonly heartbeatMs: number;
  private readonly startedAt = new Date().toISOString();
  private timer: NodeJS.Timeout | null = null;
  private failing = false;
  private stopped = false;

  constructor(
    private readonly redis: Redis,
    private readonly options: InstanceRegistryOptions,
  ) {
    this.keys = options.keys ?? new ClusterKeys();
    this.ttlMs = options.ttlMs ?? DEFAULT_TTL_MS;
    this.heartbeatMs = options.heartbeatMs ?? Math.floor(this.ttlMs / 3);
    if (this.heartbeatMs >= this.ttlMs) throw new Error("heartbeatMs must be below ttlMs");
  }

  /** Announce now (a failure is thrown: Redis is checked at start), then on every heartbeat. */
  async start(): Promise<void> {
    if (this.timer || this.stopped) return;
    await this.announce();
    this.timer = setInterval(() => {
      this.announce().then(
        () => {
          if (!this.failing) return;
          this.failing = false;
          this.options.log.info("instance heartbeat works again");
        },
        (error: unknown) => {
          if (this.failing) return;
          this.failing = true;
          this.options.log.warn("instance heartbeat failed; retrying", error);
        },
      );
    }, this.heartbeatMs);
    this.timer.unref();
  }

  /** Live instances, by id. */
  async list(): Promise<InstanceInfo[]> {
    const ids = (await this.redis.smembers(this.keys.instanceIndex())).sort();
    if (ids.length === 0) return [];
    const values = await this.redis.mget(ids.map((id) => this.keys.instance(id)));
    const live: InstanceInfo[] = [];
    const gone: string[] = [];
    values.forEach((value, i) => {
      const info = value ? parseInfo(value) : undefined;
      if (info) live.push(info);
      else gone.push(ids[i]!);
    });
    // An instance pruned here just as it beats is added back by its next heartbeat.
    if (gone.length) await this.redis.srem(this.keys.instanceIndex(), ...gone).catch(() => {});
    return live;
  }

  /** Stop the heartbeat; with `withdraw` (the default, a clean shutdown) leave the list now rather than after the TTL. */
  async stop({ withdraw = true }: { withdraw?: boolean } = {}): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (!withdraw) return;
    const id = this.options.instanceId;
    await this.redis
      .multi()
      .del(this.keys.instance(id))
      .srem(this.keys.instanceIndex(), id)
      .exec()
      .catch((error: unknown) => this.options.log.warn("withdrawing the instance announcement failed; it expires by itself", error));
  }

  private async announce(): Promise<void> {
    const id = this.options.instanceId;
    const info: InstanceInfo = {
      id,
      address: this.options.address,
      startedAt: this.startedAt,
      ownedCount: this.options.ownedCount(),
      heartbeatAt: new Date().toISOString(),
    };
    const replies = await this.redis.multi().set(this.keys.instance(id), JSON.stringify(info), "PX", this.ttlMs).sadd(this.keys.instanceIndex(), id).exec();
    const failed = replies?.find(([error]) => error);
    if (failed) throw failed[0];
  }
}

function parseInfo(value: string): InstanceInfo | undefined {
  try {
    const info = JSON.parse(value) as InstanceInfo;
    return typeof info?.id === "string" ? info : undefined;
  } catch {
    return undefined;
  }
}
