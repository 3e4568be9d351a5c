/**
 * Every MCP server of this agentwire process — from the configuration file
 * and from mcp.add — and their tools, offered to the registry as a
 * ToolProvider whose revision moves whenever a server's tools change.
 * Connecting happens in the background: start-up never waits for a server,
 * and a server that fails is retried without troubling the agent. Each
 * server's start is its own: mcp.add waits for its server's first attempt
 * only, never for another server's (a silent one holds only itself).
 * Servers are bounded (maxMcpServers): each may be a process with pipes.
 */
import type { McpServerDefinition, McpServersConfig } from "../../protocol/config-mcp.js";
import type { McpProbeResult, McpServerInfo, McpStatusSummary } from "../../protocol/mcp.js";
import type { Logger } from "../logging/logger.js";
import { RpcError } from "../rpc/rpc-error.js";
import { toolProcessEnvironment } from "../tools/process-group.js";
import { toolEnvironment } from "../tools/tool-environment.js";
import type { Tool, ToolProvider } from "../tools/tool.js";
import { ConversationMcpServers } from "./conversation-mcp-servers.js";
import { McpConnection, type McpBackoff, type McpConnectionSettings, type McpStateNotice } from "./mcp-connection.js";
import { McpServersFile } from "./mcp-servers-file.js";
import { McpSession, transportKind } from "./mcp-session.js";

export interface McpManagerOptions {
  /** Time for a server to start and answer initialize (and list its tools). Default 30000 ms. */
  connectTimeoutMs?: number;
  /** Reconnection delays; tests shorten them. Default 1 s doubling to 60 s. */
  backoff?: Partial<McpBackoff>;
  /** Result text kept for the model per call. Default 64 KiB. */
  maxOutputBytes?: number;
}

export interface McpManagerConfig {
  dataDir: string;
  /** From the configuration file; cannot be removed with mcp.remove. */
  mcpServers: McpServersConfig;
  /** Extra environment names tools may see (tools.envAllow). */
  toolEnvAllow: readonly string[];
  /** Servers declared at most, configuration file and mcp.add together (limits.maxMcpServers). */
  maxMcpServers: number;
  /** Conversation MCP servers running at most, all conversations together (limits.maxConversationMcpServers). */
  maxConversationMcpServers?: number;
}

export class McpManager implements ToolProvider {
  private readonly connections = new Map<string, McpConnection>();
  /**
   * Saved servers not started because the limit was reached at start (it was
   * lowered, or the configuration file gained servers): kept in the saved
   * file, not run; mcp.remove forgets them.
   */
  private readonly overLimit = new Map<string, McpServerDefinition>();
  private readonly file: McpServersFile;
  private readonly settings: McpConnectionSettings;
  private changes = 0;
  private loaded: Promise<void> | undefined;
  /** mcp.add / mcp.remove run one at a time, so the saved file and the live set agree. */
  private mutations: Promise<unknown> = Promise.resolve();
  private closed = false;
  private env: Record<string, string> | undefined;
  private readonly noticeListeners = new Set<(notice: McpStateNotice) => void>();
  /** The servers of single conversations (conversation.create mcpServers). */
  readonly conversations: ConversationMcpServers;

  constructor(
    private readonly config: McpManagerConfig,
    private readonly log: Logger,
    options: McpManagerOptions = {},
  ) {
    this.file = new McpServersFile(config.dataDir);
    this.settings = {
      baseEnv: () => {
        // Computed on first use: starting the reaper (see process-group.ts) only when a stdio server starts.
        this.env ??= toolProcessEnvironment(toolEnvironment(process.env, config.toolEnvAllow));
        return this.env;
      },
      connectTimeoutMs: options.connectTimeoutMs ?? 30_000,
      backoff: { initialMs: options.backoff?.initialMs ?? 1000, maxMs: options.backoff?.maxMs ?? 60_000 },
      maxOutputBytes: options.maxOutputBytes ?? 64 * 1024,
      log,
      changed: () => this.changes++,
      notice: (notice) => {
        for (const listener of [...this.noticeListeners]) listener(notice);
      },
    };
    // A conversation's server concerns that conversation alone: no server-wide notice, and the server-wide tool list stays as it is.
    this.conversations = new ConversationMcpServers(
      { ...this.settings, changed: () => {}, notice: () => {} },
      config.maxConversationMcpServers ?? 64,
    );
  }

