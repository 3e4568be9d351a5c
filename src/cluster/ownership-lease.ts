import { performance } from "node:perf_hooks";
import type { Redis } from "ioredis";
import { CONFIG_DEFAULTS } from "../../protocol/config-defaults.js";
import type { Logger } from "../logging/logger.js";
import { ClusterKeys } from "./cluster-keys.js";
import { LuaScript } from "./lua-script.js";

/**
 * Ownership of a conversation's live work (its generation, pending tool
 * calls, running tool processes): one instance at a time holds a lease in
 * Redis, a key whose value names the holder and which expires unless the
 * holder renews it. An instance killed with -9 stops renewing, and another
 * can take the conversation once the lease time has passed.
 *
 * A lease alone cannot stop a holder that paused (GC, SIGSTOP, a stalled
 * disk) and woke up after its lease was taken: it still believes it owns
 * the conversation. So every acquisition also raises the conversation's
 * fencing token (a counter that never goes down), and the holder hands its
 * token to whatever it writes to — the PostgreSQL store refuses a handle
 * whose token is below the row's fence, the event bus refuses a publish —
 * so the paused holder's late writes are refused rather than trusted.
 *
 * The holder also gives up on its own: when a renewal has not been
 * confirmed in time for the lease to outlast the next one, the lease is
 * reported lost (onLost) before Redis lets anyone else take it.
 */
export type LeaseLossReason =
  /** A renewal found the lease held by another instance (or under a newer token). */
  | "taken"
  /** Renewals could not be confirmed (Redis unreachable) and the lease would run out before the next try. */
  | "expired"
  /** A write under the lease's token was refused (the event bus or the store saw a higher token): see forfeit(). */
  | "fenced";

export interface Lease {
  readonly conversationId: string;
  /** Fencing token of this acquisition: hand it to the store and the bus. */
  readonly fence: number;
  /** False once released or lost. */
  readonly held: boolean;
  /** Give the conversation up (compare-and-delete: a lease that is no longer ours is left alone). */
  release(): Promise<void>;
}

export type AcquireOutcome =
  | { acquired: true; lease: Lease }
  | { acquired: false; owner: LeaseHolder };

export interface LeaseHolder {
  instanceId: string;
  fence: number;
  /** Time left on the holder's lease (it may still renew it). */
  expiresInMs: number;
}

export interface AcquireOptions {
  /** Called once if the lease is lost (not on release). */
  onLost: (reason: LeaseLossReason) => void;
  /**
   * The highest token the store has seen for this conversation: the new
   * token is above it even if Redis lost its counter (a restart without
   * persistence), so the store does not refuse the new owner.
   */
  minFence?: number;
}

export interface OwnershipLeaseOptions {
  instanceId: string;
  /** How long a lease lasts without renewal; also the longest a dead owner keeps a conversation. Default: server.ownerLeaseMs's. */
  leaseMs?: number;
  /**
   * How often leases are renewed; a quarter of leaseMs by default: one lost
   * renewal is survived, and a holder whose renewals stop gives the lease up
   * a quarter lease before it can run out in Redis (with a third, the last
   * tick before the expiry fell about 1 ms before it, so a tick firing late
   * gave the lease up only after another instance could have taken it).
   */
  renewEveryMs?: number;
  keys?: ClusterKeys;
  log: Logger;
}

const DEFAULT_LEASE_MS = CONFIG_DEFAULTS.server.ownerLeaseMs;

// KEYS: lease, fence. ARGV: instanceId, leaseMs, minFence. Returns {1, token} or {0, holder value, pttl}.
const ACQUIRE = new LuaScript(
  `
local current = redis.call('GET', KEYS[1])
if current then return {0, current, redis.call('PTTL', KEYS[1])} end
local token = redis.call('INCR', KEYS[2])
local floor = tonumber(ARGV[3])
if token <= floor then
  token = floor + 1
  redis.call('SET', KEYS[2], string.format('%d', token))
end
redis.call('SET', KEYS[1], ARGV[1] .. ' ' .. string.format('%d', token), 'PX', ARGV[2])
return {1, token}
`,
  2,
);

