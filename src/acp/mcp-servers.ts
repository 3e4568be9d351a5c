/**
 * The MCP servers an editor passes with session/new, session/load and
 * session/resume, as the conversation's own MCP servers
 * (conversation.create / conversation.update `mcpServers`): their tools are
 * offered to that session's conversation only, they run while it is loaded,
 * and they stop with it (or with the server). Nothing is added server-wide.
 */
import { RequestError } from "@agentclientprotocol/sdk";
import type * as acp from "@agentclientprotocol/sdk";
import type { ConversationCreateParams } from "../../clients/typescript/index.js";

type ConversationMcpServer = NonNullable<ConversationCreateParams["mcpServers"]>[number];

/** The editor's name in the alphabet and length agentwire's names allow. */
export function mcpServerName(name: string): string {
  return (name.replace(/[^A-Za-z0-9_-]/g, "_") || "server").slice(0, 32);
}

function conversationServer(server: acp.McpServer, index: number): ConversationMcpServer {
  if ("type" in server && server.type === "sse") {
    throw RequestError.invalidParams({ path: `mcpServers[${index}].type` }, `mcpServers[${index}]: SSE MCP servers are not supported (mcpCapabilities.sse is false); use http or stdio`);
  }
  const name = mcpServerName(server.name);
  if ("url" in server) {
    const headers = Object.fromEntries(server.headers.map((h) => [h.name, h.value]));
    return { name, type: "http", url: server.url, ...(server.headers.length > 0 ? { headers } : {}) };
  }
  const env = Object.fromEntries(server.env.map((e) => [e.name, e.value]));
  return { name, command: server.command, ...(server.args.length > 0 ? { args: server.args } : {}), ...(server.env.length > 0 ? { env } : {}) };
}

/** The editor's servers as conversation MCP servers; two whose names become the same are refused naming the second. */
export function conversationMcpServers(servers: readonly acp.McpServer[]): ConversationMcpServer[] {
  const seen = new Set<string>();
  return servers.map((server, index) => {
    const converted = conversationServer(server, index);
    if (seen.has(converted.name)) {
      throw RequestError.invalidParams({ path: `mcpServers[${index}].name` }, `mcpServers[${index}].name: another server is already named "${converted.name}" (names are kept to letters, digits, _ and -)`);
    }
    seen.add(converted.name);
    return converted;
  });
}
