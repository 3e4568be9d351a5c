import type { Conversation, ConversationState } from "../../protocol/index.js";
import type { Connection } from "./connection.js";
import type { ConversationRuntime } from "./conversation-runtime.js";

/**
 * What the conversation hub asks of the cluster (src/cluster/cluster-node.ts)
 * when several instances share one store: ownership of what it creates and
 * loads, the bus outlet of each runtime, and subscriptions served from the
 * event bus instead of a local runtime. A single instance has none, and the
 * hub's paths stay as they were.
 */
export interface HubCluster {
  /** A conversation was just created here: take its ownership lease before anyone can see it. */
  claimCreated(conversationId: string): Promise<void>;
  /** A runtime was adopted (created or loaded here as the owner): give it its bus outlet. */
  attach(runtime: ConversationRuntime): void;
  /** The runtime left memory (unloaded or deleted): give its ownership up so another instance may take it. */
  released(conversationId: string): void;
  /**
   * Serve this connection's subscription from the bus, from the event after
   * `afterSeq`. `endedHere`: generations whose ending this connection was
   * already sent by this instance; another ending of one of them (from an
   * instance that took the conversation over after this one's was fenced
   * off the bus) is not sent again.
   */
  watch(connection: Connection, conversationId: string, afterSeq: number, endedHere?: ReadonlySet<string>): void;
  /**
   * conversation.subscribe in cluster mode: the owner's snapshot (forwarded
   * to it), then the events from the owner's runtime when it is here and its
   * log can answer `afterSeq`, else from the bus.
   */
  subscribe(connection: Connection, conversationId: string, afterSeq: number | undefined): Promise<FollowOutcome>;
  /** The owner's view of the conversation, wherever it runs; CONVERSATION_NOT_FOUND when there is none. */
  snapshotOf(conversationId: string): Promise<{ conversation: Conversation; state: ConversationState }>;
  /** End a subscription served from the bus (unsubscribe, disconnect). */
  unwatch(connection: Connection, conversationId: string): void;
  /** Subscriptions served from the bus. */
  watchCount(): number;
}

/** What conversation.subscribe answers: the conversation as it is now, and how the missed events were made up. */
export interface FollowOutcome {
  conversation: Conversation;
  state: ConversationState;
  replayed: number;
  resync: boolean;
}
