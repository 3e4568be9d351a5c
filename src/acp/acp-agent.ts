/**
 * The ACP agent: every ACP method this agent answers, mapped onto agentwire
 * requests through the generated client. The SDK parses each request's
 * params with ACP's schemas (bad shapes get -32602 there); what it cannot
 * know (a relative cwd, an unknown session) is refused here with the code
 * the spec names. docs/acp.md has the whole mapping.
 */
import { isAbsolute } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import type { AgentwireClient, Conversation, ToolPendingNotification } from "../../clients/typescript/index.js";
import { SERVER_VERSION } from "../server-version.js";
import { acpError, AcpSession } from "./acp-session.js";
import { ConfigOptions } from "./config-options.js";
import { conversationMcpServers } from "./mcp-servers.js";
import { SessionModes } from "./session-modes.js";
import { commandsUpdate, planUpdate, replayRecord } from "./session-updates.js";
import { UnsentBytes } from "./update-outbox.js";

/** Records read per conversation.get while replaying a session (each page is one reply, under maxReplyBytes). */
const REPLAY_PAGE = 200;
/** Sessions per session/list page. */
const LIST_PAGE = 50;

export interface AcpAgentOptions {
  client: AgentwireClient;
  log(message: string): void;
  /**
   * The server outlives this process (--url, or the server running here that holds the data dir):
   * when the editor goes away, the generations it started are interrupted. An embedded server stops
   * with the process instead, and a call waiting for the editor stays stored pending, asked again on
   * session/load.
   */
  serverOutlives?: boolean;
  /** Bound of the updates waiting for an editor that stopped reading (update-outbox.ts); default 8 MiB. */
  maxUnsentBytes?: number;
}

export class AcpAgent {
  readonly #sessions = new Map<string, AcpSession>();
  readonly #config: ConfigOptions;
  readonly #modes: SessionModes;
  #editor: acp.AgentContext | undefined;
  #canElicit = false;
  #shows = { notices: false, compaction: false };
  readonly #unsent: UnsentBytes;

  constructor(private readonly options: AcpAgentOptions) {
    this.#config = new ConfigOptions(options.client);
    this.#modes = new SessionModes(options.client);
    this.#unsent = new UnsentBytes(options.maxUnsentBytes);
    options.client.onAny((method, params) => {
      const conversationId = (params as { conversationId?: string } | undefined)?.conversationId;
      if (conversationId !== undefined) this.#sessions.get(conversationId)?.onEvent(method, params);
      // A server-wide notice (an MCP server down or back) belongs to no session: the agent log shows it.
      else if (method === "notice") options.log((params as { message: string }).message);
    });
  }

