/**
 * One configured MCP server over its whole life: connect, list tools, follow
 * tools/list_changed, notice when it goes away, and reconnect with backoff
 * (1 s doubling to 60 s by default) — a server that crashes or never starts
 * is reported, never fatal to the agent.
 */
import type { McpServerDefinition } from "../../protocol/config-mcp.js";
import type { McpServerInfo } from "../../protocol/mcp.js";
import type { ServerNoticeCode } from "../../protocol/notices.js";
import type { Logger } from "../logging/logger.js";
import { McpSession, transportKind } from "./mcp-session.js";
import { createMcpTool, type McpTool, type McpToolHost } from "./mcp-tool.js";
import { mcpToolName } from "./mcp-tool-name.js";

export interface McpBackoff {
  /** First retry delay. Default 1000 ms. */
  initialMs: number;
  /** Delays double up to this. Default 60000 ms. */
  maxMs: number;
}

export interface McpConnectionSettings {
  baseEnv(): Readonly<Record<string, string>>;
  connectTimeoutMs: number;
  backoff: McpBackoff;
  maxOutputBytes: number;
  log: Logger;
  /** Called whenever the server's tools change (connected, gone, list changed). */
  changed(): void;
  /** Called when the server goes down (it was not already) and when it comes back after being down. */
  notice(notice: McpStateNotice): void;
}

/** A server-wide notice about one MCP server (protocol/notices.ts: mcp_server_down, mcp_server_up). */
export interface McpStateNotice {
  level: "info" | "warning";
  code: Extract<ServerNoticeCode, "mcp_server_down" | "mcp_server_up">;
  message: string;
  data: Record<string, unknown>;
}

export type McpOrigin = McpServerInfo["origin"];

export class McpConnection implements McpToolHost {
  private state: McpServerInfo["state"];
  private error: string | undefined;
  /** Connection attempts since the last one that succeeded (reported). */
  private attempts = 0;
  /** Consecutive failures: the backoff exponent. */
  private failures = 0;
  private current: McpSession | undefined;
  private toolList: McpTool[] = [];
  private retryTimer: NodeJS.Timeout | undefined;
  private retryAt: number | undefined;
  private connectedAt = 0;
  private closed = false;
  private firstAttempt: Promise<void> | undefined;
  /** Aborts the connection attempt under way: close() must not wait for a silent server's initialize limit. */
  private attempt: AbortController | undefined;
  /** Bumped by every new session and by close: callbacks of an older session are ignored. */
  private epoch = 0;

  constructor(
    readonly serverName: string,
    readonly definition: McpServerDefinition,
    readonly origin: McpOrigin,
    private readonly settings: McpConnectionSettings,
  ) {
    this.state = definition.disabled ? "disabled" : "connecting";
  }

  get timeoutMs(): number | undefined {
    return this.definition.timeoutMs;
  }

  get maxOutputBytes(): number {
    return this.settings.maxOutputBytes;
  }

  get tools(): readonly McpTool[] {
    return this.toolList;
  }

  /** Starts connecting; resolves once the first attempt has succeeded or failed. */
  start(): Promise<void> {
    if (this.definition.disabled) return Promise.resolve();
    this.firstAttempt ??= this.connect();
    return this.firstAttempt;
  }

  /** Resolves once the first attempt has settled; at once for a connection never started. */
  started(): Promise<void> {
    return this.firstAttempt ?? Promise.resolve();
  }

  /** Never to be started (a bound was reached): shown as failed with `reason`, and not retried. */
  refuse(reason: string): void {
    this.closed = true;
    this.state = "failed";
    this.error = reason;
  }

  session(): McpSession | { down: string } {
    if (this.current && this.state === "connected") return this.current;
    if (this.state === "disabled") return { down: "it is disabled" };
    return { down: this.error ?? "it is still connecting" };
  }

  linkFailed(session: McpSession, error: unknown): void {
    if (session !== this.current) return;
    this.lost(`the link to the server failed: ${session.explain(error)}`);
  }

  info(): McpServerInfo {
    const info: McpServerInfo = {
      name: this.serverName,
      transport: transportKind(this.definition),
      origin: this.origin,
      state: this.state,
      attempts: this.attempts,
      tools: this.toolList.map((t) => t.summary),
    };
    if (this.error !== undefined && this.state !== "connected") info.error = this.error;
    if (this.state === "failed") info.nextRetryMs = this.retryAt === undefined ? 0 : Math.max(0, this.retryAt - Date.now());
    if (this.current && this.state === "connected") info.serverInfo = this.current.serverInfo;
    return info;
  }

