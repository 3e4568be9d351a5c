/**
 * Every Redis key and channel the cluster modules use, in one place, so two
 * deployments (or two test files) on one Redis stay apart by prefix and a
 * reader can see the whole layout.
 *
 * A conversation's keys share the hash tag `{<id>}`, so the scripts that
 * touch several of them (publish checks the fence key) also work on Redis
 * Cluster, where a script's keys must live in one slot.
 */
export class ClusterKeys {
  constructor(readonly prefix: string = "agentwire:") {}

  /** Stream of a conversation's recent event frames (entry id `<seq>-0`). */
  events(conversationId: string): string {
    return `${this.prefix}events:{${conversationId}}`;
  }

  /** Hash beside the stream: last seq stored and bytes held. */
  eventsMeta(conversationId: string): string {
    return `${this.prefix}events-meta:{${conversationId}}`;
  }

  /** Pub/sub channel carrying the same frames live. */
  eventsChannel(conversationId: string): string {
    return `${this.prefix}events-live:{${conversationId}}`;
  }

  /** Who owns the conversation's live work: "<instanceId> <fence>", with the lease's expiry. */
  lease(conversationId: string): string {
    return `${this.prefix}lease:{${conversationId}}`;
  }

  /** Fencing counter: raised on every acquisition, never lowered, never expires. */
  fence(conversationId: string): string {
    return `${this.prefix}fence:{${conversationId}}`;
  }

  /** Hash: conversation id → "<nodeId> <generationId>" of each generation running in the cluster (failover finds them). */
  generating(): string {
    return `${this.prefix}generating`;
  }

  /** One instance's announcement (JSON), expiring unless refreshed. */
  instance(instanceId: string): string {
    return `${this.prefix}instance:${instanceId}`;
  }

  /** Set of instance ids that have announced themselves; pruned of those whose key expired. */
  instanceIndex(): string {
    return `${this.prefix}instances`;
  }

  /** Channel an instance listens on for requests forwarded to it. */
  requests(instanceId: string): string {
    return `${this.prefix}requests:${instanceId}`;
  }

  /** Channel an instance listens on for the replies to requests it forwarded. */
  replies(instanceId: string): string {
    return `${this.prefix}replies:${instanceId}`;
  }
}