  /** The SDK app: one handler per ACP method agentwire answers. */
  app(): acp.AgentApp {
    return acp
      .agent({ name: "agentwire" })
      .onConnect((connection) => {
        this.#editor = connection.client;
      })
      .onRequest(acp.methods.agent.initialize, ({ params }) => {
        this.#canElicit = params.clientCapabilities?.elicitation?.form != null;
        const session = params.clientCapabilities?.session;
        this.#shows = { notices: session?.notices != null, compaction: session?.compaction != null };
        return this.#initialize();
      })
      .onRequest(acp.methods.agent.session.new, ({ params }) => this.#guard(() => this.#newSession(params)))
      .onRequest(acp.methods.agent.session.load, ({ params }) => this.#guard(() => this.#loadSession(params), params.sessionId))
      .onRequest(acp.methods.agent.session.resume, ({ params }) => this.#guard(() => this.#resumeSession(params), params.sessionId))
      .onRequest(acp.methods.agent.session.list, ({ params }) => this.#guard(() => this.#listSessions(params)))
      .onRequest(acp.methods.agent.session.close, ({ params }) => this.#guard(() => this.#closeSession(params.sessionId), params.sessionId))
      .onRequest(acp.methods.agent.session.delete, ({ params }) => this.#guard(() => this.#deleteSession(params.sessionId), params.sessionId))
      .onRequest(acp.methods.agent.session.prompt, ({ params }) => this.#session(params.sessionId).prompt(params.prompt))
      .onRequest(acp.methods.agent.session.setConfigOption, ({ params }) =>
        this.#guard(async () => {
          this.#session(params.sessionId);
          return { configOptions: await this.#config.set(params.sessionId, params.configId, params.value) };
        }, params.sessionId),
      )
      .onRequest(acp.methods.agent.session.setMode, ({ params }) =>
        this.#guard(async () => {
          this.#session(params.sessionId);
          await this.#modes.set(params.sessionId, params.modeId);
          return {};
        }, params.sessionId),
      )
      .onNotification(acp.methods.agent.session.cancel, async ({ params }) => {
        await this.#sessions.get(params.sessionId)?.cancel();
      });
  }

  /**
   * Every session's open work ends (the editor went away). On a server that outlives this process, a
   * generation the editor started and was waiting on is interrupted first: it would otherwise go on
   * unseen (its tool calls waiting for an approval nobody gives); one another client started (a
   * prompt steered into it) goes on.
   */
  async close(): Promise<void> {
    const running = this.options.serverOutlives ? [...this.#sessions.values()].filter((session) => session.runsOwnGeneration) : [];
    if (running.length > 0) this.options.log(`the editor went away: interrupting ${running.length} running prompt(s)`);
    await Promise.all(running.map((session) => session.cancel()));
    for (const session of this.#sessions.values()) session.close();
    this.#sessions.clear();
  }

  #initialize(): acp.InitializeResponse {
    return {
      // Only ACP v1 exists: a client asking for another gets v1 and decides (the spec's negotiation).
      protocolVersion: acp.PROTOCOL_VERSION,
      agentCapabilities: {
        loadSession: true,
        promptCapabilities: { image: true, audio: false, embeddedContext: true },
        mcpCapabilities: { http: true, sse: false },
        sessionCapabilities: { list: {}, resume: {}, close: {}, delete: {} },
      },
      agentInfo: { name: "agentwire", title: "agentwire", version: SERVER_VERSION },
      authMethods: [],
    };
  }

  async #guard<T>(run: () => Promise<T>, sessionId?: string): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw acpError(error, sessionId);
    }
  }

  #session(sessionId: string): AcpSession {
    const session = this.#sessions.get(sessionId);
    if (!session) throw acp.RequestError.sessionNotFound(sessionId);
    return session;
  }

  #checkCwd(cwd: string): void {
    if (!isAbsolute(cwd)) throw acp.RequestError.invalidParams({ path: "cwd" }, `cwd must be an absolute path, got "${cwd}"`);
  }

  async #open(conversation: Conversation, cwd: string): Promise<AcpSession> {
    this.#sessions.get(conversation.id)?.close();
    const defaultMode = await this.#modes.default();
    const session = new AcpSession(conversation.id, conversation.workspace ?? cwd, {
      client: this.options.client,
      editor: this.#editor!,
      log: this.options.log,
      canElicit: () => this.#canElicit,
      shows: (kind) => this.#shows[kind],
      configOptions: (c) => this.#config.of(c),
      unsent: this.#unsent,
    }, {
      title: conversation.title,
      conversation,
      ...(defaultMode !== undefined ? { mode: SessionModes.current(conversation, defaultMode), defaultMode } : {}),
    });
    this.#sessions.set(conversation.id, session);
    return session;
  }

  /** What session/new, load and resume answer besides the id: the config options and the modes. */
  async #sessionState(conversation: Conversation): Promise<{ configOptions: acp.SessionConfigOption[]; modes: acp.SessionModeState | null }> {
    const [configOptions, modes] = await Promise.all([this.#config.of(conversation), this.#modes.state(conversation)]);
    return { configOptions, modes };
  }

  /**
   * After the response that names the session: the editor can place updates only once it knows the
   * id. Called just before the handler returns: the SDK queues the response within the same turn of
   * the event loop, and this waits for the next one and a round trip to the server.
   */
  #afterResponse(session: AcpSession): void {
    setImmediate(() => {
      this.options.client.commands
        .list({ conversationId: session.conversationId })
        .then((list) => session.send(commandsUpdate(list)))
        .catch((error: Error) => this.options.log(`commands.list: ${error.message}`));
    });
  }

