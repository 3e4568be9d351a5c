/**
 * One live MCP client session over stdio or Streamable HTTP: opened,
 * initialized, asked for its tools, closed. Long-lived sessions
 * (mcp-connection.ts) and one-shot probes (mcp.probe) both use it.
 */
import { existsSync } from "node:fs";
import type { McpServerDefinition } from "../../protocol/config-mcp.js";
import { SERVER_VERSION } from "../server-version.js";
import { describeFetchFailure, describeHttpStatus, describeNotMcp, type HttpExchange } from "./mcp-http-failure.js";
import type { InputQuestion, InputReply } from "../tools/tool.js";
import { loadMcpSdk, type McpCallResult, type McpClient, type McpListedTool, type McpSdk } from "./mcp-sdk.js";

export type McpTransportKind = "stdio" | "http";

export interface McpSessionOptions {
  /** Environment of a stdio server before the definition's `env`: the scrubbed tool environment (asked for only when one starts). */
  baseEnv(): Readonly<Record<string, string>>;
  /** Time allowed for the process to start and answer `initialize`. */
  connectTimeoutMs: number;
  /** Gives up the start: a stdio server's process is ended at once instead of when initialize times out. */
  signal?: AbortSignal;
  /** The session ended on its own (process exited, connection closed); not called after `close()`. */
  onClosed?(reason: string): void;
  /** The server announced that its tools changed (notifications/tools/list_changed). */
  onToolsChanged?(): void;
  /** A line the server wrote on stderr (stdio). */
  onStderr?(line: string): void;
}

/** More tools than this from one server are not listed: a runaway server must not fill memory or the model's request. */
const MAX_TOOLS = 1000;
/** Bytes of a stdio server's stderr kept to explain why it failed. */
const STDERR_TAIL_BYTES = 2048;

export function transportKind(definition: McpServerDefinition): McpTransportKind {
  return "url" in definition ? "http" : "stdio";
}

/** A tool call in flight on a session, able to put its server's questions to the user (ToolRunContext.requestInput). */
export interface McpCaller {
  serverName: string;
  requestInput(question: InputQuestion): Promise<InputReply>;
}

/** What an elicitation/create request is answered with (MCP's ElicitResult). */
export type ElicitAnswer = { action: "accept"; content: Record<string, string | number | boolean> } | { action: "decline" } | { action: "cancel" };

export class McpSession {
  private closing = false;
  /** Tool calls in flight that can ask the user: an elicitation goes to the one call in flight. */
  private readonly callers = new Set<McpCaller>();
  /** Set once initialize has succeeded: before that, a failure is open()'s to report. */
  private opened = false;
  private stderrTail = "";
  /** Streamable HTTP only: the endpoint, and what its requests got, to say why one failed. */
  private url: URL | undefined;
  private readonly http: HttpExchange = { pending: 0 };

  private constructor(
    private readonly sdk: McpSdk,
    readonly client: McpClient,
    readonly kind: McpTransportKind,
  ) {}

  /** Starts (or reaches) the server and completes `initialize`. Throws an Error whose message says what went wrong. */
  static async open(definition: McpServerDefinition, options: McpSessionOptions): Promise<McpSession> {
    const sdk = await loadMcpSdk();
    const kind = transportKind(definition);
    // Elicitation (form mode) only: a server's question goes to the user of the conversation whose call it serves.
    // No sampling or roots.
    const client = new sdk.Client({ name: "agentwire", version: SERVER_VERSION }, { capabilities: { elicitation: {} } });
    const session = new McpSession(sdk, client, kind);
    client.setRequestHandler(sdk.ElicitRequestSchema, (request) => session.elicit(request.params));
    const transport = session.createTransport(definition, options);
    client.onclose = () => {
      // A failed connect closes the client too, before its rejection arrives: that
      // rejection says what went wrong, so an end before initialize is not reported here.
      if (session.closing || !session.opened) return;
      session.closing = true;
      options.onClosed?.(session.endedReason());
    };
    // Transport hiccups (a dropped SSE stream the SDK reconnects) are not fatal; a real end comes as onclose.
    client.onerror = () => {};
    client.setNotificationHandler(sdk.ToolListChangedNotificationSchema, () => options.onToolsChanged?.());
    try {
      options.signal?.throwIfAborted();
      await client.connect(transport, { timeout: options.connectTimeoutMs, signal: options.signal });
    } catch (error) {
      session.closing = true;
      await client.close().catch(() => {});
      throw new Error(session.describe(error, definition, options.connectTimeoutMs));
    }
    session.opened = true;
    return session;
  }