// KEYS: lease, fence. ARGV: our value, leaseMs, our token. 1: renewed; 2: had expired, nobody took it since, ours again; 0: lost.
const RENEW = new LuaScript(
  `
local current = redis.call('GET', KEYS[1])
if current == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if not current and redis.call('GET', KEYS[2]) == ARGV[3] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 2
end
return 0
`,
  2,
);

// KEYS: lease. ARGV: our value.
const RELEASE = new LuaScript(
  `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`,
  1,
);

class HeldLease implements Lease {
  held = true;
  /** performance.now() until which the lease is certainly ours (renewal send time + leaseMs). */
  validUntil: number;
  renewing = false;

  constructor(
    readonly conversationId: string,
    readonly fence: number,
    readonly value: string,
    acquiredAt: number,
    leaseMs: number,
    readonly onLost: (reason: LeaseLossReason) => void,
    readonly releaseLease: (lease: HeldLease) => Promise<void>,
  ) {
    this.validUntil = acquiredAt + leaseMs;
  }

  release(): Promise<void> {
    return this.releaseLease(this);
  }
}

export class OwnershipLeases {
  private readonly leases = new Map<string, HeldLease>();
  private readonly acquiring = new Map<string, Promise<AcquireOutcome>>();
  private readonly keys: ClusterKeys;
  private readonly leaseMs: number;
  private readonly renewEveryMs: number;
  private readonly log: Logger;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  private renewFailing = false;

  constructor(
    private readonly redis: Redis,
    private readonly options: OwnershipLeaseOptions,
  ) {
    this.keys = options.keys ?? new ClusterKeys();
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.renewEveryMs = options.renewEveryMs ?? Math.floor(this.leaseMs / 4);
    if (this.renewEveryMs * 2 > this.leaseMs) throw new Error("renewEveryMs must be at most half of leaseMs");
    this.log = options.log;
  }

  get instanceId(): string {
    return this.options.instanceId;
  }

  /** Conversations this instance holds. */
  heldIds(): string[] {
    return [...this.leases.keys()];
  }

  get heldCount(): number {
    return this.leases.size;
  }

  /** The lease this instance holds for a conversation, if any. */
  lease(conversationId: string): Lease | undefined {
    return this.leases.get(conversationId);
  }

  /**
   * Take the conversation if no one holds it. A conversation this instance
   * already holds answers its current lease (the first onLost stays the one
   * called).
   */
  acquire(conversationId: string, options: AcquireOptions): Promise<AcquireOutcome> {
    if (this.closed) return Promise.reject(new Error("the ownership leases are closed"));
    const held = this.leases.get(conversationId);
    if (held) return Promise.resolve({ acquired: true, lease: held });
    let pending = this.acquiring.get(conversationId);
    if (!pending) {
      pending = this.tryAcquire(conversationId, options).finally(() => this.acquiring.delete(conversationId));
      this.acquiring.set(conversationId, pending);
    }
    return pending;
  }

  /** Who holds the conversation now, if anyone. */
  async owner(conversationId: string): Promise<LeaseHolder | null> {
    const [value, pttl] = await this.redis.multi().get(this.keys.lease(conversationId)).pttl(this.keys.lease(conversationId)).exec().then(
      (replies) => (replies ?? []).map((r) => r[1]) as [string | null, number],
    );
    return value ? parseHolder(value, pttl) : null;
  }

  /**
   * The holder learnt from elsewhere (a publish refused by the fence) that
   * its lease is gone: report it lost now rather than at the next renewal.
   */
  forfeit(conversationId: string): void {
    const lease = this.leases.get(conversationId);
    if (lease) this.lose(lease, "fenced");
  }

