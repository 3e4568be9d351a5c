import type { Redis } from "ioredis";
import type { Logger } from "../logging/logger.js";
import type { LoggedEvent } from "../sessions/event-log.js";
import { BusFollower } from "./bus-follower.js";
import { ClusterKeys } from "./cluster-keys.js";
import type { BusEvent, BusListener, BusSubscription, EventBus, PublishOptions, PublishOutcome, ReplayOutcome } from "./event-bus.js";
import { FencedError } from "../store/fenced-error.js";
import { LuaScript } from "./lua-script.js";

/**
 * The EventBus over Redis: each event goes, in one atomic script, into a
 * bounded per-conversation stream (for replay) and onto a per-conversation
 * pub/sub channel (for live delivery).
 *
 * Why streams *and* pub/sub rather than streams read with XREAD BLOCK: an
 * instance's set of watched conversations changes all the time, and a
 * blocked XREAD cannot take a new key without being interrupted (CLIENT
 * UNBLOCK from a second connection, racing the next XREAD), while SUBSCRIBE
 * adds a channel on a live connection at once; each blocked XREAD also
 * resends every watched key and last id, which grows with the subscriptions,
 * where a published message costs Redis one write per listening connection.
 * Why not pub/sub alone: it forgets everything, so `afterSeq` replay and
 * repair after a dropped connection need the stream. Because the script
 * appends to the stream and publishes in one step, both see the events in
 * the same order, and a subscriber can merge them (BusFollower): subscribe
 * first, then read the stream, then deliver what arrived live beyond it.
 *
 * Bounds: the stream keeps at most `maxCount` events and `maxBytes` of
 * frames (trimmed oldest first, in the script, like EventLog), and both keys
 * expire `retentionMs` after the conversation's last event, so Redis memory
 * follows active conversations, not every conversation ever run.
 *
 * Connections: `commands` for scripts (shared with other modules if wanted),
 * `subscriber` for pub/sub only (a subscribed connection cannot run other
 * commands). Both belong to the caller, who closes them after `close()`.
 */
export interface ClusterBusOptions {
  keys?: ClusterKeys;
  /** Events kept per conversation for replay. */
  maxCount?: number;
  /** Bytes of frames kept per conversation for replay. */
  maxBytes?: number;
  /** A conversation's stream is dropped this long after its last event. */
  retentionMs?: number;
  /**
   * Publishes sent and not yet answered, at most. While Redis is away,
   * ioredis queues commands until it reconnects; beyond this many, a
   * publish fails at once instead of queueing the frame in memory, and the
   * broken prevSeq link makes watchers resync.
   */
  maxInFlight?: number;
  log: Logger;
}

const DEFAULTS = { maxCount: 4096, maxBytes: 4 * 1024 * 1024, retentionMs: 24 * 60 * 60 * 1000, maxInFlight: 10_000 };

/** A publish refused because too many are waiting for Redis (see ClusterBusOptions.maxInFlight). */
export class BusOverloadedError extends Error {
  override readonly name = "BusOverloadedError";
}

// KEYS: stream, meta, fence, generation mark. ARGV: seq, prevSeq, method, frame, maxCount, maxBytes, retentionMs,
// fence ('' = none), channel, id of the generation the event ends ('' = none).
// Seqs travel as strings (Lua would print a large number as 1e+15).
const PUBLISH = new LuaScript(
  `
if ARGV[8] ~= '' then
  local current = redis.call('GET', KEYS[3]) or '0'
  if tonumber(current) > tonumber(ARGV[8]) then return {'fenced', current} end
end
local last = redis.call('HGET', KEYS[2], 'last') or '0'
if tonumber(ARGV[1]) <= tonumber(last) then return {'duplicate', last} end
local frame = ARGV[4]
redis.call('XADD', KEYS[1], ARGV[1] .. '-0', 'p', ARGV[2], 'm', ARGV[3], 'f', frame)
redis.call('HSET', KEYS[2], 'last', ARGV[1])
local count = redis.call('XLEN', KEYS[1])
local bytes
if count == 1 then
  -- A fresh stream (first event, or the stream expired or was deleted apart from its meta): count from scratch.
  bytes = #frame
  redis.call('HSET', KEYS[2], 'bytes', bytes)
else
  bytes = redis.call('HINCRBY', KEYS[2], 'bytes', #frame)
end
local maxCount = tonumber(ARGV[5])
local maxBytes = tonumber(ARGV[6])
if count > maxCount or bytes > maxBytes then
  local cut = nil
  local from = '-'
  while count > 0 and (count > maxCount or bytes > maxBytes) do
    local batch = redis.call('XRANGE', KEYS[1], from, '+', 'COUNT', 32)
    if #batch == 0 then break end
    for _, entry in ipairs(batch) do
      if not (count > maxCount or bytes > maxBytes) then break end
      cut = entry[1]
      count = count - 1
      bytes = bytes - #entry[2][6]
    end
    from = '(' .. cut
  end
  -- MINID drops ids below the threshold: the cut entry is <seq>-0, so <seq>-1 drops it and everything older.
  if cut then redis.call('XTRIM', KEYS[1], 'MINID', string.sub(cut, 1, -3) .. '-1') end
  redis.call('HSET', KEYS[2], 'bytes', bytes)
end
redis.call('PEXPIRE', KEYS[1], ARGV[7])
redis.call('PEXPIRE', KEYS[2], ARGV[7])
redis.call('PUBLISH', ARGV[9], ARGV[1] .. ' ' .. ARGV[2] .. ' ' .. ARGV[3] .. ' ' .. frame)
-- The generation's ending is on the bus now: its running mark goes in the same step (see generation-markers.ts).
if ARGV[10] ~= '' then
  local mark = redis.call('GET', KEYS[4])
  if mark and string.sub(mark, -(#ARGV[10] + 1)) == ' ' .. ARGV[10] then redis.call('DEL', KEYS[4]) end
end
return {'published', ARGV[1]}
`,
  4,
);