  get serverInfo(): { name: string; version: string } {
    const info = this.client.getServerVersion();
    return { name: info?.name ?? "unknown", version: info?.version ?? "unknown" };
  }

  /** Every tool, following pagination, at most MAX_TOOLS. */
  async listTools(timeoutMs: number): Promise<McpListedTool[]> {
    const tools: McpListedTool[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.client.listTools(cursor ? { cursor } : {}, { timeout: timeoutMs });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor && tools.length < MAX_TOOLS);
    return tools.slice(0, MAX_TOOLS);
  }

  /**
   * Calls a tool. `signal` cancels it (the SDK sends notifications/cancelled
   * to the server) and `timeoutMs` bounds it (the SDK cancels it on expiry too).
   */
  callTool(
    name: string,
    args: Record<string, unknown>,
    options: { signal: AbortSignal; timeoutMs: number; onProgress?: (text: string) => void; caller?: McpCaller },
  ): Promise<McpCallResult> {
    const { caller } = options;
    if (caller) this.callers.add(caller);
    return this.client
      .callTool({ name, arguments: args }, undefined, {
        signal: options.signal,
        timeout: options.timeoutMs,
        onprogress: options.onProgress
          ? (p) => options.onProgress!(`[progress ${p.progress}${p.total !== undefined ? `/${p.total}` : ""}${p.message ? `: ${p.message}` : ""}]\n`)
          : undefined,
      })
      .finally(() => {
        if (caller) this.callers.delete(caller);
      });
  }

  /**
   * An elicitation/create from the server: put to the user of the one tool
   * call in flight. With none in flight (or several: the protocol does not
   * say which call a stdio server's request serves), a URL-mode request or
   * a form beyond the restricted schema, it is declined.
   */
  async elicit(params: { message: string; requestedSchema?: unknown; mode?: string }): Promise<ElicitAnswer> {
    const callers = [...this.callers];
    if (callers.length !== 1 || (params.mode !== undefined && params.mode !== "form")) return { action: "decline" };
    const form = this.sdk.InputForm.safeParse(params.requestedSchema);
    if (!form.success) return { action: "decline" };
    const caller = callers[0]!;
    let reply: InputReply;
    try {
      reply = await caller.requestInput({ source: "mcp", server: caller.serverName, question: String(params.message).slice(0, 2000), schema: form.data });
    } catch {
      return { action: "decline" }; // too many questions open, or the generation stopped
    }
    if (reply.outcome === "declined") return { action: "decline" };
    if (reply.outcome === "cancelled") return { action: "cancel" };
    const answer = reply.answer;
    return typeof answer === "object" && !Array.isArray(answer) ? { action: "accept", content: answer } : { action: "decline" };
  }

  /** True for the SDK's timeout error. */
  isTimeout(error: unknown): boolean {
    return error instanceof this.sdk.McpError && error.code === this.sdk.ErrorCode.RequestTimeout;
  }

  /** Why a request of an open session failed, in words (an HTTP status, a refused connection…). */
  explain(error: unknown): string {
    if (this.kind === "http" && this.url) return this.describeHttp(error, this.url) ?? messageOf(error);
    return messageOf(error);
  }

  /** True when the error came from the server (a JSON-RPC error answer), not from the link to it. */
  isServerAnswer(error: unknown): boolean {
    return error instanceof this.sdk.McpError && error.code !== this.sdk.ErrorCode.ConnectionClosed && error.code !== this.sdk.ErrorCode.RequestTimeout;
  }

  /** Ends the session: a stdio server gets EOF on stdin (then SIGTERM, then SIGKILL, by the SDK). */
  async close(): Promise<void> {
    this.closing = true;
    await this.client.close().catch(() => {});
  }