  /**
   * Stop renewing. With `release` (the default, for a clean shutdown) every
   * lease is given up so others can take the conversations at once;
   * without, they run out in their own time as after a crash.
   */
  async close({ release = true }: { release?: boolean } = {}): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    const leases = [...this.leases.values()];
    this.leases.clear();
    for (const lease of leases) lease.held = false;
    if (release) await Promise.all(leases.map((lease) => this.deleteIfOurs(lease)));
  }

  private async tryAcquire(conversationId: string, options: AcquireOptions): Promise<AcquireOutcome> {
    const sentAt = performance.now();
    const reply = (await ACQUIRE.run(
      this.redis,
      [this.keys.lease(conversationId), this.keys.fence(conversationId)],
      [this.instanceId, this.leaseMs, Math.max(0, Math.floor(options.minFence ?? 0))],
    )) as [1, number] | [0, string, number];
    if (reply[0] === 0) return { acquired: false, owner: parseHolder(reply[1], reply[2]) };
    const fence = Number(reply[1]);
    const lease = new HeldLease(conversationId, fence, `${this.instanceId} ${fence}`, sentAt, this.leaseMs, options.onLost, (l) =>
      this.release(l),
    );
    if (this.closed) {
      // Closed while the acquisition was in flight: give it straight back.
      await this.deleteIfOurs(lease);
      lease.held = false;
      return { acquired: true, lease };
    }
    this.leases.set(conversationId, lease);
    this.startRenewing();
    return { acquired: true, lease };
  }

  private startRenewing(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.renewAll(), this.renewEveryMs);
    this.timer.unref();
  }

  private renewAll(): void {
    const now = performance.now();
    for (const lease of [...this.leases.values()]) {
      // Given up one renewal early: the next tick might come too late for the lease still to be ours.
      if (now + this.renewEveryMs >= lease.validUntil) {
        this.lose(lease, "expired");
        continue;
      }
      if (!lease.renewing) void this.renew(lease, now);
    }
    if (this.leases.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  private async renew(lease: HeldLease, sentAt: number): Promise<void> {
    lease.renewing = true;
    try {
      const result = await RENEW.run(
        this.redis,
        [this.keys.lease(lease.conversationId), this.keys.fence(lease.conversationId)],
        [lease.value, this.leaseMs, String(lease.fence)],
      );
      if (this.renewFailing) {
        this.renewFailing = false;
        this.log.info("lease renewals work again");
      }
      if (!lease.held) return;
      if (result === 0) this.lose(lease, "taken");
      else lease.validUntil = Math.max(lease.validUntil, sentAt + this.leaseMs);
    } catch (error) {
      // Redis away: keep trying each tick; the expiry check in renewAll gives the lease up in time.
      if (!this.renewFailing) {
        this.renewFailing = true;
        this.log.warn("renewing conversation leases failed; retrying", error);
      }
    } finally {
      lease.renewing = false;
    }
  }

  private lose(lease: HeldLease, reason: LeaseLossReason): void {
    if (!lease.held) return;
    lease.held = false;
    this.leases.delete(lease.conversationId);
    this.log.warn(`lost the lease of conversation ${lease.conversationId} (${reason})`);
    // Given up for want of confirmed renewals: a renewal still queued for Redis may set the key again when Redis
    // answers (the renew script takes back a lease nobody took meanwhile), and nobody would renew it: delete it
    // behind that renewal (same connection, so in order), or others wait a whole lease more to take the conversation.
    if (reason === "expired") void this.deleteIfOurs(lease);
    try {
      lease.onLost(reason);
    } catch (error) {
      this.log.error("a lost-lease callback failed", error);
    }
  }

  private async release(lease: HeldLease): Promise<void> {
    if (!lease.held) return;
    lease.held = false;
    if (this.leases.get(lease.conversationId) === lease) this.leases.delete(lease.conversationId);
    await this.deleteIfOurs(lease);
  }

  private async deleteIfOurs(lease: HeldLease): Promise<void> {
    try {
      await RELEASE.run(this.redis, [this.keys.lease(lease.conversationId)], [lease.value]);
    } catch (error) {
      // It runs out by itself within the lease time.
      this.log.warn(`releasing the lease of conversation ${lease.conversationId} failed; it will expire`, error);
    }
  }
}

/** "<instanceId> <fence>" as the acquire script writes it. */
function parseHolder(value: string, pttl: number): LeaseHolder {
  const space = value.lastIndexOf(" ");
  return { instanceId: value.slice(0, space), fence: Number(value.slice(space + 1)), expiresInMs: Math.max(0, Number(pttl)) };
}
