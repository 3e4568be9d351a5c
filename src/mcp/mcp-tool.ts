/**
 * An MCP server's tool as an agentwire Tool: offered to the model with the
 * server's own input schema, validated before the call, run through the
 * server's current session.
 */
import type { McpToolSummary } from "../../protocol/mcp.js";
import type { Tool, ToolAnnotations, ToolResult, ToolRunContext } from "../tools/tool.js";
import { jsonSchemaParameters } from "../tools/tool-parameters.js";
import { kindFromAnnotations } from "../tools/tool-display.js";
import { mcpResultText } from "./mcp-result-text.js";
import type { McpListedTool } from "./mcp-sdk.js";
import type { McpSession } from "./mcp-session.js";

/** What a tool needs from the connection it belongs to. */
export interface McpToolHost {
  readonly serverName: string;
  /** The definition's per-call limit; else the conversation's toolTimeoutMs applies. */
  readonly timeoutMs?: number;
  readonly maxOutputBytes: number;
  /** The live session, or undefined (with the reason) while the server is not connected. */
  session(): McpSession | { down: string };
  /** A call failed because the link broke (not an answer from the server): reconnect. */
  linkFailed(session: McpSession, error: unknown): void;
}

export interface McpTool extends Tool {
  readonly mcpName: string;
  /** The server it belongs to (a conversation's server hides the server-wide one of the same name). */
  readonly mcpServer: string;
  readonly summary: McpToolSummary;
}

export function createMcpTool(listed: McpListedTool, exposedName: string, host: McpToolHost): McpTool {
  const { $schema: _dropped, ...inputSchema } = listed.inputSchema as Record<string, unknown>;
  const annotations: ToolAnnotations = {};
  if (typeof listed.annotations?.readOnlyHint === "boolean") annotations.readOnlyHint = listed.annotations.readOnlyHint;
  if (typeof listed.annotations?.destructiveHint === "boolean") annotations.destructiveHint = listed.annotations.destructiveHint;
  const description = listed.description ?? listed.title ?? listed.annotations?.title ?? `Tool "${listed.name}" of MCP server "${host.serverName}".`;
  return {
    name: exposedName,
    mcpName: listed.name,
    mcpServer: host.serverName,
    description,
    parameters: jsonSchemaParameters({ type: "object", ...inputSchema }),
    // Some model APIs refuse an object schema without `properties` (a tool that takes no arguments).
    inputSchema: { type: "object", properties: {}, ...inputSchema },
    annotations,
    source: "mcp",
    kind: kindFromAnnotations(annotations),
    title: listed.title ?? listed.annotations?.title ?? exposedName,
    summary: { name: exposedName, mcpName: listed.name, description, annotations: { ...annotations } },
    run: (args, context) => runMcpTool(host, listed.name, args, context),
  };
}

async function runMcpTool(host: McpToolHost, mcpName: string, args: Record<string, unknown>, context: ToolRunContext): Promise<ToolResult> {
  if (context.signal.aborted) return { success: false, output: "[interrupted before the call started]" };
  const session = host.session();
  if ("down" in session) return { success: false, output: `[MCP server "${host.serverName}" is not connected: ${session.down}]` };
  const timeoutMs = host.timeoutMs ?? context.timeoutMs;
  try {
    const result = await session.callTool(mcpName, args, {
      signal: context.signal,
      timeoutMs,
      onProgress: (line) => context.onOutput("stdout", line),
      ...(context.requestInput ? { caller: { serverName: host.serverName, requestInput: context.requestInput } } : {}),
    });
    const output = mcpResultText(result, host.maxOutputBytes);
    // isError: the tool ran and reports a failure; the model reads why.
    return { success: result.isError !== true, output: output === "" && result.isError === true ? "[the tool reported an error]" : output };
  } catch (error) {
    if (context.signal.aborted) return { success: false, output: "[interrupted; the MCP server was asked to cancel the call]" };
    if (session.isTimeout(error)) return { success: false, output: `[timed out after ${timeoutMs} ms; the MCP server was asked to cancel the call]` };
    if (!session.isServerAnswer(error)) host.linkFailed(session, error);
    return { success: false, output: `[MCP server "${host.serverName}" failed the call: ${session.explain(error)}]` };
  }
}
