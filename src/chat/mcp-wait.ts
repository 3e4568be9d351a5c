/**
 * Before a chat's first step: wait for the server's MCP servers to finish
 * their first connection attempt, so that the model is offered their tools
 * from the first request (a one-shot `agentwire chat` with an embedded
 * server would otherwise step while they are still starting). Through the
 * protocol (mcp.list), so it works the same against a `--url` server, where
 * they have long settled. Bounded: a server still connecting after
 * MCP_WAIT_MS is reported and the chat goes on without its tools.
 */
import type { AgentwireClient, McpListResult } from "../../clients/typescript/index.js";

type McpServerInfo = McpListResult["servers"][number];

/** The longest a chat waits for MCP servers before its first step (documented in docs/chat.md). */
export const MCP_WAIT_MS = 20_000;
const POLL_MS = 100;

export interface McpWaitOptions {
  /** Default MCP_WAIT_MS. */
  timeoutMs?: number;
}

/**
 * Every MCP server once none is `connecting` (or the wait is over); undefined
 * when the server cannot say (mcp.list refused: an older server, or a token
 * without the scope), and the chat goes on as before.
 */
export async function waitForMcpServers(client: AgentwireClient, options: McpWaitOptions = {}): Promise<McpServerInfo[] | undefined> {
  const deadline = Date.now() + (options.timeoutMs ?? MCP_WAIT_MS);
  for (;;) {
    let servers: McpServerInfo[];
    try {
      ({ servers } = await client.mcp.list());
    } catch {
      return undefined;
    }
    // failed is settled too: the server retries it in the background, a chat does not wait for that.
    if (!servers.some((s) => s.state === "connecting") || Date.now() >= deadline) return servers;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** One line for each server whose tools the model will not be offered; nothing for those connected or disabled. */
export function mcpProblems(servers: readonly McpServerInfo[], timeoutMs = MCP_WAIT_MS): string[] {
  const lines: string[] = [];
  for (const s of servers) {
    if (s.state === "failed") lines.push(`MCP server "${s.name}" failed: ${s.error ?? "no reason given"}; its tools are not offered (it is retried in the background)`);
    if (s.state === "connecting") lines.push(`MCP server "${s.name}" is still connecting after ${timeoutMs / 1000} s; going on without its tools`);
  }
  return lines;
}
