/**
 * Assembles a running agentwire server: store, conversation hub, agent,
 * dispatcher, HTTP + WebSocket on one port. Parts can be replaced (a
 * memory store, another provider, other tools) without touching the rest.
 */
import { createServer as createHttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { homedir } from "node:os";
import { join } from "node:path";
import type { AgentwireConfig, LlmSettings } from "../protocol/config.js";
import { unknownPlaceholderMessage, unknownPlaceholders } from "../protocol/system-prompt-template.js";
import type { App, RequestContext } from "./app.js";
import { loadConfigSchema, partParsesWithoutSchema } from "./config/config-check.js";
import { FD_RESERVE, isLoopbackHost, openFileLimit, type ServerConfig } from "./config/server-config.js";
import { Agent } from "./generation/agent.js";
import { SubAgents } from "./generation/spawn-agent.js";
import { ModeSet } from "./generation/modes.js";
import { unknownModeMessage } from "../protocol/mode-table.js";
import { recoverAfterRestart } from "./generation/recovery.js";
import { requestError } from "./generation/wire-errors.js";
import { handlers } from "./handlers/handler-table.js";
import { newId } from "./ids.js";
import type { LlmProvider } from "./llm/provider.js";
import { ENV_PROVIDER, ProviderConfigError, ProviderRegistry, UnknownModelError, type ProviderFactory } from "./llm/provider-registry.js";
import { createLogger, type Logger } from "./logging/logger.js";
import { LazyHistoryIndex } from "./history/lazy-history-index.js";
import { McpManager, type McpManagerOptions } from "./mcp/mcp-manager.js";
import { loadInstanceId } from "./metrics/instance-id.js";
import { ServerMetrics } from "./metrics/server-metrics.js";
import { Dispatcher } from "./rpc/dispatcher.js";
import type { RemoteCaller } from "./cluster/cluster-node.js";
import { createConnection, type Connection } from "./sessions/connection.js";
import { RpcError } from "./rpc/rpc-error.js";
import { ConversationHub } from "./sessions/conversation-hub.js";
import { broadcastNotice } from "./sessions/server-notice.js";
import type { ConversationStore } from "./store/conversation-store.js";
import { createConfiguredStore } from "./store/configured-store.js";
import { isPostgresUrl } from "./store/postgres-url.js";
import { StoreFileError } from "./store/store-file-error.js";
import { StoreUnavailableError } from "./store/store-unavailable-error.js";
import { createToolRegistry, defaultTools } from "./tools/builtin-registry.js";
import { createLoadSkillTool } from "./skills/load-skill-tool.js";
import type { Tool, ToolRegistry } from "./tools/tool.js";
import { SERVER_VERSION } from "./server-version.js";
import { handleHttp } from "./transport/http-routes.js";
import type { Link } from "./transport/link.js";
import type { SocketThread } from "./transport/socket-thread.js";
import { openSession, type LinkSession, type SessionOptions } from "./transport/link-session.js";
import { attachWebSocket } from "./transport/websocket-server.js";
import { loadWs } from "./transport/ws-load.js";
import type { RuntimeTable } from "./runtimes/runtime-table.js";

export interface ServerParts {
  store?: ConversationStore;
  /**
   * Cluster mode (config.redis) details tests change: a key prefix of their
   * own in Redis and a shorter forwarding timeout.
   */
  cluster?: { keyPrefix?: string; forwardTimeoutMs?: number };
  /** The LlmProvider of the provider named "default" (tests point it at a fake); the others still come from providerFactory. */
  provider?: () => Promise<LlmProvider>;
  /** Builds each provider's LlmProvider on its first use (default: the openai SDK, see defaultProviderFactory). */
  providerFactory?: ProviderFactory;
  tools?: ToolRegistry;
  log?: Logger;
  /** MCP connection settings (timeouts, reconnection backoff); tests shorten them. */
  mcp?: McpManagerOptions;
  /** The built web client served on / (default: dist/web next to the code); tests build their own. */
  webDir?: string;
  /**
   * false: a client command's own server, which stops with the command: the
   * data dir's SERVER file says so, and other commands do not connect to it;
   * its store's start-up check waits (COMMAND_STORE_SCAN_DELAY_MS).
   * Default true: they do.
   */
  shared?: boolean;
  /**
   * false: no socket at all, so no address: clients come through acceptLink
   * only (the in-memory link). A client command's own server, which its
   * command speaks to in memory: listening was a tokenless loopback port
   * nothing said where to find, and it cost the command Node's dns (with
   * c-ares reading resolv.conf) and cluster modules and the bind, ~3 ms.
   * Never shared (its data dir's SERVER file says so); cluster mode needs an
   * address. Default true.
   */
  listen?: boolean;
}

/** A server without an address (ServerParts.listen false): served through acceptLink only. */
export interface LinkServer {
  readonly app: App;
  /**
   * Serve a client over any message-passing link (the WebSocket server does
   * this for each socket; tests and embedders use an in-memory pair). Call
   * `closed()` on the returned session when the link closes.
   */
  acceptLink(link: Link): LinkSession;
  close(): Promise<void>;
}

/** A server listening for HTTP and WebSocket clients on its host and port, besides acceptLink. */
export interface RunningServer extends LinkServer {
  readonly url: string;
  readonly host: string;
  readonly port: number;
}

/**
 * A client command's own server (`shared: false`) begins the lowdb store's
 * start-up check of every stored conversation this long after it opens the
 * store, not at once: a one-shot `agentwire chat "…"` has answered and
 * stopped by then (with hundreds of conversations stored, the check's reads
 * slowed it by tens of ms), while a longer session (a REPL, a slow model)
 * still gets it, run while it waits.
 */
export const COMMAND_STORE_SCAN_DELAY_MS = 1000;

/** A configuration the server refuses to start with; the message says what to change. */
export class ConfigError extends Error {}

/**
 * Builds each provider's LlmProvider. Loaded on first use: the SDK is the
 * heaviest import and a server that never generates never needs it.
 */
function defaultProviderFactory(llm: Pick<LlmSettings, "idleTimeoutMs">): ProviderFactory {
  return async (endpoint) => {
    // Loaded on first use: the SDK is the heaviest import and a server that never generates never needs it.
    const { createWireProvider } = await import("./llm/create-provider.js");
    return createWireProvider(endpoint.wire, {
      apiKey: endpoint.apiKey,
      baseURL: endpoint.baseUrl,
      headers: endpoint.headers,
      idleTimeoutMs: llm.idleTimeoutMs,
    });
  };
}

/** The providers from the configuration; one that cannot work (or a default model naming none) stops the start. */
function providerRegistry(config: Pick<AgentwireConfig, "providers" | "defaultProvider" | "llm" | "model"> & { runtimes?: AgentwireConfig["runtimes"] }, parts: ServerParts): ProviderRegistry {
  const factory = parts.providerFactory ?? defaultProviderFactory(config.llm);
  const override = parts.provider;
  let registry: ProviderRegistry;
  try {
    registry = new ProviderRegistry({
      providers: config.providers,
      defaultProvider: config.defaultProvider,
      envEndpoint: { baseUrl: config.llm.baseUrl, apiKey: config.llm.apiKey },
      runtimes: Object.keys(config.runtimes ?? {}),
      factory: override ? (endpoint) => (endpoint.name === ENV_PROVIDER ? override() : factory(endpoint)) : factory,
    });
    if (config.model !== undefined) registry.resolve(config.model);
  } catch (error) {
    if (error instanceof ProviderConfigError) throw new ConfigError(error.message);
    if (error instanceof UnknownModelError) throw new ConfigError(`model: ${error.message}`);
    throw error;
  }
  return registry;
}

export function startServer(config: ServerConfig, parts: ServerParts & { listen: false }): Promise<LinkServer>;
export function startServer(config: ServerConfig, parts?: ServerParts): Promise<RunningServer>;
export async function startServer(config: ServerConfig, parts: ServerParts = {}): Promise<LinkServer | RunningServer> {
  const { server: settings, limits } = config;
  const listens = parts.listen !== false;
  if (listens && !isLoopbackHost(settings.host) && !settings.token) {
    throw new ConfigError(
      `refusing to listen on ${settings.host} without a token: anyone who can reach it could run shell commands. ` +
        `Pass --token (or AGENTWIRE_TOKEN), or listen on 127.0.0.1.`,
    );
  }
  // Checked before anything is opened: a template naming an unknown placeholder must not reach a model.
  const { systemPrompt } = config.conversations;
  if (systemPrompt) {
    const unknown = unknownPlaceholders(systemPrompt);
    if (unknown.length > 0) throw new ConfigError(`conversations.systemPrompt: ${unknownPlaceholderMessage(unknown)}`);
  }
  // The modes, with the configuration's changes; the default mode new conversations get must be one of them.
  const modes = new ModeSet(config.modes);
  const startMode = config.conversations.settings.mode;
  if (startMode !== undefined && !modes.get(startMode)) {
    throw new ConfigError(`conversations.settings.mode: ${unknownModeMessage(startMode, modes.list).replace("; see modes.list", "; add it under `modes`")}`);
  }
  if (settings.redis && !listens) throw new ConfigError("--redis needs a server that listens: the other instances dial its address");
  // Several instances on one lowdb data dir would lose writes (one process per data dir): cluster mode needs a shared store.
  if (settings.redis && !parts.store && !isPostgresUrl(settings.store)) {
    throw new ConfigError(
      "--redis needs a store several instances can share (--store postgres://…); the embedded lowdb store's data dir belongs to one process",
    );
  }
  // Providers are parsed as data (config-check.ts); one the data cannot accept is refused in zod's words, so load its schema first.
  if (!partParsesWithoutSchema("providers", config.providers ?? {})) await loadConfigSchema();
  const providers = providerRegistry(config, parts);
  const log = parts.log ?? createLogger(settings.logLevel, { format: settings.logFormat });
  const fdLimit = openFileLimit();
  if (fdLimit !== undefined && limits.maxConnections + FD_RESERVE > fdLimit) {
    log.warn(
      `--max-connections ${limits.maxConnections} leaves fewer than ${FD_RESERVE} of the ${fdLimit} open files this process may have ` +
        `for the store, tools and model requests; raise the limit (ulimit -n) or lower --max-connections`,
    );
  }
  // Before the store opens: a tool configuration that cannot work stops the start with nothing to undo.
  const subAgents = new SubAgents(limits);
  const builtinTools = parts.tools
    ? []
    : [
        ...defaultTools({ envAllow: config.tools.envAllow, files: config.tools.files, shell: { command: config.tools.shell.command } }),
        createLoadSkillTool(),
        subAgents.tool as unknown as Tool,
      ];
  const mcp = new McpManager(
    { dataDir: settings.dataDir, mcpServers: config.mcpServers, toolEnvAllow: config.tools.envAllow, maxMcpServers: limits.maxMcpServers, maxConversationMcpServers: limits.maxConversationMcpServers },
    log,
    parts.mcp,
  );
  const tools = parts.tools ?? createToolRegistry([...builtinTools, ...(await configuredToolsOf(config, builtinTools))], [mcp]);
  const store =
    parts.store ?? (await createConfiguredStore(settings, limits, log, parts.shared === false ? { startupScanDelayMs: COMMAND_STORE_SCAN_DELAY_MS } : {}));
  await store.open().catch((error: unknown) => {
    // A store file that cannot be used at start (LOCK, index.json) stops the start with one line, not a stack trace.
    throw error instanceof StoreFileError ? new StoreUnavailableError(`could not open the store: ${error.message}`, { cause: error }) : error;
  });
  // After the store holds the data dir: one process per data dir, so instance.json has one writer.
  const instanceId = await loadInstanceId(settings.dataDir, log);
  const startedAt = Date.now();
  const connections = new Set<Connection>();
  // An MCP server going down or coming back concerns every client of this instance, not one conversation.
  mcp.onNotice((notice) => broadcastNotice(connections, notice));
  let hub!: ConversationHub;
  const metrics = new ServerMetrics(
    {
      connections: () => connections.size,
      conversationsLoaded: () => hub.loadedCount(),
      conversationsActive: () => hub.activeCount(),
      generationsRunning: () => hub.generationCount(),
      pendingToolCalls: () => hub.pendingToolCount(),
    },
    { instanceId, version: SERVER_VERSION, startedAt },
    (name) => tools.get(name) !== undefined,
  );

  hub = new ConversationHub(store, limits, log, recoverAfterRestart, metrics);
  // A conversation's own MCP servers run while it is loaded here.
  hub.lifecycle = {
    loaded: (runtime) => {
      if (runtime.mcpServers.length > 0) void mcp.conversations.attach(runtime.id, runtime.mcpServers);
    },
    dropped: (runtime) => mcp.conversations.detach(runtime.id),
  };
  // Each runtime's process starts with the first conversation on it, and stops with the server.
  // Without a configured runtime the runtimes' code (~27 KB) is never loaded.
  const runtimes: RuntimeTable | undefined =
    Object.keys(config.runtimes ?? {}).length > 0 ? new (await import("./runtimes/runtime-table.js")).RuntimeTable(config.runtimes!) : undefined;
  const agent = new Agent({ model: config.model, systemPrompt, limits, tools, log, providers, modes, runtimes, conversationMcp: mcp.conversations });
  subAgents.attach({ hub, agent });
  const dispatcher = new Dispatcher({
    handlers,
    log,
    limits: { maxBatch: limits.maxBatch, maxDepth: limits.maxDepth, maxReplyBytes: limits.maxReplyBytes },
    translateError: requestError(log),
  });
  let app!: App;
  const session: Omit<SessionOptions, "log"> = {
    dispatcher,
    app: () => app,
    initializeTimeoutMs: limits.initializeTimeoutMs,
    maxInFlight: limits.maxInFlightPerConnection,
    onFrameSent: () => metrics.frameSent(),
  };
  /** A socket's link served by a session, counted with every connection. */
  const openSocketLink = (link: Link, id: string) => {
    const s = openSession(link, id, { ...session, log });
    connections.add(s.connection);
    return {
      receive: (frame: string | Buffer) => s.receive(frame),
      closed: () => {
        connections.delete(s.connection);
        s.closed();
      },
    };
  };
  // Raw TCP connections (upgraded or not) beyond this are dropped at once; the
  // headroom over the WebSocket cap keeps /healthz answering when it is full.
  const maxTcpConnections = limits.maxConnections + 64;
  // With server.socketThread the sockets live in their own thread (started where the server would listen).
  const http = !listens || settings.socketThread ? undefined : createHttpServer((req, res) => handleHttp(req, res, { startedAt, metrics, token: settings.token, webDir: parts.webDir }));
  let ws: { close(): Promise<void> } | undefined;
  if (http) {
    http.on("clientError", (_error, socket) => socket.destroy());
    http.maxConnections = maxTcpConnections;
    ws = attachWebSocket(http, config, log, { count: () => connections.size, open: openSocketLink }, () => metrics.slowConsumerDropped());
  }
  let socketThread: SocketThread | undefined;
  // Nothing is read (or even loaded) here: the index is built at the first history.* call.
  const history = LazyHistoryIndex.of(config.history, log, process.env, homedir(), join(settings.dataDir, "history-index.json"));
  app = { config, log, store, hub, agent, mcp, history, connections, startedAt, instanceId, metrics, cluster: null };

  if (settings.redis) {
    // Joined before listening: no request may be served as a lone instance.
    try {
      app.cluster = await joinCluster(settings.redis, app, parts);
    } catch (error) {
      await store.close();
      throw error instanceof ConfigError ? error : new ConfigError((error as Error).message);
    }
  }
  let address: { address: string; family: string; port: number } | undefined;
  try {
    if (http) {
      // A server others connect to is ready for their upgrades when it says it listens; a client command's own
      // server, spoken to in memory, loads ws only if a socket ever asks to upgrade (ws-load.ts).
      if (parts.shared !== false) await loadWs();
      await new Promise<void>((resolve, reject) => {
        http.once("error", reject);
        http.listen(settings.port, settings.host, () => {
          http.off("error", reject);
          resolve();
        });
      });
      address = http.address() as AddressInfo;
    } else if (listens) {
      const { startSocketThread } = await import("./transport/socket-thread.js");
      socketThread = await startSocketThread({
        // What the socket layer reads, and nothing else of the configuration (no provider's key crosses).
        data: {
          settings: {
            server: { host: settings.host, port: settings.port, token: settings.token, allowOrigins: settings.allowOrigins, heartbeatMs: settings.heartbeatMs },
            limits: {
              maxPayloadBytes: limits.maxPayloadBytes,
              maxBufferedBytes: limits.maxBufferedBytes,
              maxConnections: limits.maxConnections,
              maxConnectionsPerAddress: limits.maxConnectionsPerAddress,
            },
          },
          maxTcpConnections,
          startedAt,
          webDir: parts.webDir,
        },
        log,
        metrics,
        open: openSocketLink,
      });
      ws = socketThread;
      address = socketThread.address;
    }
  } catch (error) {
    await app.cluster?.close();
    await store.close();
    throw error;
  }
  const host = address && (address.family === "IPv6" ? `[${address.address}]` : address.address);
  if (app.cluster && address) {
    try {
      await app.cluster.announce(`ws://${host}:${address.port}`);
    } catch (error) {
      await (http ? new Promise<void>((resolve) => http.close(() => resolve())) : socketThread!.close());
      await app.cluster.close();
      await store.close();
      throw new ConfigError(`announcing this instance in Redis failed: ${(error as Error).message}`);
    }
  }
  // Where the client commands find this server (data-dir-lock.ts): an address they can dial, never the token.
  await store
    .advertise?.(
      parts.shared === false || !address
        ? { shared: false }
        : { shared: true, url: `ws://${dialableHost(host!)}:${address.port}`, tokenRequired: settings.token !== undefined },
    )
    .catch((error: unknown) => log.warn(`could not say where this server listens beside its data dir's LOCK; client commands will not find it`, error));
  // In the background: `listening` never waits for an MCP server to start. prom-client loads at the first scrape.
  void mcp.start();
  const sweep =
    limits.idleUnloadMs > 0
      ? setInterval(() => void hub.unloadIdle(limits.idleUnloadMs), Math.min(60_000, limits.idleUnloadMs)).unref()
      : undefined;
  /** Links served through acceptLink (not sockets): closed with the server like sockets are. */
  const links = new Map<Link, LinkSession>();
  let closing: Promise<void> | undefined;
  const server: LinkServer = {
    app,
    acceptLink(link) {
      const s = openSession(link, newId("k"), { ...session, log });
      const served: LinkSession = {
        connection: s.connection,
        receive: (frame) => s.receive(frame),
        closed: () => {
          links.delete(link);
          socketThread?.otherLinks(links.size);
          connections.delete(s.connection);
          s.closed();
        },
      };
      // The same cap as for sockets: every connection counts, whatever carries it.
      if (connections.size >= limits.maxConnections || closing) {
        link.close(1013, `the server has its maximum of ${limits.maxConnections} connections (--max-connections)`);
        s.closed();
        return served;
      }
      connections.add(s.connection);
      links.set(link, served);
      socketThread?.otherLinks(links.size);
      return served;
    },
    close: () => {
      closing ??= (async () => {
        if (sweep) clearInterval(sweep);
        // First: no client command should pick a server that is going away.
        await store.advertise?.(null).catch(() => undefined);
        await hub.shutdownAll();
        await runtimes?.close();
        // After the generations stopped (their last events still go out under the leases); then the leases are given up.
        await app.cluster?.close();
        await mcp.close();
        history.close();
        for (const [link, served] of [...links]) {
          link.close(1001, "server shutting down");
          served.closed();
        }
        await ws?.close();
        if (http) await new Promise<void>((resolve) => http.close(() => resolve()));
        await store.close();
      })();
      return closing;
    },
  };
  if (!address) return server;
  const running: RunningServer = Object.assign(server, { url: `ws://${host}:${address.port}`, host: host!, port: address.port });
  return running;
}

/**
 * The configuration's custom and web tools (configured-tools.ts), loaded
 * only when it has some: without them (the default) configuredTools is []
 * and its code (the web tools', with their private-network tables, built as
 * they load) is never loaded.
 */
async function configuredToolsOf(config: ServerConfig, builtinTools: Tool[]): Promise<Tool[]> {
  const { custom, web } = config.tools;
  if (custom.length === 0 && !web.fetch?.enabled && !web.search?.enabled) return [];
  const { configuredTools } = await import("./tools/configured-tools.js");
  return configuredTools(config.tools, builtinTools);
}

/** A wildcard listening address (every interface) as a local client dials it. */
function dialableHost(host: string): string {
  if (host === "0.0.0.0") return "127.0.0.1";
  if (host === "[::]") return "[::1]";
  return host;
}

/**
 * Cluster mode: join the instances on the Redis at `url`. The cluster code
 * (and ioredis) is imported only here, so a single instance never loads it.
 */
async function joinCluster(url: string, app: App, parts: ServerParts) {
  const { ClusterNode } = await import("./cluster/cluster-node.js");
  const { hub, agent, log, config } = app;
  // A forwarded request runs through the same handlers as a local one, as the owner, on a connection of its own
  // (nothing is sent on it: the answer goes back to the instance that forwarded it).
  const forwarded = createConnection("forwarded", () => {});
  const translate = requestError(log);
  forwarded.initialized = true;
  forwarded.forwarded = true;
  // The connection a forwarded request came from, as its handler sees it: its id and client name, and a send that
  // reaches it through its instance (client_tool_call; tool.result checks the id).
  const standIn = (caller: RemoteCaller): Connection => {
    const connection = createConnection(caller.connectionId, caller.send);
    connection.initialized = true;
    if (caller.clientName !== undefined) connection.clientInfo = { name: caller.clientName };
    return connection;
  };
  const node = await ClusterNode.start({
    url,
    instanceId: app.instanceId,
    leaseMs: config.server.ownerLeaseMs,
    keyPrefix: parts.cluster?.keyPrefix ?? config.server.redisPrefix,
    forwardTimeoutMs: parts.cluster?.forwardTimeoutMs,
    hub,
    store: app.store,
    log,
    runLocal: async (method, params, caller) => {
      const handler = handlers[method as keyof typeof handlers] as ((p: unknown, c: RequestContext) => unknown) | undefined;
      if (!handler) throw RpcError.methodNotFound(method);
      try {
        return await handler(params, { connection: caller ? standIn(caller) : forwarded, app, afterReply: [] });
      } catch (error) {
        // As the dispatcher would answer it (a full disk is STORAGE_ERROR, not an internal fault), for the sender to pass on.
        throw translate(error) ?? error;
      }
    },
    deliver: (connectionId, frame) => {
      for (const connection of app.connections) if (connection.id === connectionId) connection.send(frame);
    },
    remoteConnectionClosed: (connectionId) => agent.clientTools.closed(connectionId),
    resumePending: (runtime) => {
      try {
        agent.resume(runtime);
      } catch (error) {
        log.warn(`the pending tool calls of conversation ${runtime.id} could not be offered again`, error);
      }
    },
  });
  hub.cluster = node;
  agent.generationHooks = { started: (c, g) => node.generationStarted(c, g) };
  app.metrics.cluster = { nodeId: node.nodeId, ownedCount: () => node.ownedCount, instances: () => node.instancesSeen };
  log.info(`joined the cluster on ${url.replace(/\/\/[^@/]*@/, "//***@")} as ${node.nodeId}`);
  return node;
}
