import type { ClusterNode } from "./cluster/cluster-node.js";
import type { ServerConfig } from "./config/server-config.js";
import type { Agent } from "./generation/agent.js";
import type { History } from "./history/lazy-history-index.js";
import type { Logger } from "./logging/logger.js";
import type { McpManager } from "./mcp/mcp-manager.js";
import type { ServerMetrics } from "./metrics/server-metrics.js";
import type { CallContext } from "./rpc/dispatcher.js";
import type { Connection } from "./sessions/connection.js";
import type { ConversationHub } from "./sessions/conversation-hub.js";
import type { ConversationStore } from "./store/conversation-store.js";

/** The server's parts, as handlers see them. */
export interface App {
  readonly config: ServerConfig;
  readonly log: Logger;
  readonly store: ConversationStore;
  readonly hub: ConversationHub;
  readonly agent: Agent;
  /** MCP servers: their tools, their state, mcp.add/remove/probe. */
  readonly mcp: McpManager;
  /** Other runtimes' sessions on this machine (history.*): indexed at first use. */
  readonly history: History;
  readonly connections: ReadonlySet<Connection>;
  readonly startedAt: number;
  /** Stable per data dir (<dataDir>/instance.json). */
  readonly instanceId: string;
  /** Counters and histograms: server.status totals and GET /metrics. */
  readonly metrics: ServerMetrics;
  /** Cluster mode (--redis): ownership, forwarding and the event bus; null for a single instance. */
  cluster: ClusterNode | null;
}

/** Per-frame context handed to every handler. */
export interface RequestContext extends CallContext {
  connection: Connection;
  app: App;
  /** Work to run right after this frame's reply is sent (e.g. `connected` after initialize). */
  afterReply: (() => void)[];
}
