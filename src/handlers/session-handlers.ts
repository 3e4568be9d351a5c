import { methodTable, notificationNames, PROTOCOL_MAJOR, PROTOCOL_VERSION } from "../../protocol/index.js";
import { RpcError } from "../rpc/rpc-error.js";
import { SERVER_VERSION } from "../server-version.js";
import { notificationFrame } from "../sessions/notification-frame.js";
import type { MethodHandlers } from "./scope-binding.js";

type Handlers = MethodHandlers;

export const initialize: Handlers["initialize"] = (params, { connection, app, afterReply }) => {
  if (connection.initialized) throw RpcError.alreadyInitialized();
  const major = Number.parseInt(params.protocolVersion.split(".")[0] ?? "", 10);
  if (major !== PROTOCOL_MAJOR) throw RpcError.unsupportedProtocolVersion(params.protocolVersion, PROTOCOL_VERSION);
  connection.initialized = true;
  connection.clientInfo = params.clientInfo;
  connection.experimentalApi = params.capabilities?.experimentalApi === true;
  connection.subscriberPresence = params.capabilities?.subscriberPresence === true;
  connection.optOut = new Set(params.capabilities?.notificationOptOut ?? []);
  afterReply.push(() =>
    connection.send(
      notificationFrame("connected", {
        connectionId: connection.id,
        protocolVersion: PROTOCOL_VERSION,
        timestamp: new Date().toISOString(),
      }),
    ),
  );
  const { config } = app;
  return {
    protocolVersion: PROTOCOL_VERSION,
    serverInfo: { name: "agentwire" as const, version: SERVER_VERSION },
    capabilities: {
      methods: Object.keys(methodTable),
      notifications: [...notificationNames],
      maxPayloadBytes: config.limits.maxPayloadBytes,
      limits: {
        maxBatch: config.limits.maxBatch,
        maxDepth: config.limits.maxDepth,
        maxReplyBytes: config.limits.maxReplyBytes,
        maxMessageBytes: config.limits.maxMessageBytes,
        maxSubscriptionsPerConnection: config.limits.maxSubscriptionsPerConnection,
      },
    },
    connectionId: connection.id,
    notices: config.notices,
  };
};

export const serverStatus: Handlers["server.status"] = async (_params, { app }) => {
  const memory = process.memoryUsage();
  let initialized = 0;
  for (const c of app.connections) if (c.initialized) initialized++;
  const { totals } = app.metrics;
  return {
    version: SERVER_VERSION,
    instanceId: app.instanceId,
    uptimeMs: Date.now() - app.startedAt,
    connections: app.connections.size,
    initializedConnections: initialized,
    subscriptions: app.hub.subscriptionCount(),
    conversationsLoaded: app.hub.loadedCount(),
    conversationsStored: app.store.count(),
    conversationsActive: app.hub.activeCount(),
    generations: app.hub.generationCount(),
    pendingToolCalls: app.hub.pendingToolCount(),
    totals: { ...totals, generations: { ...totals.generations }, toolCalls: { ...totals.toolCalls }, cost: totals.cost.map((c) => ({ ...c })) },
    damagedConversations: app.store.damaged().map((d) => ({ conversationId: d.id, problem: d.problem })),
    mcp: app.mcp.status(),
    notices: app.config.notices,
    cluster: app.cluster ? await app.cluster.status() : null,
    memory: { rss: memory.rss, heapUsed: memory.heapUsed },
  };
};
