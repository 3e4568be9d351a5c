/**
 * An MCP server's tool as an agentwire Tool: offered to the model with the
 * server's own input schema, validated before the call, run through the
 * server's current session.
 */
import * as z from "zod";
import type { McpToolSummary } from "../../protocol/mcp.js";
import type { Tool, ToolAnnotations, ToolResult, ToolRunContext } from "../tools/tool.js";
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

/** Any object: what validation falls back to when the server's schema cannot be converted. */
const ANY_OBJECT = z.record(z.string(), z.unknown());

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
    parameters: argumentsSchema(inputSchema),
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

/**
 * Validation from the server's JSON Schema with zod's converter. Where it
 * cannot convert the schema (a `$ref` to draft-07 `definitions`, a keyword it
 * does not know) any object passes and the server's own validation is the
 * check — better than refusing a tool the server would run. The arguments
 * are checked, never rewritten: what the model sent is what the server gets.
 */
function argumentsSchema(inputSchema: Record<string, unknown>): z.ZodType<Record<string, unknown>> {
  let converted: z.ZodType;
  try {
    converted = z.fromJSONSchema({ type: "object", ...inputSchema });
  } catch {
    return ANY_OBJECT;
  }
  return ANY_OBJECT.superRefine((value, ctx) => {
    const checked = converted.safeParse(value);
    if (!checked.success) for (const issue of checked.error.issues) ctx.addIssue({ ...issue } as z.core.$ZodRawIssue);
  });
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