  /** Stops for good: no retry, the session closed (a stdio server gets EOF, then SIGTERM/SIGKILL if it lingers). */
  async close(): Promise<void> {
    this.closed = true;
    this.epoch++;
    this.attempt?.abort(new Error("the MCP server was removed or agentwire is stopping"));
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    const session = this.current;
    this.current = undefined;
    this.setTools([]);
    await session?.close();
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const epoch = ++this.epoch;
    // A retry does not clear the failure: the server stays "failed" (counted as such by
    // server.status) until an attempt succeeds, so readers never see it flicker to
    // "connecting" and back while a retry is in flight. Only the first attempt is "connecting".
    if (this.state !== "failed") this.state = "connecting";
    this.attempts++;
    const { log } = this.settings;
    let session: McpSession | undefined;
    const attempt = new AbortController();
    this.attempt = attempt;
    try {
      session = await McpSession.open(this.definition, {
        baseEnv: this.settings.baseEnv,
        connectTimeoutMs: this.settings.connectTimeoutMs,
        signal: attempt.signal,
        onClosed: (reason) => {
          if (epoch === this.epoch) this.lost(reason);
        },
        onToolsChanged: () => {
          if (epoch === this.epoch) void this.refreshTools(epoch);
        },
        onStderr: (line) => log.debug(`mcp ${this.serverName}: ${line}`),
      });
      if (epoch !== this.epoch) {
        await session.close(); // closed (or restarted) while connecting
        return;
      }
      this.current = session;
      const listed = await session.listTools(this.settings.connectTimeoutMs);
      if (epoch !== this.epoch) return;
      const wasDown = this.state === "failed";
      this.state = "connected";
      this.error = undefined;
      this.attempts = 0;
      this.connectedAt = Date.now();
      this.setTools(this.buildTools(listed));
      log.info(`MCP server "${this.serverName}" connected: ${listed.length} tools`);
      if (wasDown) {
        this.settings.notice({
          level: "info",
          code: "mcp_server_up",
          message: `MCP server "${this.serverName}" is connected again (${listed.length} tools).`,
          data: { server: this.serverName, tools: listed.length },
        });
      }
    } catch (error) {
      if (epoch !== this.epoch) return;
      this.current = undefined;
      await session?.close();
      this.fail(error instanceof Error ? error.message : String(error));
    } finally {
      if (this.attempt === attempt) this.attempt = undefined;
    }
  }

  private async refreshTools(epoch: number): Promise<void> {
    const session = this.current;
    if (!session) return;
    try {
      const listed = await session.listTools(this.settings.connectTimeoutMs);
      if (epoch === this.epoch && this.state === "connected") this.setTools(this.buildTools(listed));
    } catch (error) {
      this.settings.log.warn(`MCP server "${this.serverName}": could not list its changed tools`, error);
    }
  }

  /** The session ended while in use: report it and reconnect. */
  private lost(reason: string): void {
    if (this.closed) return;
    const session = this.current;
    this.current = undefined;
    this.epoch++;
    void session?.close();
    // A server that stayed up a while starts over at the first delay; one that keeps crashing backs off.
    if (this.connectedAt && Date.now() - this.connectedAt >= this.settings.backoff.maxMs) this.failures = 0;
    this.fail(reason);
  }

  private fail(reason: string): void {
    // Told once per outage: the retries of a server already down say nothing more.
    const wasDown = this.state === "failed";
    this.state = "failed";
    this.error = reason;
    this.setTools([]);
    this.failures++;
    const delay = Math.min(this.settings.backoff.maxMs, this.settings.backoff.initialMs * 2 ** Math.min(30, this.failures - 1));
    this.settings.log.warn(`MCP server "${this.serverName}" failed: ${reason}; retrying in ${delay} ms`);
    this.retryAt = Date.now() + delay;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.retryAt = undefined;
      void this.connect();
    }, delay);
    this.retryTimer.unref();
    if (!wasDown) {
      this.settings.notice({
        level: "warning",
        code: "mcp_server_down",
        message: `MCP server "${this.serverName}" is down (${reason}); its tools are unavailable until it returns. Retrying in ${delay} ms.`,
        data: { server: this.serverName, error: reason, nextRetryMs: delay },
      });
    }
  }

  private buildTools(listed: Parameters<typeof createMcpTool>[0][]): McpTool[] {
    const taken = new Set<string>();
    return listed.map((tool) => {
      const name = mcpToolName(this.serverName, tool.name, taken);
      taken.add(name);
      return createMcpTool(tool, name, this);
    });
  }

  private setTools(tools: McpTool[]): void {
    if (tools.length === 0 && this.toolList.length === 0) return;
    this.toolList = tools;
    this.settings.changed();
  }
}
