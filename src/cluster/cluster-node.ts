import { randomBytes } from "node:crypto";
import type { Redis } from "ioredis";
import type { Conversation, ConversationState } from "../../protocol/index.js";
import { ErrorCodes, ErrorMeanings } from "../../protocol/index.js";
import type { Logger } from "../logging/logger.js";
import { RpcError } from "../rpc/rpc-error.js";
import type { Connection } from "../sessions/connection.js";
import type { ConversationHub } from "../sessions/conversation-hub.js";
import type { ConversationRuntime } from "../sessions/conversation-runtime.js";
import type { HubCluster } from "../sessions/hub-cluster.js";
import type { ConversationHandle, ConversationStore } from "../store/conversation-store.js";
import { FencedError } from "../store/fenced-error.js";
import { BusOutlet } from "./bus-outlet.js";
import { BusWatches } from "./bus-watches.js";
import { ClusterBus } from "./cluster-bus.js";
import { ClusterKeys } from "./cluster-keys.js";
import type { BusEvent } from "./event-bus.js";
import { RequestForwarder, type ForwardCaller, type ForwardRequest } from "./forwarding.js";
import { GenerationMarkers } from "./generation-markers.js";
import { InstanceRegistry, type InstanceInfo } from "./instance-registry.js";
import { OwnerRouter } from "./owner-router.js";
import { OwnershipLeases, type LeaseHolder, type LeaseLossReason } from "./ownership-lease.js";
import { connectRedis } from "./redis-client.js";

/**
 * One agentwire instance's membership of a cluster (`--redis`): several
 * instances on one shared store (PostgreSQL) and one Redis, serving the same
 * conversations. The pieces are in this folder; this file wires them to the
 * hub and the handlers (see README.md, "How the wiring goes").
 *
 * - Each loaded conversation has exactly one owner here: the instance holding
 *   its lease. Only the owner loads it, numbers its events and writes to it
 *   (its store handle is claimed with the lease's fencing token when the
 *   store supports fencing, as PostgreSQL does).
 * - The owner sends each event to its own subscribers and publishes it on the
 *   bus (fenced); subscribers on other instances are served from the bus.
 * - Requests that touch a conversation run on its owner (OwnerRouter):
 *   forwarded when another instance holds it, run here after taking the lease
 *   when nobody does.
 * - A lost lease ends the running generation here with one `error` for the
 *   local subscribers (and on the bus, under the old token, where the fence
 *   takes or refuses it), then the runtime goes quiet and its subscribers
 *   follow the bus; a conversation taken over whose generation's ending never
 *   reached the bus (its owner died, or was fenced out) gets an `error`
 *   ending that generation, and its pending tool calls are offered again.
 *
 * Loaded only with --redis (a dynamic import in server.ts), so a single
 * instance never loads ioredis.
 */
export interface ClusterNodeOptions {
  url: string;
  /** The data dir's instance id; the node id adds a per-process suffix. */
  instanceId: string;
  leaseMs: number;
  /** Key prefix in Redis (tests keep apart by it). Default "agentwire:". */
  keyPrefix?: string;
  /** How long a forwarded request waits for the owner. Default 10000. */
  forwardTimeoutMs?: number;
  hub: ConversationHub;
  store: ConversationStore;
  log: Logger;
  /**
   * Runs a forwarded request here, as the owner (the server's handler table).
   * `caller`: the connection that sent it on the other instance, with a way
   * to send that connection a frame (client_tool_call).
   */
  runLocal: (method: string, params: unknown, caller?: RemoteCaller) => Promise<unknown>;
  /** A frame another instance sends to one of this instance's connections (client_tool_call); ignored when it is gone. */
  deliver?: (connectionId: string, frame: string) => void;
  /** A connection of another instance that registered client tools on a conversation owned here closed. */
  remoteConnectionClosed?: (connectionId: string) => void;
  /** After a takeover: offer the pending tool calls the lost owner left (a new generation that starts with them). */
  resumePending: (runtime: ConversationRuntime) => void;
}

