/**
 * The public entry for embedders: a program that runs an agentwire server in
 * its own process (an editor's extension host, a test of a client) imports
 * it as `agentwire/embed` (package.json `exports`: the shipped bundle's
 * dist/bundle/embed.mjs, typed from this file). What it holds: the server,
 * its configuration at every default, the generated client, and the
 * in-memory link that connects the two without a socket, as MCP ships
 * InMemoryTransport. docs/clients.md#embedding-the-server shows it in use.
 */
import { AgentwireClient, type AgentwireClientOptions } from "../clients/typescript/index.js";
import { IN_MEMORY_URL, inMemoryWebSocket, type LinkAcceptor } from "./transport/in-memory-link.js";

export { AgentwireClient, type AgentwireClientOptions } from "../clients/typescript/index.js";
export { defaultConfig, type ServerConfig } from "./config/server-config.js";
export { ConfigError, startServer, type LinkServer, type RunningServer, type ServerParts } from "./server.js";
export {
  InMemoryClientSocket,
  inMemoryWebSocket,
  linkedPair,
  type InMemorySocketPair,
  type LinkAcceptor,
} from "./transport/in-memory-link.js";

/**
 * A client of `server` over an in-memory link, initialized (as
 * `AgentwireClient.connect` over a socket). Every frame is round-tripped
 * through JSON and delivered asynchronously, as a socket would carry it;
 * `client.close()` closes the link, not the server.
 */
export function connectInMemory(server: LinkAcceptor, options: Omit<AgentwireClientOptions, "WebSocket"> = {}): Promise<AgentwireClient> {
  return AgentwireClient.connect(IN_MEMORY_URL, { ...options, WebSocket: inMemoryWebSocket(server) });
}
