/**
 * Each conversation-scoped method, walked from the inventory, really runs on
 * the conversation's owner: two instances on the real Redis and one shared
 * store (a PostgreSQL database of this file's own when one answers, else one
 * in-memory store object); instance A owns a conversation, and a client on B
 * sends each method with its first example params from test/fixtures. The
 * call must reach A's loaded conversation (its last use moves) while B never
 * loads the conversation nor takes it — which B would do if it ran the
 * method itself. Whether a call succeeds or is refused does not matter here:
 * a refusal that comes from the owner's state (an unknown tool call, an
 * unknown generation) shows the owner answered.
 *
 * Needs Redis (test/harness/redis-test.ts); skipped, saying how to run it,
 * where none answers.
 */
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { AgentwireClient } from "../../clients/typescript/index.js";
import { requests, requestTypeNames, type RequestEntry, type RequestMethod } from "../../protocol/inventory.js";
import type { ConversationStore } from "../../src/store/conversation-store.js";
import { MemoryConversationStore } from "../../src/store/memory-store.js";
import { PostgresConversationStore } from "../../src/store/postgres-store.js";
import { postgresReachable, usePostgresDatabase } from "../harness/postgres-db.js";
import { useClusterServers } from "../harness/cluster-servers.js";
import { redisAvailable } from "../harness/redis-test.js";
import type { TestServer } from "../harness/test-server.js";

const pgUp = redisAvailable && (await postgresReachable("cluster-method-scope.test.ts"));
const FIXTURES = fileURLToPath(new URL("../fixtures/protocol", import.meta.url));

/** The first example params of a method (fixtures are sorted by name), pointed at `conversationId`. */
function exampleParams(method: string, conversationId: string): Record<string, unknown> {
  const dir = join(FIXTURES, requestTypeNames(method).params);
  const first = readdirSync(dir).filter((f) => f.endsWith(".json")).sort()[0]!;
  return { ...(JSON.parse(readFileSync(join(dir, first), "utf8")) as object), conversationId };
}

/** Conversation-scoped methods, in inventory order, with conversation.delete last (it ends the conversation). */
const scoped = (Object.entries(requests as Record<string, RequestEntry>) as [RequestMethod, RequestEntry][])
  .filter(([, entry]) => entry.scope === "conversation")
  .map(([method]) => method)
  .sort((a, b) => Number(a === "conversation.delete") - Number(b === "conversation.delete"));

const cluster = useClusterServers();

const stores = [...(pgUp ? (["postgres"] as const) : []), "memory" as const];

describe.skipIf(!redisAvailable).each(stores)("conversation-scoped methods on the %s store", { timeout: 30_000 }, (kind) => {
  const db = kind === "postgres" ? usePostgresDatabase("scope") : undefined;
  const keyPrefix = `agentwire-test:${randomBytes(6).toString("hex")}:`;
  const memory = new MemoryConversationStore();

  function instance(): Promise<TestServer> {
    const store: ConversationStore = db ? new PostgresConversationStore(db.url) : memory;
    return cluster.start(store, keyPrefix);
  }

  it("each runs on the instance that owns the conversation, never on the one the client reached", async () => {
    expect(scoped).toContain("step");
    const A = await instance();
    const B = await instance();
    const a = await A.connectInMemory();
    const { id: conversationId } = await a.conversation.create({});
    const owner = A.server.app;
    const elsewhere = B.server.app;
    const runtime = owner.hub.loaded(conversationId)!;
    expect(runtime).toBeDefined();

    const ranOn: Record<string, { owner: boolean; loadedOnB: boolean; ownedByB: number; outcome: string }> = {};
    for (const method of scoped) {
      // A connection of its own for each call: unsubscribe then asks the owner, as for a conversation never subscribed to.
      const b = await B.connectInMemory();
      if (method === "step") cluster.fake.enqueue({ kind: "reply", text: ["ok"] });
      runtime.lastUsed = 0;
      const outcome = await b.request(method, exampleParams(method, conversationId) as never).then(
        () => "answered",
        (error: { code?: number }) => `refused ${error.code}`,
      );
      // A generation the call started ends before the next call.
      await runtime.generation?.interrupt();
      ranOn[method] = {
        owner: method === "conversation.delete" ? runtime.deleted : runtime.lastUsed > 0,
        loadedOnB: elsewhere.hub.loaded(conversationId) !== undefined,
        ownedByB: elsewhere.cluster!.ownedCount,
        outcome,
      };
      await b.close();
    }
    for (const [method, seen] of Object.entries(ranOn)) {
      expect({ method, ...seen }).toEqual({ method, owner: true, loadedOnB: false, ownedByB: 0, outcome: seen.outcome });
    }
    // The walk did run the methods (an answer from each, or the owner's refusal), not fail before reaching them.
    expect(ranOn["conversation.get"]!.outcome).toBe("answered");
    expect(ranOn["step"]!.outcome).toBe("answered");
    expect(ranOn["tool.confirm"]!.outcome).toBe("refused -32021");
    expect(ranOn["conversation.delete"]!.outcome).toBe("answered");
  });
});
