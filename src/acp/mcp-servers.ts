/**
 * The MCP servers an editor passes with session/new and session/load.
 *
 * agentwire's MCP servers are server-wide (mcp.add: every conversation of
 * the server is offered their tools; there is no per-conversation server).
 * The closest honest mapping: add each under the name `acp-NAME` for as long
 * as this `agentwire acp` process runs, and remove the ones it added when it
 * exits. mcp.add also keeps a server in the data dir; the removal at exit
 * takes it out again (a process killed with SIGKILL leaves it there, for
 * `agentwire mcp remove acp-NAME`).
 */
import { RequestError } from "@agentclientprotocol/sdk";
import type * as acp from "@agentclientprotocol/sdk";
import type { AgentwireClient, McpAddParams } from "../../clients/typescript/index.js";

/** `acp-` and the editor's name, in the alphabet and length agentwire's names allow. */
export function mcpServerName(name: string): string {
  return `acp-${name.replace(/[^A-Za-z0-9_-]/g, "_")}`.slice(0, 32);
}

export function mcpDefinition(server: acp.McpServer, index: number): McpAddParams["server"] {
  if ("type" in server && server.type === "sse") {
    throw RequestError.invalidParams({ path: `mcpServers[${index}].type` }, `mcpServers[${index}]: SSE MCP servers are not supported (mcpCapabilities.sse is false); use http or stdio`);
  }
  if ("url" in server) {
    const headers = Object.fromEntries(server.headers.map((h) => [h.name, h.value]));
    return { type: "http", url: server.url, ...(server.headers.length > 0 ? { headers } : {}) };
  }
  const env = Object.fromEntries(server.env.map((e) => [e.name, e.value]));
  return { command: server.command, ...(server.args.length > 0 ? { args: server.args } : {}), ...(server.env.length > 0 ? { env } : {}) };
}

export class AcpMcpServers {
  /** Names this process added (and removes at exit). */
  readonly #added = new Set<string>();

  constructor(private readonly client: AgentwireClient) {}

  /** Adds those not already there (by name); the first failure is the request's error. */
  async attach(servers: readonly acp.McpServer[]): Promise<void> {
    if (servers.length === 0) return;
    const definitions = servers.map((s, i) => ({ name: mcpServerName(s.name), server: mcpDefinition(s, i) }));
    const present = new Set((await this.client.mcp.list()).servers.map((s) => s.name));
    for (const { name, server } of definitions) {
      if (present.has(name) || this.#added.has(name)) continue;
      await this.client.mcp.add({ name, server });
      this.#added.add(name);
    }
  }

  async detachAll(): Promise<void> {
    for (const name of this.#added) await this.client.mcp.remove({ name }).catch(() => {});
    this.#added.clear();
  }
}
