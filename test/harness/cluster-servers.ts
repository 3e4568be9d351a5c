/**
 * In-process cluster instances for a test file: one fake OpenAI endpoint,
 * and servers on the real Redis (test/harness/redis-test.ts) sharing a store
 * and a key prefix, all closed after each test. Call at the top of the file
 * (it registers the file's hooks).
 */
import { afterAll, afterEach, beforeAll } from "vitest";
import { OpenAIProvider } from "../../src/llm/openai-provider.js";
import type { ConversationStore } from "../../src/store/conversation-store.js";
import { startFakeOpenAI, type FakeOpenAI } from "../fake-openai/server.js";
import { REDIS_URL } from "./redis-test.js";
import type { ConfigOverrides } from "./test-config.js";
import { startTestServer, type TestServer } from "./test-server.js";

export interface ClusterServers {
  /** The file's fake model endpoint (reset after each test). */
  readonly fake: FakeOpenAI;
  /** One more instance on `store` under `keyPrefix`; `limits` are its config's. */
  start(store: ConversationStore, keyPrefix: string, limits?: ConfigOverrides["limits"]): Promise<TestServer>;
}

export function useClusterServers(): ClusterServers {
  let fake: FakeOpenAI | undefined;
  const running: TestServer[] = [];
  beforeAll(async () => {
    fake = await startFakeOpenAI({ apiKey: "test-key" });
  });
  afterAll(async () => {
    await fake?.close();
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((s) => s.close().catch(() => {})));
    fake?.reset();
  });
  return {
    get fake() {
      return fake!;
    },
    async start(store, keyPrefix, limits) {
      const server = await startTestServer(
        { model: "fake-model", server: { redis: REDIS_URL, ownerLeaseMs: 3000 }, ...(limits ? { limits } : {}) },
        {
          store,
          provider: async () => new OpenAIProvider({ apiKey: "test-key", baseURL: fake!.url, retryBaseDelayMs: 10, retryMaxDelayMs: 20 }),
          cluster: { keyPrefix, forwardTimeoutMs: 5000 },
        },
      );
      running.push(server);
      return server;
    },
  };
}