// KEYS: stream, meta. ARGV: afterSeq. Returns {latestSeq} or {latestSeq, entries}.
const REPLAY = new LuaScript(
  `
local last = redis.call('HGET', KEYS[2], 'last') or '0'
if tonumber(ARGV[1]) >= tonumber(last) then return {last} end
return {last, redis.call('XRANGE', KEYS[1], '(' .. ARGV[1] .. '-0', '+')}
`,
  2,
);

type StreamEntry = [id: string, fields: string[]];

export class ClusterBus implements EventBus {
  private readonly keys: ClusterKeys;
  private readonly limits: typeof DEFAULTS;
  private readonly log: Logger;
  /** Local subscriptions by conversation; a conversation's channel is subscribed while it has any. */
  private readonly followers = new Map<string, Set<BusFollower>>();
  private readonly byChannel = new Map<string, string>();
  private closed = false;
  private inFlight = 0;
  private readonly detach: () => void;

  constructor(
    private readonly commands: Redis,
    private readonly subscriber: Redis,
    options: ClusterBusOptions,
  ) {
    this.keys = options.keys ?? new ClusterKeys();
    this.log = options.log;
    this.limits = {
      maxCount: options.maxCount ?? DEFAULTS.maxCount,
      maxBytes: options.maxBytes ?? DEFAULTS.maxBytes,
      retentionMs: options.retentionMs ?? DEFAULTS.retentionMs,
      maxInFlight: options.maxInFlight ?? DEFAULTS.maxInFlight,
    };
    // Resubscription is ours, not ioredis's: each follower must catch up *after* its channel is subscribed again.
    subscriber.options.autoResubscribe = false;
    const onMessage = (channel: string, message: string) => this.onMessage(channel, message);
    let wasReady = subscriber.status === "ready";
    const onReady = () => {
      if (wasReady) void this.resubscribeAll();
      wasReady = true;
    };
    subscriber.on("message", onMessage);
    subscriber.on("ready", onReady);
    this.detach = () => {
      subscriber.off("message", onMessage);
      subscriber.off("ready", onReady);
    };
  }

  async publish(conversationId: string, event: BusEvent, options: PublishOptions = {}): Promise<PublishOutcome> {
    if (this.inFlight >= this.limits.maxInFlight) {
      throw new BusOverloadedError(`${this.inFlight} event publishes are waiting for Redis; event ${event.seq} of conversation ${conversationId} is not sent`);
    }
    this.inFlight++;
    let result: [string, string];
    try {
      result = await this.send(conversationId, event, options);
    } finally {
      this.inFlight--;
    }
    if (result[0] === "fenced") throw new FencedError(conversationId, options.fence!, Number(result[1]));
    return result[0] === "duplicate" ? "duplicate" : "published";
  }

  private async send(conversationId: string, event: BusEvent, options: PublishOptions): Promise<[string, string]> {
    return (await PUBLISH.run(
      this.commands,
      [this.keys.events(conversationId), this.keys.eventsMeta(conversationId), this.keys.fence(conversationId), this.keys.generationMark(conversationId)],
      [
        String(event.seq),
        String(event.prevSeq),
        event.method,
        event.frame,
        this.limits.maxCount,
        this.limits.maxBytes,
        this.limits.retentionMs,
        options.fence === undefined ? "" : String(options.fence),
        this.keys.eventsChannel(conversationId),
        event.endsGeneration ?? "",
      ],
    )) as [string, string];
  }