/** A store that can bind a handle to a fencing token (PostgreSQL); the others cannot fence. */
interface FencingStore {
  claim(conversationId: string, token: number): Promise<ConversationHandle | undefined>;
}

function canFence(store: ConversationStore): store is ConversationStore & FencingStore {
  return typeof (store as Partial<FencingStore>).claim === "function";
}

export interface ClusterStatusView {
  nodeId: string;
  ownedCount: number;
  owned: string[];
  instances: InstanceInfo[];
}

/** What a non-owner needs to serve conversation.subscribe from the bus: the owner's view now. */
interface Snapshot {
  conversation: Conversation;
  state: ConversationState;
}

const SNAPSHOT = "cluster.snapshot";
/**
 * Client tools across instances (src/tools/client-tools.ts): the owner sends
 * a client_tool_call to the registering connection's instance (DELIVER, not
 * about ownership: run wherever it arrives), and that instance tells the
 * owner when the connection closed (CONNECTION_CLOSED, run on the owner).
 * Both travel as forwarded requests, at most once like the others.
 */
const DELIVER = "cluster.deliver";
const CONNECTION_CLOSED = "cluster.connection-closed";

/** The connection behind a forwarded request, as the owner sees it. */
export interface RemoteCaller extends ForwardCaller {
  /** Send this connection a frame, through its instance. */
  send(frame: string): void;
}

export class ClusterNode implements HubCluster {
  readonly nodeId: string;
  readonly router: OwnerRouter;
  private readonly keys: ClusterKeys;
  private readonly bus: ClusterBus;
  private readonly leases: OwnershipLeases;
  /** Made by announce(), once the address is known (after listening). */
  private registry: InstanceRegistry | null = null;
  private readonly forwarder: RequestForwarder;
  private readonly watches: BusWatches;
  private readonly markers: GenerationMarkers;
  /** Takeovers under way, so concurrent requests for one conversation wait for the same one. */
  private readonly taking = new Map<string, Promise<"owned" | "missing" | LeaseHolder>>();
  /** Where each taken conversation's bus numbering resumes (see BusOutlet). */
  private readonly resumeAt = new Map<string, number>();
  private sweepTimer: NodeJS.Timeout | null = null;
  /** The live instances as last listed (for /metrics, which must answer without waiting on Redis). */
  instancesSeen: InstanceInfo[] = [];
  private closed = false;

  private constructor(
    private readonly options: ClusterNodeOptions,
    private readonly commands: Redis,
    private readonly subscriber: Redis,
  ) {
    const { log, leaseMs } = options;
    this.nodeId = `${options.instanceId}-${randomBytes(3).toString("hex")}`;
    this.keys = new ClusterKeys(options.keyPrefix);
    const keys = this.keys;
    this.bus = new ClusterBus(commands, subscriber, { keys, log });
    this.leases = new OwnershipLeases(commands, { instanceId: this.nodeId, leaseMs, keys, log });
    this.forwarder = new RequestForwarder(commands, subscriber, { instanceId: this.nodeId, keys, log, timeoutMs: options.forwardTimeoutMs });
    this.watches = new BusWatches(this.bus, log);
    this.markers = new GenerationMarkers(commands, keys, this.nodeId, log);
    this.router = new OwnerRouter(this, this.forwarder, leaseMs, options.forwardTimeoutMs ?? 10_000);
  }

  /** Connect to Redis, listen for forwarded requests, announce this instance; a Redis that cannot be reached throws. */
  static async start(options: ClusterNodeOptions): Promise<ClusterNode> {
    const name = `agentwire-${options.instanceId}`;
    const commands = await connectRedis(options.url, { name: `${name}-commands`, log: options.log });
    let subscriber: Redis;
    try {
      // Both the bus and the forwarder subscribe again by themselves after a reconnection.
      subscriber = await connectRedis(options.url, { name: `${name}-subscriber`, log: options.log, options: { autoResubscribe: false } });
    } catch (error) {
      commands.disconnect();
      throw error;
    }
    const node = new ClusterNode(options, commands, subscriber);
    try {
      await node.forwarder.start((request) => node.handleForwarded(request));
    } catch (error) {
      await node.close({ release: false });
      throw error;
    }
    node.sweepTimer = setInterval(() => void node.sweep(), Math.max(200, Math.floor(options.leaseMs / 2)));
    node.sweepTimer.unref();
    return node;
  }

