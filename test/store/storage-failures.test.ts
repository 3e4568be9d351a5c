/**
 * A write that answers STORAGE_ERROR leaves no trace (issue: the record was
 * broadcast, returned by conversation.get and written by the next good
 * append). Through the protocol, on a real data dir that is remounted
 * read-only or filled up: nothing is announced, nothing is kept in memory,
 * and after the disk is back only the good changes are on disk.
 */
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { newConversation, startAgentFixture, type AgentFixture } from "../harness/agent-fixture.js";
import { rpcError } from "../harness/rpc-errors.js";
import { diskSupport, TestDisk } from "../harness/store-disk.js";
import { startTestServer } from "../harness/test-server.js";

if (diskSupport.reason) console.warn(`storage-failures: ${diskSupport.reason}`);

let disk: TestDisk | undefined;
let fx: AgentFixture | undefined;

afterEach(async () => {
  await disk?.writable().catch(() => undefined);
  await fx?.close();
  await disk?.dispose();
  fx = undefined;
  disk = undefined;
});

async function fixtureOnDisk(): Promise<{ fx: AgentFixture; dataDir: string }> {
  disk = await TestDisk.create(16 << 20);
  const dataDir = join(disk.dir, "data");
  fx = await startAgentFixture({ config: { server: { dataDir } } });
  return { fx, dataDir };
}

/** Waits a little and returns what arrived meanwhile: a refused change must announce nothing. */
const quiet = () => new Promise((r) => setTimeout(r, 150));

describe.skipIf(!diskSupport.readOnly)("on a read-only data dir", () => {
  it("message.append answers -32040; nothing is broadcast, returned or written later", async () => {
    const { fx, dataDir } = await fixtureOnDisk();
    const { id, events } = await newConversation(fx.client, {}, "before");
    await disk!.readOnly();
    const before = events.events.length;
    const error = await rpcError(fx.client.message.append({ conversationId: id, role: "user", content: "lost" }));
    expect(error.code).toBe(-32040);
    expect(error.message).not.toContain(dataDir);
    await quiet();
    expect(events.events.slice(before).map((e) => e.method)).toEqual([]);
    const got = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
    expect(got.records!.map((r) => (r as { content: string }).content)).toEqual(["before"]);
    expect(got.conversation.recordCount).toBe(1);

    await disk!.writable();
    await fx.client.message.append({ conversationId: id, role: "user", content: "after" });
    await fx.server.stop();
    const again = await startTestServer({ server: { dataDir } });
    try {
      const client = await again.connect();
      const reread = await client.conversation.get({ conversationId: id, includeRecords: true });
      expect(reread.records!.map((r) => (r as { content: string }).content)).toEqual(["before", "after"]);
    } finally {
      await again.stop();
    }
  });

  it("conversation.update answers -32040 and changes nothing; conversation.create answers -32040 (not -32603) and leaves no folder", async () => {
    const { fx, dataDir } = await fixtureOnDisk();
    const { id, events } = await newConversation(fx.client, { title: "old" });
    const folders = await readdir(join(dataDir, "conversations"));
    await disk!.readOnly();
    const before = events.events.length;
    expect((await rpcError(fx.client.conversation.update({ conversationId: id, title: "new" }))).code).toBe(-32040);
    expect((await rpcError(fx.client.conversation.create({ title: "never" }))).code).toBe(-32040);
    await quiet();
    expect(events.events.slice(before)).toEqual([]);
    expect((await fx.client.conversation.get({ conversationId: id })).conversation.title).toBe("old");
    expect((await fx.client.conversation.list({})).data.map((c) => c.title)).toEqual(["old"]);
    expect(await readdir(join(dataDir, "conversations"))).toEqual(folders);
  });

  it("a generation whose answer cannot be stored ends with one error -32040; the answer is not announced or kept", async () => {
    const { fx } = await fixtureOnDisk();
    fx.fake.enqueue({ kind: "reply", text: ["never", " stored"] });
    const { id, events } = await newConversation(fx.client);
    await disk!.readOnly();
    const { generationId } = await fx.client.step({ conversationId: id });
    const end = await events.waitForEnd(generationId);
    expect(end.method).toBe("error");
    expect(end.params.code).toBe(-32040);
    const added = events.events.filter((e) => e.method === "message_added").map((e) => e.params.record.role);
    expect(added).toEqual(["user"]);
    const got = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
    expect(got.records).toHaveLength(1);
    expect(got.state.lastError?.code).toBe(-32040);
    await disk!.writable();
    // The conversation stays usable.
    fx.fake.enqueue({ kind: "reply", text: ["fine"] });
    const next = await fx.client.step({ conversationId: id });
    expect((await events.waitForEnd(next.generationId)).method).toBe("generation_complete");
  });
});

describe.skipIf(!diskSupport.full)("on a full data dir", () => {
  it("create and append answer -32040 and leave no folder or temp file behind", async () => {
    const { fx, dataDir } = await fixtureOnDisk();
    const { id } = await newConversation(fx.client, {}, "before");
    const folders = await readdir(join(dataDir, "conversations"));
    const files = await readdir(join(dataDir, "conversations", id));
    await disk!.fill();
    expect((await rpcError(fx.client.conversation.create({ title: "never" }))).code).toBe(-32040);
    expect((await rpcError(fx.client.message.append({ conversationId: id, role: "user", content: "x".repeat(100_000) }))).code).toBe(-32040);
    expect(await readdir(join(dataDir, "conversations"))).toEqual(folders);
    expect(await readdir(join(dataDir, "conversations", id))).toEqual(files);
    await disk!.free();
    await fx.client.message.append({ conversationId: id, role: "user", content: "after" });
    const got = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
    expect(got.records!.map((r) => (r as { content: string }).content)).toEqual(["before", "after"]);
  });
});
