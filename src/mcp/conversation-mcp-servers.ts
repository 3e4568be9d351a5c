/**
 * The MCP servers of single conversations (conversation.create /
 * conversation.update `mcpServers`), by conversation id. They run while
 * their conversation is loaded on this instance: attached when it is
 * created or loaded, detached when it is unloaded or deleted, all closed
 * with the server. Their tools are offered to that conversation's model
 * only (Agent.conversationTools). Each server is an McpConnection like a
 * server-wide one — same backoff, same session, same tools — except that
 * its ups and downs are not broadcast to every client (they concern one
 * conversation; mcp.list { conversationId } shows its state).
 */
import type { ConversationMcpServer, McpServerDefinition } from "../../protocol/config-mcp.js";
import type { McpServerInfo } from "../../protocol/mcp.js";
import { McpConnection, type McpConnectionSettings } from "./mcp-connection.js";
import type { McpTool } from "./mcp-tool.js";

export class ConversationMcpServers {
  private readonly byConversation = new Map<string, Map<string, McpConnection>>();
  private closed = false;

  constructor(
    private readonly settings: McpConnectionSettings,
    /** Conversation servers running at most on this instance, all conversations together (limits.maxConversationMcpServers). */
    private readonly maxRunning: number,
  ) {}

  /**
   * Make the conversation's running servers these: a server whose name and
   * definition are unchanged keeps its connection, the others are closed or
   * started (in the background: ready() waits for their first attempt).
   * Servers beyond maxRunning are not started; they show as failed.
   */
  async attach(conversationId: string, servers: readonly ConversationMcpServer[]): Promise<void> {
    const current = this.byConversation.get(conversationId) ?? new Map<string, McpConnection>();
    const next = new Map<string, McpConnection>();
    const closing: Promise<void>[] = [];
    const wanted = new Map(servers.map((server) => [server.name, definitionOf(server)]));
    for (const [name, connection] of current) {
      const definition = wanted.get(name);
      if (definition && JSON.stringify(definition) === JSON.stringify(connection.definition)) next.set(name, connection);
      else closing.push(connection.close());
    }
    let running = this.running() - current.size + next.size;
    for (const [name, definition] of wanted) {
      if (next.has(name)) continue;
      const connection = new McpConnection(name, definition, "conversation", this.settings);
      next.set(name, connection);
      if (this.closed) continue;
      if (running >= this.maxRunning) {
        connection.refuse(`not started: ${running} conversation MCP servers run on this server, the most it runs (limits.maxConversationMcpServers is ${this.maxRunning})`);
        continue;
      }
      running++;
      void connection.start();
    }
    // Kept in the order the conversation declares them.
    const ordered = new Map([...wanted.keys()].map((name) => [name, next.get(name)!]));
    if (ordered.size > 0) this.byConversation.set(conversationId, ordered);
    else this.byConversation.delete(conversationId);
    this.settings.changed();
    await Promise.all(closing);
  }

  /** Stop every server of the conversation (unloaded, deleted, or lost to another instance). */
  async detach(conversationId: string): Promise<void> {
    const connections = this.byConversation.get(conversationId);
    if (!connections) return;
    this.byConversation.delete(conversationId);
    this.settings.changed();
    await Promise.all([...connections.values()].map((c) => c.close()));
  }

  /** The conversation's server names: server-wide servers of these names are hidden from it. */
  names(conversationId: string): ReadonlySet<string> {
    return new Set(this.byConversation.get(conversationId)?.keys() ?? []);
  }

  tools(conversationId: string): McpTool[] {
    const connections = this.byConversation.get(conversationId);
    return connections ? [...connections.values()].flatMap((c) => c.tools) : [];
  }

  /**
   * Resolves once every server of the conversation has finished its first
   * connection attempt (each bounded by the connect timeout), or when
   * `signal` aborts: the first model call is offered their tools.
   */
  async ready(conversationId: string, signal?: AbortSignal): Promise<void> {
    const connections = this.byConversation.get(conversationId);
    if (!connections) return;
    const started = Promise.all([...connections.values()].map((c) => c.started()));
    if (!signal) return void (await started);
    if (signal.aborted) return;
    let stop!: () => void;
    const aborted = new Promise<void>((resolve) => (stop = resolve));
    signal.addEventListener("abort", stop, { once: true });
    try {
      await Promise.race([started, aborted]);
    } finally {
      signal.removeEventListener("abort", stop);
    }
  }

  infos(conversationId: string): McpServerInfo[] {
    return [...(this.byConversation.get(conversationId)?.values() ?? [])].map((c) => c.info());
  }

  /** Conversation servers held on this instance, all conversations together (the bound maxRunning counts these). */
  running(): number {
    let n = 0;
    for (const connections of this.byConversation.values()) n += connections.size;
    return n;
  }

  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.byConversation.values()].flatMap((connections) => [...connections.values()]);
    this.byConversation.clear();
    await Promise.all(all.map((c) => c.close()));
  }
}

/** The definition mcp.add would take: the conversation server without its name. */
function definitionOf(server: ConversationMcpServer): McpServerDefinition {
  const { name: _name, ...definition } = server;
  return definition as McpServerDefinition;
}
