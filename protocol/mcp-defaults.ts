/**
 * The MCP servers' name pattern and bound: plain data, no zod. The command
 * line reads them on every start; config-mcp.ts builds the MCP servers'
 * schemas with them and re-exports them.
 */

export const MCP_SERVER_NAME_PATTERN = /^[A-Za-z0-9_-]{1,32}$/;

/** Most MCP servers one conversation may carry (conversation.create / conversation.update mcpServers). */
export const MAX_CONVERSATION_MCP_SERVERS = 8;