  /** Call `listener` when a server goes down or comes back; returns the disposer. */
  onNotice(listener: (notice: McpStateNotice) => void): () => void {
    this.noticeListeners.add(listener);
    return () => this.noticeListeners.delete(listener);
  }

  /** Reads the saved servers and starts connecting to every server in the background. Never throws. */
  start(): Promise<void> {
    this.loaded ??= (async () => {
      const max = this.config.maxMcpServers;
      const skipped: string[] = [];
      for (const [name, definition] of Object.entries(this.config.mcpServers)) {
        if (this.connections.size < max) this.open(name, definition, "config");
        else skipped.push(`"${name}" (configuration file)`);
      }
      const saved = await this.file.load();
      if (saved.problem) this.log.error(`${this.file.path} ${saved.problem}; its servers are not started (the file is set aside at the next mcp.add or mcp.remove)`);
      let shadowed = false;
      for (const [name, definition] of Object.entries(saved.servers)) {
        if (this.connections.has(name) || Object.hasOwn(this.config.mcpServers, name)) {
          // `agentwire mcp add` puts a server in the configuration file and mcp.add's it on the running server:
          // the file's is the one kept, so the saved copy goes (else it would come back once the file drops it).
          this.log.warn(`MCP server "${name}" from ${this.file.path} is also in the configuration file; the configuration file's is used and the saved copy dropped`);
          shadowed = true;
          continue;
        }
        if (this.connections.size < max) {
          this.open(name, definition, "added");
        } else {
          this.overLimit.set(name, definition);
          skipped.push(`"${name}" (${this.file.path})`);
        }
      }
      if (shadowed && !saved.problem) {
        await this.file.save(this.savedDefinitions()).catch((error: unknown) => this.log.error(`could not write ${this.file.path}`, error));
      }
      if (skipped.length > 0) {
        this.log.error(
          `${skipped.length} MCP servers are not started: over limits.maxMcpServers (${max}): ${skipped.join(", ")}; raise the limit, or remove servers (mcp.remove keeps saved ones from coming back)`,
        );
      }
      for (const connection of this.connections.values()) void connection.start();
    })().catch((error: unknown) => this.log.error("starting the MCP servers failed", error));
    return this.loaded;
  }

  list(): Tool[] {
    return [...this.connections.values()].flatMap((c) => c.tools);
  }

  revision(): number {
    return this.changes;
  }

  async servers(): Promise<McpServerInfo[]> {
    await this.start();
    return [...this.connections.values()].map((c) => c.info());
  }

  status(): McpStatusSummary {
    const infos = [...this.connections.values()].map((c) => c.info());
    return {
      servers: infos.length,
      connected: infos.filter((i) => i.state === "connected").length,
      failed: infos.filter((i) => i.state === "failed").length,
      tools: infos.reduce((sum, i) => sum + i.tools.length, 0),
    };
  }

  /**
   * Saves the server, starts it, and answers after its first connection
   * attempt. Only the saving is serialised with other mcp.add / mcp.remove
   * calls; the attempt is not, so a server slow to answer initialize delays
   * its own mcp.add and no other.
   */
  async add(name: string, definition: McpServerDefinition): Promise<McpServerInfo> {
    const connection = await this.mutate(async () => {
      const existing = this.connections.get(name);
      if (existing || this.overLimit.has(name)) {
        const where = existing?.origin === "config" ? "the configuration file" : "mcp.add";
        throw RpcError.invalidParam("name", `an MCP server named "${name}" already exists (from ${where}); pick another name or mcp.remove it first`);
      }
      const max = this.config.maxMcpServers;
      const declared = this.connections.size + this.overLimit.size;
      if (declared >= max) {
        throw RpcError.limitExceeded(
          `${declared} MCP servers are declared, the most this server keeps (limits.maxMcpServers is ${max}); mcp.remove one first or raise the limit`,
          "maxMcpServers",
          max,
          declared + 1,
        );
      }
      await this.save({ ...this.savedDefinitions(), [name]: definition });
      return this.open(name, definition, "added");
    });
    await connection.start();
    return connection.info();
  }

