/**
 * conversation.create { id }: a conversation at a client-chosen id, checked
 * against the ConversationId pattern; an id taken (also by a deleted-then-
 * recreated or an imported conversation) is CONVERSATION_EXISTS naming it,
 * and the existing conversation is untouched. On the lowdb store here; the
 * stores' shared error is in test/store/store-contract.test.ts (lowdb,
 * memory, PostgreSQL) and the cluster path in test/cluster/cluster-wiring.test.ts.
 */
import { afterEach, describe, expect, it } from "vitest";
import { expectInvalidParams, rpcError } from "../harness/rpc-errors.js";
import { startTestServer, type TestServer } from "../harness/test-server.js";

let ts: TestServer | undefined;
afterEach(async () => {
  await ts?.close();
  ts = undefined;
});

describe("conversation.create { id }", () => {
  it("creates at the id asked, refuses a clash with CONVERSATION_EXISTS, and a malformed id with -32602", async () => {
    ts = await startTestServer();
    const client = await ts.connectInMemory();
    const made = await client.conversation.create({ id: "ticket-4711", title: "first" });
    expect(made.id).toBe("ticket-4711");
    await client.message.append({ conversationId: "ticket-4711", role: "user", content: "hello" });

    const clash = await rpcError(client.conversation.create({ id: "ticket-4711", title: "second" }));
    expect(clash.code).toBe(-32013);
    expect(clash.message).toContain('"ticket-4711"');
    expect(clash.data).toEqual({ conversationId: "ticket-4711" });
    // An import at a taken id is refused alike, and leaves the existing conversation as it was.
    const importClash = await rpcError(
      client.conversation.create({ id: "ticket-4711", records: [{ type: "message", role: "user", content: "other" }] }),
    );
    expect(importClash.code).toBe(-32013);
    const kept = await client.conversation.get({ conversationId: "ticket-4711", includeRecords: true });
    expect(kept.conversation.title).toBe("first");
    expect(kept.records!.map((r) => (r.type === "message" ? r.content : r.type))).toEqual(["hello"]);
    expect((await client.conversation.list({})).data.map((c) => c.id)).toEqual(["ticket-4711"]);

    for (const id of ["../x", "", "a".repeat(129), "c 1"]) await expectInvalidParams(client.conversation.create({ id }), "id");

    // A deleted conversation's id is free again.
    await client.conversation.delete({ conversationId: "ticket-4711" });
    expect((await client.conversation.create({ id: "ticket-4711" })).title).toBe("");
    // Without an id, the server picks one.
    expect((await client.conversation.create({})).id).toMatch(/^c_/);
  });
});
