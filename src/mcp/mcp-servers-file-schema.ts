/**
 * The zod schema of the saved MCP servers file (mcp-servers-file.ts),
 * imported when a data dir first has the file: neither zod nor the MCP
 * servers' schemas load on the start path.
 */
import * as z from "zod";
import { McpServersConfig } from "../../protocol/config-mcp.js";

export const McpServersFileShape = z.strictObject({ mcpServers: McpServersConfig });

/** Why a file does not hold valid server definitions, on one line. */
export function fileShapeProblem(error: z.ZodError): string {
  return z.prettifyError(error).replace(/\n/g, " ");
}
