import * as z from "zod";
import { McpStatusSummary } from "./mcp.js";
import { Notice } from "./notices.js";
import { Cost } from "./usage.js";
import { DamagedConversationEntry } from "./error-shapes.js";

export const InitializeParams = z
  .strictObject({
    protocolVersion: z
      .string()
      .describe("Protocol version the client speaks, e.g. \"1.0\". A different major version is refused."),
    clientInfo: z
      .object({
        name: z.string().min(1).max(200).describe("Client name, e.g. \"vscode-agentwire\"."),
        version: z.string().max(100).optional().describe("Client version."),
      })
      .optional()
      .describe("Who is connecting; shown in server.status and logs."),
    capabilities: z
      .object({
        notificationOptOut: z
          .array(z.string().max(64))
          .max(64)
          .optional()
          .describe("Notification methods this connection does not want (e.g. [\"generation_progress\"]). Their seq numbers still advance."),
        experimentalApi: z
          .boolean()
          .optional()
          .describe("True to use methods marked experimental (x-experimental in OpenRPC), whose shape may still change. Default false: they answer EXPERIMENTAL_API_REQUIRED."),
        subscriberPresence: z
          .boolean()
          .optional()
          .describe("True to receive subscribers_changed on the conversations this connection subscribes to (who else watches them). Default false: it is the one conversation notification without a seq, so clients that expect a seq on each never see it."),
      })
      .optional()
      .describe("What the client can do or wants."),
  })
  .describe("Parameters of initialize.");

const ServerNotices = z
  .array(Notice)
  .describe(
    "Notices about the server as a whole, to show the user: e.g. configuration it skipped at start because the agentwire.json holding it is not trusted (config_untrusted) or was not read (config_ignored). Empty when there are none.",
  );

export const InitializeResult = z
  .object({
    protocolVersion: z.string().describe("Protocol version the server speaks."),
    serverInfo: z
      .object({
        name: z.literal("agentwire").describe("Always \"agentwire\"."),
        version: z.string().describe("Server version."),
      })
      .describe("Who answered."),
    capabilities: z
      .object({
        methods: z.array(z.string()).describe("Request methods this server implements."),
        notifications: z.array(z.string()).describe("Notification methods this server may send."),
        maxPayloadBytes: z.number().int().describe("Largest frame the server accepts; a larger one closes the socket with 1009."),
        limits: z
          .object({
            maxBatch: z.number().int().describe("Most requests in one batch."),
            maxDepth: z.number().int().describe("Deepest nesting of arrays and objects in one frame."),
            maxReplyBytes: z.number().int().describe("Largest reply to one frame; page or split requests to stay under it."),
            maxMessageBytes: z.number().int().describe("Largest message content (UTF-8 bytes) message.append accepts, and largest system prompt."),
            maxSubscriptionsPerConnection: z.number().int().describe("Most conversations one connection may subscribe to."),
          })
          .describe("Limits a client should stay within; going past one is answered with a clear error (INVALID_REQUEST or LIMIT_EXCEEDED)."),
      })
      .describe("What the server offers."),
    connectionId: z.string().describe("Id of this connection, as shown in server.status."),
    notices: ServerNotices,
  })
  .describe("Result of initialize.");

export const ServerStatusParams = z.strictObject({}).describe("No parameters.");

const Total = (what: string) => z.number().int().min(0).describe(what);