  /**
   * Join the list of live instances at `address`. Separate from start: the
   * server joins the cluster before it listens (no request may be served as
   * a lone instance), and learns its port only then.
   */
  async announce(address: string): Promise<void> {
    const { log, leaseMs } = this.options;
    this.registry = new InstanceRegistry(this.commands, {
      instanceId: this.nodeId,
      address,
      ownedCount: () => this.leases.heldCount,
      ttlMs: Math.max(3000, leaseMs * 1.5),
      keys: this.keys,
      log,
    });
    await this.registry.start();
  }

  // ---- ownership -------------------------------------------------------------------------------------------------

  /** Ownership.take: the lease if nobody holds it, then the store's fence and the bus position; see OwnerRouter. */
  take(conversationId: string): Promise<"owned" | "missing" | LeaseHolder> {
    // A take under way holds the lease before the store is claimed and the runtime loaded: wait for all of it.
    let pending = this.taking.get(conversationId);
    if (pending) return pending;
    if (this.leases.lease(conversationId)?.held) return Promise.resolve("owned");
    pending = this.takeNow(conversationId).finally(() => this.taking.delete(conversationId));
    this.taking.set(conversationId, pending);
    return pending;
  }

  private async takeNow(conversationId: string, minFence = 0): Promise<"owned" | "missing" | LeaseHolder> {
    if (this.closed) throw RpcError.ownerUnavailable(conversationId, "this instance is shutting down", "unreachable", this.nodeId);
    const outcome = await this.leases.acquire(conversationId, { minFence, onLost: (reason) => void this.lost(conversationId, reason) });
    if (!outcome.acquired) return outcome.owner;
    const { lease } = outcome;
    const { store, hub } = this.options;
    let handle: ConversationHandle | undefined;
    try {
      handle = canFence(store) ? await store.claim(conversationId, lease.fence) : await store.get(conversationId);
    } catch (error) {
      await lease.release();
      // The store saw a higher token than Redis gave (Redis lost its counter): take again above it.
      if (error instanceof FencedError && minFence === 0) return this.takeNow(conversationId, error.current);
      throw error;
    }
    if (!handle) {
      await lease.release();
      return "missing";
    }
    let runtime: ConversationRuntime;
    try {
      // Fenced from now on: whatever the former owner still publishes is refused, so the bus's last seq is final.
      const { latestSeq } = await this.bus.replay(conversationId, Number.MAX_SAFE_INTEGER);
      this.resumeAt.set(conversationId, latestSeq);
      // Loaded now, so the lease follows the runtime's life (released when it is unloaded), whatever the request does next.
      runtime = await hub.get(conversationId);
    } catch (error) {
      this.resumeAt.delete(conversationId);
      if (!hub.loaded(conversationId)) await lease.release();
      throw error;
    }
    // Marked and not running here: its ending never reached the bus (its owner died, or lost the lease and was fenced
    // out). This instance's own marks count too: it may be taking back a conversation whose lease it lost.
    const cutOff = await this.markers.left(conversationId);
    if (cutOff && runtime.generation?.id !== cutOff.generationId) await this.endCutOff(runtime, cutOff);
    return lease.held ? "owned" : this.take(conversationId);
  }

