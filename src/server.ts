/**
 * Assembles a running agentwire server: store, conversation hub, agent,
 * dispatcher, HTTP + WebSocket on one port. Parts can be replaced (a
 * memory store, another provider, other tools) without touching the rest.
 */
import { createServer as createHttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { App } from "./app.js";
import { isLoopbackHost, type ServerConfig } from "./config.js";
import { Agent } from "./generation/agent.js";
import { recoverAfterRestart } from "./generation/recovery.js";
import { handlers } from "./handlers/handler-table.js";
import type { LlmProvider } from "./llm/provider.js";
import { createLogger, type Logger } from "./logging/logger.js";
import { Dispatcher } from "./rpc/dispatcher.js";
import { ConversationHub } from "./sessions/conversation-hub.js";
import type { ConversationStore } from "./store/conversation-store.js";
import { LowdbConversationStore } from "./store/lowdb-store.js";
import { createBuiltinRegistry, defaultTools } from "./tools/builtin-registry.js";
import type { ToolRegistry } from "./tools/tool.js";
import { handleHttp } from "./transport/http-routes.js";
import { attachWebSocket } from "./transport/websocket-server.js";

export interface ServerParts {
  store?: ConversationStore;
  provider?: () => Promise<LlmProvider>;
  tools?: ToolRegistry;
  log?: Logger;
}

export interface RunningServer {
  readonly url: string;
  readonly host: string;
  readonly port: number;
  readonly app: App;
  close(): Promise<void>;
}

/** A configuration the server refuses to start with; the message says what to change. */
export class ConfigError extends Error {}

export async function startServer(config: ServerConfig, parts: ServerParts = {}): Promise<RunningServer> {
  if (!isLoopbackHost(config.host) && !config.token) {
    throw new ConfigError(
      `refusing to listen on ${config.host} without a token: anyone who can reach it could run shell commands. ` +
        `Pass --token (or AGENTWIRE_TOKEN), or listen on 127.0.0.1.`,
    );
  }
  const log = parts.log ?? createLogger(config.logLevel);
  const store = parts.store ?? new LowdbConversationStore(config.dataDir);
  await store.open();

  const tools = parts.tools ?? createBuiltinRegistry(defaultTools());
  const provider =
    parts.provider ??
    (async () => {
      // Loaded on first use: the SDK is the heaviest import and a server that never generates never needs it.
      const { OpenAIProvider } = await import("./llm/openai-provider.js");
      return new OpenAIProvider({
        apiKey: config.openaiApiKey,
        baseURL: config.openaiBaseUrl,
        idleTimeoutMs: config.llmIdleTimeoutMs,
      });
    });
  const hub = new ConversationHub(store, config.eventLogSize, log, recoverAfterRestart);
  const agent = new Agent({ config, tools, log, provider });
  const dispatcher = new Dispatcher(handlers, log);
  const startedAt = Date.now();

  let app!: App;
  const http = createHttpServer((req, res) => handleHttp(req, res, startedAt));
  http.on("clientError", (_error, socket) => socket.destroy());
  const ws = attachWebSocket(http, config, log, dispatcher, () => app);
  app = { config, log, store, hub, agent, connections: ws.connections, startedAt };

  try {
    await new Promise<void>((resolve, reject) => {
      http.once("error", reject);
      http.listen(config.port, config.host, () => {
        http.off("error", reject);
        resolve();
      });
    });
  } catch (error) {
    await store.close();
    throw error;
  }
  const sweep =
    config.idleUnloadMs > 0
      ? setInterval(() => void hub.unloadIdle(config.idleUnloadMs), Math.min(60_000, config.idleUnloadMs)).unref()
      : undefined;
  const address = http.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  let closing: Promise<void> | undefined;
  return {
    url: `ws://${host}:${address.port}`,
    host,
    port: address.port,
    app,
    close: () => {
      closing ??= (async () => {
        if (sweep) clearInterval(sweep);
        await hub.shutdownAll();
        await ws.close();
        await new Promise<void>((resolve) => http.close(() => resolve()));
        await store.close();
      })();
      return closing;
    },
  };
}
