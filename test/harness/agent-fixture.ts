/**
 * An agentwire server wired to the fake OpenAI-compatible server through the
 * real `openai` SDK (or `@anthropic-ai/sdk`, on the anthropic wire), with clients over in-memory links (or real WebSockets,
 * `transport: "websocket"`), and a conversation to drive it with.
 */
import { afterAll, afterEach, beforeAll, expect } from "vitest";
import type { AgentwireClient, AgentwireClientOptions } from "../../clients/typescript/index.js";
import type { ConfigOverrides } from "./test-config.js";
import { createWireProvider, type WireName, type WireProviderOptions } from "../../src/llm/create-provider.js";
import { startFakeOpenAI, type FakeOpenAI, type FakeOpenAIOptions } from "../fake-openai/server.js";
import { EventRecorder } from "./event-recorder.js";
import { startTestServer, type TestServer } from "./test-server.js";

/** How the fixture's clients reach the server: an in-memory link (behaviour tests), or a real WebSocket. */
/** "socket-thread": a real WebSocket to a server whose sockets live in their own thread (server.socketThread). */
export type ClientTransport = "memory" | "websocket" | "socket-thread";

export interface AgentFixture {
  fake: FakeOpenAI;
  server: TestServer;
  /** The first client, over the fixture's transport. */
  client: AgentwireClient;
  /** Another client, over the fixture's transport. */
  connect(options?: AgentwireClientOptions): Promise<AgentwireClient>;
  close(): Promise<void>;
}

export interface AgentFixtureOptions {
  config?: ConfigOverrides;
  provider?: WireProviderOptions;
  /** Which API the server's provider speaks to the fake: "chat" (default), "responses" or "anthropic". */
  wire?: WireName;
  fake?: FakeOpenAIOptions;
  /** Default "memory". */
  transport?: ClientTransport;
}

export async function startAgentFixture(options: AgentFixtureOptions = {}): Promise<AgentFixture> {
  const fake = await startFakeOpenAI({ apiKey: "test-key", ...options.fake });
  const server = await startTestServer(
    {
      model: "fake-model",
      ...options.config,
      ...(options.transport === "socket-thread" ? { server: { ...options.config?.server, socketThread: true } } : {}),
    },
    {
      provider: async () =>
        createWireProvider(options.wire ?? "chat", {
          apiKey: "test-key",
          baseURL: fake.url,
          retryBaseDelayMs: 10,
          retryMaxDelayMs: 20,
          idleTimeoutMs: 2000,
          ...options.provider,
        }),
    },
  );
  const connect = (clientOptions?: AgentwireClientOptions) =>
    (options.transport ?? "memory") === "memory" ? server.connectInMemory(clientOptions) : server.connect(clientOptions);
  const client = await connect();
  return {
    fake,
    server,
    client,
    connect,
    async close() {
      await server.close();
      await fake.close();
    },
  };
}

/** Create a conversation, subscribe the client, append a user message; returns the id and a recorder. */
export async function newConversation(
  client: AgentwireClient,
  create: Parameters<AgentwireClient["conversation"]["create"]>[0] = {},
  userMessage = "hello",
): Promise<{ id: string; events: EventRecorder }> {
  const conversation = await client.conversation.create(create);
  const events = new EventRecorder(client, conversation.id);
  await client.conversation.subscribe({ conversationId: conversation.id });
  await client.message.append({ conversationId: conversation.id, role: "user", content: userMessage });
  return { id: conversation.id, events };
}

/**
 * One fixture for a test file: started before the first test, closed after
 * the last, and checked after each test — no request may have been one the
 * real API would refuse (the fake records those), and the fake's queue and
 * records are cleared.
 */
export function useAgentFixture(options: AgentFixtureOptions = {}): AgentFixture {
  let current: AgentFixture | undefined;
  beforeAll(async () => {
    current = await startAgentFixture(options);
  });
  afterAll(async () => {
    await current?.close();
  });
  afterEach(() => {
    const rejected = [...get().fake.rejected];
    get().fake.reset();
    expect(rejected).toEqual([]);
  });
  const get = (): AgentFixture => {
    if (!current) throw new Error("the agent fixture is not started (use it inside a test)");
    return current;
  };
  return {
    get fake() {
      return get().fake;
    },
    get server() {
      return get().server;
    },
    get client() {
      return get().client;
    },
    connect: (clientOptions) => get().connect(clientOptions),
    close: () => get().close(),
  };
}

/**
 * What a client sees of one confirmed tool round, as EventRecorder.flow()
 * lists it: the call offered, run and finished, then the next model call.
 */
export const TOOL_ROUND_FLOW = [
  "tool_pending",
  "tool_executing",
  "tool_output",
  "tool_completed",
  "generation_started",
  "generation_progress",
  "message_added",
  "usage_updated",
  "generation_complete",
] as const;