  /**
   * The former owner died (or lost its lease and was fenced out) while
   * generating, and no ending of that generation reached the bus: end it for
   * every client watching through the bus with an `error` (code
   * OWNER_UNAVAILABLE), then offer again the tool calls it left pending.
   * Publishing that `error` deletes the mark (see generation-markers.ts).
   */
  private async endCutOff(runtime: ConversationRuntime, cutOff: { nodeId: string; generationId: string }): Promise<void> {
    const conversationId = runtime.id;
    const stored = runtime.recentGenerations.find((g) => g.generationId === cutOff.generationId);
    if (stored && stored.outcome !== "error") {
      // It ended normally and its owner stored that, but the ending's publish failed: not cut off.
      await this.markers.clear(conversationId, cutOff).catch((error: unknown) => this.options.log.warn("clearing a generation mark failed", error));
      return;
    }
    const code = stored?.error?.code ?? ErrorCodes.OWNER_UNAVAILABLE;
    // An owner that lost its lease ended the generation and stored how before its own `error` was fenced off the bus:
    // the clients elsewhere are told the same thing.
    const message =
      stored?.error?.message ??
      `${ErrorMeanings.OWNER_UNAVAILABLE}: instance ${cutOff.nodeId}, which ran this generation, was lost; instance ${this.nodeId} took the conversation over. Records stored before are kept; a reply being streamed was not stored.`;
    const endedAt = stored?.endedAt ?? new Date().toISOString();
    runtime.publish("error", { generationId: cutOff.generationId, code, message });
    if (!stored) {
      runtime.endGeneration({
        generationId: cutOff.generationId,
        outcome: "error",
        endedAt,
        error: { code, message },
        usage: null,
        modelCalls: 0,
        finalRecordId: null,
      });
    }
    await runtime.delivered();
    this.options.log.warn(`took conversation ${conversationId} over from instance ${cutOff.nodeId}, which was generating (${cutOff.generationId})`);
    if (runtime.storedPendingCalls().length > 0 && !runtime.generation) this.options.resumePending(runtime);
  }

  /**
   * The lease was lost (not renewed in time, taken by another instance, or a
   * publish was fenced): the running generation ends here with one `error`
   * (OWNER_UNAVAILABLE) for this instance's own clients at once, without
   * waiting for Redis; the same event goes to the bus under the old token,
   * where it is either taken (and the generation's mark with it) or refused
   * because another instance took the conversation, which then ends the
   * generation for the clients elsewhere. Then the subscribers follow the bus.
   */
  private async lost(conversationId: string, reason: LeaseLossReason): Promise<void> {
    this.resumeAt.delete(conversationId);
    this.options.log.warn(`conversation ${conversationId} is no longer owned here (${reason}); its live work stops`);
    const why =
      reason === "expired"
        ? "Redis did not confirm its ownership lease in time"
        : "another instance took the conversation over";
    const message = `${ErrorMeanings.OWNER_UNAVAILABLE}: instance ${this.nodeId} stopped this generation because it lost its ownership of the conversation (${why}). Records stored before are kept; a reply being streamed was not stored; tool calls waiting for a decision stay pending for the next step.`;
    await this.options.hub.relinquish(conversationId, { code: ErrorCodes.OWNER_UNAVAILABLE, message });
  }

  /** Conversations left marked as generating by an instance that no longer holds them: take them over within the lease time. */
  private async sweep(): Promise<void> {
    if (this.closed) return;
    this.registry?.list().then(
      (list) => (this.instancesSeen = list),
      () => {},
    );
    try {
      // marked(): only conversations whose generation's ending is not on the bus.
      for (const conversationId of await this.markers.marked()) {
        if (this.closed || this.leases.lease(conversationId)?.held) continue;
        if (await this.leases.owner(conversationId)) continue;
        const taken = await this.take(conversationId).catch((error: unknown) => {
          this.options.log.warn(`taking over conversation ${conversationId} failed`, error);
        });
        // Deleted meanwhile: its mark has nothing left to end.
        if (taken === "missing") await this.markers.drop(conversationId);
      }
    } catch (error) {
      this.options.log.warn("the failover sweep failed; retrying", error);
    }
  }

  // ---- HubCluster ------------------------------------------------------------------------------------------------