  remove(name: string): Promise<void> {
    return this.mutate(async () => {
      if (this.overLimit.has(name)) {
        const rest = this.savedDefinitions();
        delete rest[name];
        await this.save(rest);
        this.overLimit.delete(name);
        return;
      }
      const connection = this.connections.get(name);
      if (!connection) throw RpcError.invalidParam("name", `no MCP server is named "${name}"`);
      if (connection.origin === "config") {
        throw RpcError.invalidParam("name", `MCP server "${name}" comes from the configuration file (mcpServers in agentwire.json); remove it there`);
      }
      const rest = this.savedDefinitions();
      delete rest[name];
      await this.save(rest);
      this.connections.delete(name);
      await connection.close();
    });
  }

  /** Connects to a definition, lists its tools, disconnects; nothing is kept. */
  async probe(definition: McpServerDefinition): Promise<McpProbeResult> {
    const kind = transportKind(definition);
    let session: McpSession;
    try {
      session = await McpSession.open(definition, { baseEnv: this.settings.baseEnv, connectTimeoutMs: this.settings.connectTimeoutMs });
    } catch (error) {
      throw RpcError.mcpError(error instanceof Error ? error.message : String(error), kind);
    }
    try {
      const tools = await session.listTools(this.settings.connectTimeoutMs);
      return {
        serverInfo: session.serverInfo,
        tools: tools.map((tool) => ({
          name: tool.name,
          description: tool.description ?? "",
          inputSchema: tool.inputSchema as Record<string, unknown>,
          annotations: {
            ...(typeof tool.annotations?.readOnlyHint === "boolean" ? { readOnlyHint: tool.annotations.readOnlyHint } : {}),
            ...(typeof tool.annotations?.destructiveHint === "boolean" ? { destructiveHint: tool.annotations.destructiveHint } : {}),
          },
        })),
      };
    } catch (error) {
      throw RpcError.mcpError(`the server did not list its tools: ${error instanceof Error ? error.message : String(error)}`, kind);
    } finally {
      await session.close();
    }
  }

  /** Stops every server; stdio servers get EOF on stdin and are killed if they linger. */
  async close(): Promise<void> {
    this.closed = true;
    await this.loaded;
    await Promise.all([...this.connections.values()].map((c) => c.close()));
    await this.conversations.close();
  }

  private open(name: string, definition: McpServerDefinition, origin: "config" | "added"): McpConnection {
    const connection = new McpConnection(name, definition, origin, this.settings);
    this.connections.set(name, connection);
    if (this.closed) void connection.close();
    return connection;
  }

  private savedDefinitions(): McpServersConfig {
    const saved: McpServersConfig = {};
    for (const connection of this.connections.values()) if (connection.origin === "added") saved[connection.serverName] = connection.definition;
    for (const [name, definition] of this.overLimit) saved[name] = definition;
    return saved;
  }

  private async save(servers: McpServersConfig): Promise<void> {
    try {
      await this.file.save(servers);
    } catch (error) {
      this.log.error(`could not write ${this.file.path}`, error);
      throw RpcError.storageError("the MCP server list could not be written to the data dir; nothing was changed");
    }
  }

  private mutate<T>(work: () => Promise<T>): Promise<T> {
    const run = this.mutations.then(async () => {
      await this.start();
      return work();
    });
    this.mutations = run.catch(() => {});
    return run;
  }
}
