/**
 * MCP servers as tool providers, in the `mcpServers` shape other MCP hosts
 * use: a map from server name to either a command (stdio) or a URL
 * (Streamable HTTP). Part of agentwire.json (protocol/config.ts) and of the
 * mcp.add method.
 */
import * as z from "zod";
import { ruleCheck } from "./schema-rule-check.js";

import { MAX_CONVERSATION_MCP_SERVERS, MCP_SERVER_NAME_PATTERN } from "./mcp-defaults.js";

export { MAX_CONVERSATION_MCP_SERVERS, MCP_SERVER_NAME_PATTERN } from "./mcp-defaults.js";

export const McpServerName = z
  .string()
  .regex(MCP_SERVER_NAME_PATTERN)
  .describe("Server name: letters, digits, _ and -, at most 32. Its tools are offered as mcp__<name>__<tool>.");

const Common = {
  timeoutMs: z.number().int().min(100).optional().describe("Time limit of one tool call; default: the conversation's toolTimeoutMs."),
  disabled: z.boolean().optional().describe("Declared but not started."),
};

export const McpStdioServer = z
  .strictObject({
    type: z.literal("stdio").optional().describe("Optional; a definition with `command` is stdio."),
    command: z.string().min(1).describe("Program to start, e.g. npx or node."),
    args: z.array(z.string()).optional().describe("Its arguments."),
    env: z.record(z.string(), z.string()).optional().describe("Environment variables for it, on top of the scrubbed tool environment."),
    cwd: z.string().min(1).optional().describe("Its working directory (default: the server's)."),
    ...Common,
  })
  .describe("An MCP server run as a child process, spoken to over stdio.");

export const McpHttpServer = z
  .strictObject({
    type: z.enum(["http", "streamable-http"]).optional().describe("Optional; a definition with `url` is Streamable HTTP."),
    url: z.string().url().describe("The server's Streamable HTTP endpoint, e.g. http://127.0.0.1:3000/mcp."),
    headers: z.record(z.string(), z.string()).optional().describe("Extra request headers (e.g. Authorization)."),
    ...Common,
  })
  .describe("An MCP server reached over Streamable HTTP.");

export const McpServerDefinition = z.union([McpStdioServer, McpHttpServer]).describe("How to reach one MCP server.");

export const McpServersConfig = z
  .record(McpServerName, McpServerDefinition)
  .describe("MCP servers whose tools the model may call, by name (the usual mcpServers shape).");


const ConversationServerName = McpServerName.describe(
  "Server name: letters, digits, _ and -, at most 32, unique within the conversation. Its tools are offered as mcp__<name>__<tool>; a server-wide server of the same name is hidden from this conversation (its own shadows it).",
);

export const ConversationMcpServer = z
  .union([McpStdioServer.extend({ name: ConversationServerName }), McpHttpServer.extend({ name: ConversationServerName })])
  .describe("An MCP server of one conversation: `name` and the definition mcp.add takes (stdio: command, args, env, cwd; Streamable HTTP: url, headers).");

export const ConversationMcpServers = z
  .array(ConversationMcpServer)
  .max(MAX_CONVERSATION_MCP_SERVERS)
  .check(ruleCheck("MCP server names unique"))
  .describe(
    `MCP servers of this conversation only (at most ${MAX_CONVERSATION_MCP_SERVERS}): started on the instance that runs the conversation when it is created or loaded, stopped when it is unloaded or deleted, their tools offered to its model alone. Kept with the conversation's stored state (not in its metadata shown to clients), so they start again after a restart; env and headers are stored as given, in plain text, as mcp.add keeps saved servers.`,
  );

export type McpServerDefinition = z.infer<typeof McpServerDefinition>;
export type ConversationMcpServer = z.infer<typeof ConversationMcpServer>;
export type McpServersConfig = z.infer<typeof McpServersConfig>;