  async replay(conversationId: string, afterSeq: number): Promise<ReplayOutcome> {
    const [last, entries] = (await REPLAY.run(
      this.commands,
      [this.keys.events(conversationId), this.keys.eventsMeta(conversationId)],
      [String(Math.max(0, Math.floor(afterSeq)))],
    )) as [string, StreamEntry[]?];
    const latestSeq = Number(last);
    if (!entries) return { resync: false, events: [], latestSeq };
    // Complete only when the first event held follows directly on what the caller has.
    const first = entries[0];
    if (!first || Number(first[1][1]) > afterSeq) return { resync: true, latestSeq };
    const events: LoggedEvent[] = entries.map(([id, fields]) => ({ seq: Number(id.slice(0, -2)), method: fields[3]!, frame: fields[5]! }));
    return { resync: false, events, latestSeq };
  }

  subscribe(conversationId: string, afterSeq: number | undefined, listener: BusListener): BusSubscription {
    if (this.closed) throw new Error("the event bus is closed");
    const follower = new BusFollower(
      afterSeq,
      listener,
      (from) => this.replay(conversationId, from),
      (error, during) =>
        during === "replay"
          ? this.log.warn(`reading the events of conversation ${conversationId} failed; retrying`, error)
          : this.log.error(`a listener of conversation ${conversationId}'s events failed`, error),
    );
    let set = this.followers.get(conversationId);
    if (!set) {
      set = new Set();
      this.followers.set(conversationId, set);
      const channel = this.keys.eventsChannel(conversationId);
      this.byChannel.set(channel, conversationId);
      set.add(follower);
      this.subscribeChannel(conversationId, channel);
    } else {
      set.add(follower);
      // The channel is subscribed, or its subscription is under way and will resume every follower when confirmed.
      if (!this.pending.has(conversationId)) follower.resume();
    }
    return {
      ready: follower.ready,
      dispose: () => this.unfollow(conversationId, follower),
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.detach();
    const channels = [...this.byChannel.keys()];
    for (const set of this.followers.values()) for (const follower of set) follower.close();
    this.followers.clear();
    this.byChannel.clear();
    if (channels.length && this.subscriber.status === "ready") await this.subscriber.unsubscribe(...channels).catch(() => {});
  }

  /** Conversations whose SUBSCRIBE has been sent and not yet confirmed. */
  private readonly pending = new Set<string>();

  private subscribeChannel(conversationId: string, channel: string): void {
    this.pending.add(conversationId);
    this.subscriber.subscribe(channel).then(
      () => {
        this.pending.delete(conversationId);
        for (const follower of this.followers.get(conversationId) ?? []) follower.resume();
      },
      (error: unknown) => {
        // Redis is away; the resubscription on reconnect (resubscribeAll) picks this channel up.
        this.pending.delete(conversationId);
        this.log.warn(`subscribing to the events of conversation ${conversationId} failed; retrying on reconnect`, error);
      },
    );
  }

  private async resubscribeAll(): Promise<void> {
    if (this.closed) return;
    for (const [channel, conversationId] of this.byChannel) {
      if (!this.pending.has(conversationId)) this.subscribeChannel(conversationId, channel);
    }
  }

  private unfollow(conversationId: string, follower: BusFollower): void {
    follower.close();
    const set = this.followers.get(conversationId);
    if (!set?.delete(follower) || set.size > 0) return;
    this.followers.delete(conversationId);
    const channel = this.keys.eventsChannel(conversationId);
    this.byChannel.delete(channel);
    if (this.subscriber.status === "ready") {
      this.subscriber.unsubscribe(channel).catch((error: unknown) => this.log.warn(`unsubscribing from ${channel} failed`, error));
    }
  }

  private onMessage(channel: string, message: string): void {
    const conversationId = this.byChannel.get(channel);
    if (conversationId === undefined) return; // a message in flight when we unsubscribed
    const event = parseLiveMessage(message);
    if (!event) {
      this.log.warn(`ignoring a malformed event on ${channel}`);
      return;
    }
    for (const follower of this.followers.get(conversationId) ?? []) follower.live(event);
  }
}

/** "<seq> <prevSeq> <method> <frame>", as the publish script writes it. */
function parseLiveMessage(message: string): BusEvent | undefined {
  const a = message.indexOf(" ");
  const b = message.indexOf(" ", a + 1);
  const c = message.indexOf(" ", b + 1);
  if (a < 1 || b < 0 || c < 0) return undefined;
  const seq = Number(message.slice(0, a));
  const prevSeq = Number(message.slice(a + 1, b));
  if (!Number.isSafeInteger(seq) || !Number.isSafeInteger(prevSeq)) return undefined;
  return { seq, prevSeq, method: message.slice(b + 1, c), frame: message.slice(c + 1) };
}