  async #newSession(params: acp.NewSessionRequest): Promise<acp.NewSessionResponse> {
    this.#checkCwd(params.cwd);
    const mcpServers = conversationMcpServers(params.mcpServers);
    const { client } = this.options;
    // The editor's MCP servers belong to this session's conversation only.
    const conversation = await client.conversation.create({ workspace: params.cwd, ...(mcpServers.length > 0 ? { mcpServers } : {}) });
    const session = await this.#open(conversation, params.cwd);
    await client.conversation.subscribe({ conversationId: conversation.id });
    const state = await this.#sessionState(conversation);
    this.#afterResponse(session);
    return { sessionId: session.sessionId, ...state };
  }

  /** The conversation, or -32002 naming the session. */
  async #conversation(sessionId: string): Promise<Awaited<ReturnType<AgentwireClient["conversation"]["get"]>>> {
    if (!/^[A-Za-z0-9_-]{1,128}$/.test(sessionId)) throw acp.RequestError.sessionNotFound(sessionId);
    return this.options.client.conversation.get({ conversationId: sessionId });
  }

  /** session/load: the history as updates, then live events from where it ends; calls still waiting are asked about again. */
  async #loadSession(params: acp.LoadSessionRequest): Promise<acp.LoadSessionResponse> {
    this.#checkCwd(params.cwd);
    const { client } = this.options;
    const mcpServers = conversationMcpServers(params.mcpServers);
    const first = await this.#conversation(params.sessionId);
    // The servers the editor gives now replace those stored with the conversation (unchanged ones keep running).
    await client.conversation.update({ conversationId: params.sessionId, mcpServers });
    const session = await this.#open(first.conversation, params.cwd);
    const total = first.conversation.recordCount;
    for (let from = 0; from < total; from += REPLAY_PAGE) {
      const page = await client.conversation.get({ conversationId: params.sessionId, includeRecords: true, recordsFrom: from, recordsLimit: Math.min(REPLAY_PAGE, total - from) });
      for (const record of page.records ?? []) {
        if (record.type === "tool_call") session.markShown(record.toolCallId);
        for (const update of replayRecord(record, session.workspace, this.#shows.compaction)) void session.send(update);
      }
    }
    if (first.state.plan) void session.send(planUpdate(first.state.plan.entries));
    // Everything after the snapshot the history was read from arrives as events, in order.
    await client.conversation.subscribe({ conversationId: params.sessionId, afterSeq: first.state.seq });
    await session.flushed();
    const state = await this.#sessionState(first.conversation);
    this.#afterResponse(session);
    setImmediate(() => {
      for (const call of first.state.pendingTools) session.onEvent("tool_pending", { ...call, autoConfirmed: false } as unknown as ToolPendingNotification);
      for (const input of first.state.pendingInputs ?? []) session.onEvent("input_requested", input);
    });
    return state;
  }

  async #resumeSession(params: acp.ResumeSessionRequest): Promise<acp.ResumeSessionResponse> {
    this.#checkCwd(params.cwd);
    const mcpServers = params.mcpServers ? conversationMcpServers(params.mcpServers) : undefined;
    const { conversation, state } = await this.#conversation(params.sessionId);
    // Without mcpServers the stored ones stay (they restarted when the conversation was loaded).
    if (mcpServers) await this.options.client.conversation.update({ conversationId: params.sessionId, mcpServers });
    const session = await this.#open(conversation, params.cwd);
    await this.options.client.conversation.subscribe({ conversationId: params.sessionId, afterSeq: state.seq });
    const answer = await this.#sessionState(conversation);
    this.#afterResponse(session);
    return answer;
  }

  async #listSessions(params: acp.ListSessionsRequest): Promise<acp.ListSessionsResponse> {
    if (params.cwd) this.#checkCwd(params.cwd);
    const page = await this.options.client.conversation.list({ limit: LIST_PAGE, ...(params.cursor ? { cursor: params.cursor } : {}) });
    // A session's cwd must be absolute: a conversation without a workspace of its own is not an editor's
    // session, nor is a sub-agent's (spawn_agent's child conversation: its parent's session shows its work).
    const sessions = page.data
      .filter((c) => c.workspace !== null && isAbsolute(c.workspace) && c.parentConversationId === undefined && (!params.cwd || c.workspace === params.cwd))
      .map((c) => ({ sessionId: c.id, cwd: c.workspace!, title: c.title || null, updatedAt: c.updatedAt }));
    return { sessions, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
  }

  async #closeSession(sessionId: string): Promise<acp.CloseSessionResponse> {
    const session = this.#session(sessionId);
    if (session.prompting) await session.cancel();
    session.close();
    this.#sessions.delete(sessionId);
    await this.options.client.conversation.unsubscribe({ conversationId: sessionId });
    return {};
  }

  async #deleteSession(sessionId: string): Promise<acp.DeleteSessionResponse> {
    await this.#conversation(sessionId);
    this.#sessions.get(sessionId)?.close();
    this.#sessions.delete(sessionId);
    await this.options.client.conversation.delete({ conversationId: sessionId });
    return {};
  }
}
