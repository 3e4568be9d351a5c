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

  /**
   * "<nodeId> <generationId>" of the generation running in the conversation, until its ending is on the bus
   * (the publish script that carries the ending deletes it): a takeover that finds it ends that generation.
   */
  generationMark(conversationId: string): string {
    return `${this.prefix}generating:{${conversationId}}`;
  }

  /** Hash: conversation id → its generation mark, so the failover sweep can list the marked conversations (may hold stale entries, pruned by the sweep). */
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