  private createTransport(definition: McpServerDefinition, options: McpSessionOptions) {
    if ("url" in definition) {
      this.url = new URL(definition.url);
      return new this.sdk.StreamableHTTPClientTransport(this.url, {
        requestInit: { headers: { ...definition.headers } },
        fetch: (url, init) => this.watchedFetch(url, init),
        // One quick retry of a dropped event stream; a dead server is the connection manager's to retry.
        reconnectionOptions: { initialReconnectionDelay: 1000, maxReconnectionDelay: 5000, reconnectionDelayGrowFactor: 2, maxRetries: 1 },
      });
    }
    const transport = new this.sdk.StdioClientTransport({
      command: definition.command,
      args: definition.args ?? [],
      env: { ...options.baseEnv(), ...definition.env },
      cwd: definition.cwd,
      // Piped, never inherited: the server's stderr is ours to log, and its last lines explain a failure.
      stderr: "pipe",
    });
    let partial = "";
    transport.stderr?.on("data", (chunk: Buffer) => {
      const text = chunk.toString("utf8");
      this.stderrTail = (this.stderrTail + text).slice(-STDERR_TAIL_BYTES);
      const lines = (partial + text).split("\n");
      partial = lines.pop() ?? "";
      if (partial.length > STDERR_TAIL_BYTES) partial = "";
      for (const line of lines) if (line.trim() !== "") options.onStderr?.(line);
    });
    return transport;
  }

  /** The global fetch, noting each response's status line and what is still waiting (the SDK's errors keep neither). */
  private async watchedFetch(url: string | URL, init?: RequestInit): Promise<Response> {
    this.http.pending++;
    let response: Response;
    try {
      response = await fetch(url, init);
    } catch (error) {
      // Aborted (the session closing after a timeout) still counts as never answered.
      if (!init?.signal?.aborted) this.http.pending--;
      throw error;
    }
    this.http.pending--;
    this.http.response = { status: response.status, statusText: response.statusText, contentType: response.headers.get("content-type") };
    return response;
  }

  private endedReason(): string {
    const base = this.kind === "stdio" ? "the server process exited" : "the connection to the server closed";
    return this.withStderr(base);
  }

  private withStderr(text: string): string {
    const tail = this.stderrTail.trim().split("\n").slice(-3).join(" | ");
    return tail ? `${text} (stderr: ${tail})` : text;
  }

  private describe(error: unknown, definition: McpServerDefinition, connectTimeoutMs: number): string {
    const code = (error as { code?: unknown } | undefined)?.code;
    if ("command" in definition) {
      if (code === "ENOENT") {
        if (definition.cwd && !existsSync(definition.cwd)) return `could not start "${definition.command}": working directory ${definition.cwd} does not exist`;
        return `could not start "${definition.command}": command not found`;
      }
      if (code === "EACCES") return `could not start "${definition.command}": permission denied`;
    }
    if (this.isTimeout(error)) {
      if (this.kind === "stdio" || !this.url) return this.withStderr(`no answer to initialize within ${connectTimeoutMs} ms`);
      const why =
        this.http.pending > 0
          ? "the HTTP request got no response"
          : this.http.response
            ? `it answered HTTP ${this.http.response.status} but sent no MCP message`
            : "";
      return `no answer to initialize from ${this.url.host} within ${connectTimeoutMs} ms${why ? ` (${why})` : ""}`;
    }
    if (error instanceof this.sdk.McpError && error.code === this.sdk.ErrorCode.ConnectionClosed) {
      return this.withStderr(this.kind === "stdio" ? "the server process exited before it answered" : "the connection closed before the server answered");
    }
    const http = this.url ? this.describeHttp(error, this.url) : undefined;
    if (http) return http;
    const message = messageOf(error);
    const cause = (error as { cause?: { code?: string; message?: string } } | undefined)?.cause;
    const detail = cause?.code ?? cause?.message;
    return this.withStderr(detail && !message.includes(detail) ? `${message} (${detail})` : message);
  }

  /** A failure of the HTTP link in words; undefined when it is none the HTTP side can explain. */
  private describeHttp(error: unknown, url: URL): string | undefined {
    const network = describeFetchFailure(error, url);
    if (network) return network;
    if (error instanceof this.sdk.StreamableHTTPError) {
      // The SDK's message is "Streamable HTTP error: Error POSTing to endpoint: <body>"; its code is the status (-1: not HTTP).
      const code = (error as { code?: unknown }).code;
      if (typeof code === "number" && code >= 100) {
        const body = /Error POSTing to endpoint: ([\s\S]*)$/.exec(error.message)?.[1];
        return describeHttpStatus(code, this.http, body, url);
      }
      if (/Unexpected content type/.test(error.message)) return describeNotMcp(this.http, url, "content-type");
    }
    // The body was not JSON, or JSON that is not JSON-RPC (the SDK's schema refused it).
    if (error instanceof SyntaxError || (error instanceof Error && error.name === "ZodError")) return describeNotMcp(this.http, url, "message");
    return undefined;
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