  async claimCreated(conversationId: string): Promise<void> {
    const taken = await this.take(conversationId);
    if (taken !== "owned") this.options.log.warn(`a conversation created here, ${conversationId}, could not be owned here`);
  }

  attach(runtime: ConversationRuntime): void {
    const resumeAt = this.resumeAt.get(runtime.id) ?? 0;
    this.resumeAt.delete(runtime.id);
    const id = runtime.id;
    // The runtime publishes under the token of the lease it was loaded with, even once that lease is lost: what it
    // still sends (the ending of its generation) is then taken or refused by the bus's fence, never by a guess here.
    // Loaded while no lease was held (lost between acquiring and loading), it takes the next lease's token.
    let fence = this.leases.lease(id)?.fence;
    runtime.outlet = new BusOutlet(resumeAt > 0 ? resumeAt : runtime.handle.seqReserved, (event) =>
      this.publish(id, event, (fence ??= this.leases.lease(id)?.fence)),
    );
  }

  released(conversationId: string): void {
    void this.leases.lease(conversationId)?.release();
  }

  watch(connection: Connection, conversationId: string, afterSeq: number, endedHere?: ReadonlySet<string>): void {
    this.watches.watch(connection, conversationId, afterSeq, endedHere).catch(() => {});
  }

  unwatch(connection: Connection, conversationId: string): void {
    this.watches.unwatch(connection, conversationId);
  }

  watchCount(): number {
    return this.watches.size;
  }

  /**
   * Not awaited by the runtime: its own subscribers already have the event,
   * and the bus is for the other instances (a client that reconnects
   * elsewhere catches up from the stream with afterSeq).
   */
  private publish(conversationId: string, event: BusEvent, fence: number | undefined): void {
    if (fence === undefined) return; // loaded without a lease: nothing it sends may speak for the conversation
    const ends = event.endsGeneration;
    this.bus.publish(conversationId, event, { fence }).then(
      (outcome) => {
        // The generation's mark went with its ending; its index entry follows.
        if (ends !== undefined && outcome === "published") this.markers.ended(conversationId, ends);
      },
      (error: unknown) => {
        if (error instanceof FencedError) {
          const lease = this.leases.lease(conversationId);
          // Another instance holds the conversation under a newer token; ours is lost, whether or not a renewal said so yet.
          if (lease?.held && lease.fence === fence) this.leases.forfeit(conversationId);
        } else {
          this.options.log.warn(`publishing an event of conversation ${conversationId} failed; watchers elsewhere resync`, error);
        }
      },
    );
  }

  // ---- generation marks (Agent hooks) ----------------------------------------------------------------------------

  /** Its ending, published on the bus, deletes the mark (ClusterBus's publish script). */
  generationStarted(conversationId: string, generationId: string): void {
    this.markers.started(conversationId, generationId);
  }

  // ---- subscriptions ---------------------------------------------------------------------------------------------

  /**
   * conversation.subscribe in cluster mode. On the owner, with a replay its
   * own log can answer, exactly as for a single instance; otherwise the
   * owner's snapshot, then the bus from the client's afterSeq (or from the
   * snapshot's seq).
   */
  async subscribe(connection: Connection, conversationId: string, afterSeq: number | undefined) {
    const { hub } = this.options;
    hub.checkSubscriptionLimit(connection, conversationId);
    const snapshot = await this.snapshotOf(conversationId);
    const runtime = hub.loaded(conversationId);
    if (runtime && this.leases.lease(conversationId)?.held && (afterSeq === undefined || runtime.events.since(afterSeq, runtime.seq) !== undefined)) {
      this.watches.unwatch(connection, conversationId);
      const outcome = hub.subscribe(connection, runtime, afterSeq);
      return { conversation: runtime.handle.conversation, state: runtime.state(), ...outcome };
    }
    const { state } = snapshot;
    let from = Math.min(afterSeq ?? state.seq, state.seq);
    let resync = false;
    if (afterSeq !== undefined && afterSeq < state.seq) {
      // An empty stream says nothing (expired, or never published): like a log that no longer holds the events.
      const replay = await this.bus.replay(conversationId, afterSeq);
      if (replay.latestSeq === 0) {
        resync = true;
        from = state.seq;
      }
    }
    runtime?.subscribers.delete(connection);
    const outcome = await this.watches.watch(connection, conversationId, from);
    return { ...snapshot, replayed: outcome.replayed, resync: resync || outcome.resync };
  }

