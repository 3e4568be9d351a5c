import { z } from "zod";
import { McpStatusSummary } from "./mcp.js";
import { DamagedConversationEntry } from "./records.js";

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
      })
      .optional()
      .describe("What the client can do or wants."),
  })
  .describe("Parameters of initialize.");

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
  })
  .describe("Result of initialize.");

export const ServerStatusParams = z.strictObject({}).describe("No parameters.");

export const ServerStatusResult = z
  .object({
    version: z.string().describe("Server version."),
    uptimeMs: z.number().describe("Milliseconds since the server started."),
    connections: z.number().int().describe("Open WebSocket connections."),
    initializedConnections: z.number().int().describe("Connections that have completed initialize."),
    subscriptions: z.number().int().describe("Conversation subscriptions across all connections."),
    conversationsLoaded: z.number().int().describe("Conversations held in memory."),
    conversationsStored: z.number().int().describe("Conversations in the store."),
    generations: z.number().int().describe("Generations running now."),
    damagedConversations: z
      .array(DamagedConversationEntry)
      .describe("Stored conversations found damaged so far (checked in the background from start-up, and on every load)."),
    mcp: McpStatusSummary,
    memory: z
      .object({
        rss: z.number().describe("Resident set size, bytes."),
        heapUsed: z.number().describe("V8 heap in use, bytes."),
      })
      .describe("Process memory."),
  })
  .describe("Result of server.status.");
