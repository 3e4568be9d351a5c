import { z } from "zod";

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
          .array(z.string())
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
    memory: z
      .object({
        rss: z.number().describe("Resident set size, bytes."),
        heapUsed: z.number().describe("V8 heap in use, bytes."),
      })
      .describe("Process memory."),
  })
  .describe("Result of server.status.");

export type InitializeParams = z.infer<typeof InitializeParams>;
export type InitializeResult = z.infer<typeof InitializeResult>;
export type ServerStatusParams = z.infer<typeof ServerStatusParams>;
export type ServerStatusResult = z.infer<typeof ServerStatusResult>;