  /** The owner's conversation and state (forwarded to it, or read here when this instance owns it or takes it). */
  snapshotOf(conversationId: string): Promise<Snapshot> {
    return this.router.run(SNAPSHOT, conversationId, {}, () => this.localSnapshot(conversationId));
  }

  private async localSnapshot(conversationId: string): Promise<Snapshot> {
    const runtime = await this.options.hub.get(conversationId);
    return { conversation: runtime.handle.conversation, state: runtime.state() };
  }

  /**
   * A connection of this instance closed: tell the owners of the
   * conversations it registered client tools on (forwarded requests carried
   * them there), so its calls there start their grace period.
   */
  connectionClosed(connectionId: string, conversationIds: Iterable<string>): void {
    for (const conversationId of conversationIds) {
      const local = () => this.options.remoteConnectionClosed?.(connectionId);
      this.router.run(CONNECTION_CLOSED, conversationId, { connectionId }, local).catch((error: unknown) =>
        this.options.log.warn(`could not tell the owner of conversation ${conversationId} that connection ${connectionId} closed`, error),
      );
    }
  }

  private async handleForwarded(request: ForwardRequest & { from: string }): Promise<unknown> {
    const { conversationId, method, params } = request;
    if (method === DELIVER) {
      const { connectionId, frame } = params as { connectionId: string; frame: string };
      this.options.deliver?.(connectionId, frame);
      return {};
    }
    // The sender saw our lease in Redis while we were still taking the conversation: answer once it is ours in full.
    await this.taking.get(conversationId)?.catch(() => undefined);
    if (!this.leases.lease(conversationId)?.held) {
      throw RpcError.ownerUnavailable(conversationId, `instance ${this.nodeId} no longer owns it`, "not-owner", this.nodeId);
    }
    if (method === SNAPSHOT) return this.localSnapshot(conversationId);
    if (method === CONNECTION_CLOSED) {
      this.options.remoteConnectionClosed?.((params as { connectionId: string }).connectionId);
      return {};
    }
    const { caller, from } = request;
    if (!caller) return this.options.runLocal(method, params);
    const send = (frame: string) => {
      this.forwarder.forward(from, { method: DELIVER, conversationId, params: { connectionId: caller.connectionId, frame } }).catch((error: unknown) =>
        this.options.log.warn(`could not send a frame to connection ${caller.connectionId} on instance ${from}`, error),
      );
    };
    return this.options.runLocal(method, params, { ...caller, send });
  }

  // ---- status and shutdown ---------------------------------------------------------------------------------------

  async status(): Promise<ClusterStatusView> {
    const owned = this.leases.heldIds();
    const instances = await (this.registry?.list() ?? Promise.resolve([])).catch((error: unknown) => {
      this.options.log.warn("listing the cluster's instances failed", error);
      return [];
    });
    if (instances.length > 0) this.instancesSeen = instances;
    return { nodeId: this.nodeId, ownedCount: owned.length, owned: owned.slice(0, 100), instances };
  }

  get ownedCount(): number {
    return this.leases.heldCount;
  }

  /** Leave the cluster: release every lease (others take the conversations at once) unless `release` is false. */
  async close({ release = true }: { release?: boolean } = {}): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    this.watches.close();
    await this.forwarder.close().catch(() => {});
    await this.registry?.stop({ withdraw: release }).catch(() => {});
    await this.leases.close({ release }).catch(() => {});
    await this.bus.close().catch(() => {});
    this.subscriber.disconnect();
    await this.commands.quit().catch(() => this.commands.disconnect());
  }
}
