/**
 * Managing MCP servers at run time: mcp.list, mcp.add, mcp.remove,
 * mcp.probe. Servers come from the configuration file (`mcpServers`, read at
 * start) or from mcp.add (kept in the data dir, so they survive a restart).
 * Their tools join tools.list as mcp__<server>__<tool>.
 */
import * as z from "zod";
import { McpServerDefinition, McpServerName } from "./config-mcp.js";
import { ConversationId } from "./records.js";

export const McpServerState = z
  .enum(["connecting", "connected", "failed", "disabled"])
  .describe(
    "connecting: its first connection attempt is under way; connected: its tools are offered; failed: it could not be started or reached, or it went away " +
      "(`error` says why; it is retried with backoff and stays failed while a retry is under way, until one succeeds); disabled: declared with disabled: true and not started.",
  );

export const McpToolSummary = z
  .strictObject({
    name: z.string().describe("The name the model calls it by: mcp__<server>__<tool> (characters the model API refuses become _; a long name is shortened with a hash)."),
    mcpName: z.string().describe("The tool's name on the MCP server."),
    description: z.string().describe("What the tool does, as the server describes it."),
    annotations: z
      .strictObject({
        readOnlyHint: z.boolean().optional().describe("The server says the tool changes nothing."),
        destructiveHint: z.boolean().optional().describe("The server says the tool may destroy data."),
      })
      .describe("The server's hints about the tool (readOnlyHint, destructiveHint); empty when it gives none."),
  })
  .describe("One tool of an MCP server.");

export const McpServerInfo = z
  .strictObject({
    name: McpServerName,
    transport: z.enum(["stdio", "http"]).describe("stdio: a child process; http: Streamable HTTP."),
    origin: z
      .enum(["config", "added", "conversation"])
      .describe(
        "config: declared in the configuration file (change it there); added: by mcp.add, kept in the data dir (mcp.remove removes it); conversation: one of the conversation's own servers (mcp.list with conversationId; conversation.update mcpServers changes them).",
      ),
    state: McpServerState,
    error: z.string().optional().describe("Why it failed, when state is failed."),
    nextRetryMs: z.number().int().optional().describe("When failed: milliseconds until the next connection attempt (0 while a retry is under way)."),
    attempts: z.number().int().describe("Connection attempts since the last successful one (0 while connected)."),
    serverInfo: z
      .strictObject({
        name: z.string().describe("The name the server gives itself."),
        version: z.string().describe("Its version."),
      })
      .optional()
      .describe("What the server said about itself when it connected."),
    tools: z.array(McpToolSummary).describe("Its tools, as last listed; empty unless connected."),
  })
  .describe("One MCP server and its state.");

export const McpListParams = z
  .strictObject({
    conversationId: ConversationId.optional().describe(
      "Also list this conversation's own MCP servers (conversation.create mcpServers), after the server-wide ones, with origin \"conversation\". Omit for the server-wide servers only.",
    ),
  })
  .describe("Parameters of mcp.list.");
export const McpListResult = z
  .strictObject({
    servers: z
      .array(McpServerInfo)
      .describe("Every MCP server: configuration file first, then those added, each in declaration order; with conversationId, then the conversation's own."),
  })
  .describe("Result of mcp.list.");

export const McpAddParams = z
  .strictObject({
    name: McpServerName,
    server: McpServerDefinition,
  })
  .describe("Parameters of mcp.add.");
export const McpAddResult = z
  .strictObject({ server: McpServerInfo })
  .describe("Result of mcp.add: the server after its first connection attempt (it stays saved when that failed, and is retried).");

export const McpRemoveParams = z
  .strictObject({ name: McpServerName })
  .describe("Parameters of mcp.remove.");
export const McpRemoveResult = z
  .strictObject({ removed: z.literal(true).describe("Always true: the server was stopped and forgotten.") })
  .describe("Result of mcp.remove.");

export const McpProbeParams = z
  .strictObject({ server: McpServerDefinition })
  .describe("Parameters of mcp.probe.");
export const McpProbeResult = z
  .strictObject({
    serverInfo: z
      .strictObject({
        name: z.string().describe("The name the server gives itself."),
        version: z.string().describe("Its version."),
      })
      .describe("What the server said about itself."),
    tools: z
      .array(
        z
          .strictObject({
            name: z.string().describe("The tool's name on the MCP server."),
            description: z.string().describe("What it does."),
            inputSchema: z.record(z.string(), z.unknown()).describe("JSON Schema of its arguments."),
            annotations: McpToolSummary.shape.annotations,
          })
          .describe("A tool the server offers."),
      )
      .describe("Every tool it lists."),
  })
  .describe("Result of mcp.probe: what the server offers. Nothing was saved and nothing is offered to the model.");

export const McpStatusSummary = z
  .strictObject({
    servers: z.number().int().describe("MCP servers declared (configuration file and mcp.add), disabled ones included."),
    connected: z.number().int().describe("Of those, connected now."),
    failed: z.number().int().describe("Of those, failed now (being retried); mcp.list says why."),
    tools: z.number().int().describe("MCP tools offered to the model."),
  })
  .describe("MCP servers at a glance; mcp.list has the details.");

export type McpServerInfo = z.infer<typeof McpServerInfo>;
export type McpToolSummary = z.infer<typeof McpToolSummary>;
export type McpProbeResult = z.infer<typeof McpProbeResult>;
export type McpStatusSummary = z.infer<typeof McpStatusSummary>;