export const ServerTotals = z
  .object({
    generations: z
      .object({
        completed: Total("Generations that completed."),
        interrupted: Total("Generations interrupted (interrupt, delete, shutdown)."),
        error: Total("Generations that failed."),
      })
      .describe("Generations ended since start, by outcome."),
    toolCalls: z
      .object({
        completed: Total("Tool calls that succeeded."),
        failed: Total("Tool calls that failed (including refused and unknown tools)."),
        skipped: Total("Tool calls not run (declined, interrupted, timed out, maxIterations)."),
      })
      .describe("Tool calls settled since start, by outcome."),
    modelCalls: Total("Model calls that finished."),
    promptTokens: Total("Prompt tokens reported by the endpoint."),
    completionTokens: Total("Completion tokens reported by the endpoint."),
    cachedPromptTokens: Total("Prompt tokens served from the endpoint's prompt cache (part of promptTokens; calls whose endpoint did not say count 0)."),
    reasoningTokens: Total("Completion tokens spent reasoning (part of completionTokens; calls whose endpoint did not say count 0)."),
    cost: z
      .array(Cost)
      .describe("What the priced model calls cost, one entry per currency (empty when no model with a configured pricing was called)."),
    unpricedModelCalls: Total("Model calls whose cost is unknown (their model has no configured pricing, or the endpoint reported no usage)."),
    framesSent: Total("WebSocket frames (replies and notifications) sent to clients."),
    slowConsumersDropped: Total("Connections terminated because they stopped reading (send backlog over limits.maxBufferedBytes)."),
  })
  .describe("Counts since this process started (they restart at 0 with it; GET /metrics serves the same).");

export const ClusterInstance = z
  .object({
    id: z.string().describe("The instance's cluster node id (its instanceId and a per-process suffix)."),
    address: z.string().describe("Where it listens, as it announced itself (ws://HOST:PORT)."),
    startedAt: z.string().describe("When it started (ISO 8601)."),
    ownedCount: z.number().int().describe("Conversations it owned at its last heartbeat."),
    heartbeatAt: z.string().describe("Its last heartbeat (ISO 8601); an instance is listed until a few heartbeats are missed."),
  })
  .describe("One live instance of the cluster.");

export const ClusterStatus = z
  .object({
    nodeId: z
      .string()
      .describe("This process's id in the cluster: the instanceId and a suffix drawn at start, so a restarted process is a new owner."),
    ownedCount: z.number().int().describe("Conversations this instance owns now (holds the ownership lease of)."),
    owned: z
      .array(z.string())
      .describe("Ids of the conversations this instance owns, at most 100 (ownedCount gives the total)."),
    instances: z
      .array(ClusterInstance)
      .describe("The cluster's live instances, this one included; empty when Redis could not be asked."),
  })
  .describe("Cluster mode (--redis): this instance's place in the cluster.");

export const ServerStatusResult = z
  .object({
    version: z.string().describe("Server version."),
    instanceId: z
      .string()
      .describe("This server's id: generated once per data dir and kept in <dataDir>/instance.json, so it stays the same across restarts."),
    uptimeMs: z.number().describe("Milliseconds since the server started."),
    connections: z.number().int().describe("Open WebSocket connections."),
    initializedConnections: z.number().int().describe("Connections that have completed initialize."),
    subscriptions: z.number().int().describe("Conversation subscriptions across all connections."),
    conversationsLoaded: z.number().int().describe("Conversations held in memory."),
    conversationsStored: z.number().int().describe("Conversations in the store."),
    conversationsActive: z
      .number()
      .int()
      .describe("Loaded conversations with a generation running or tool calls waiting for a decision."),
    generations: z.number().int().describe("Generations running now."),
    pendingToolCalls: z.number().int().describe("Tool calls of running generations waiting for tool.confirm now."),
    totals: ServerTotals,
    damagedConversations: z
      .array(DamagedConversationEntry)
      .describe("Stored conversations found damaged so far (checked in the background from start-up, and on every load)."),
    mcp: McpStatusSummary,
    notices: ServerNotices,
    cluster: ClusterStatus.nullable().describe("Cluster mode (--redis): this instance, what it owns and the live instances; null for a single instance."),
    memory: z
      .object({
        rss: z.number().describe("Resident set size, bytes."),
        heapUsed: z.number().describe("V8 heap in use, bytes."),
      })
      .describe("Process memory."),
  })
  .describe("Result of server.status.");
