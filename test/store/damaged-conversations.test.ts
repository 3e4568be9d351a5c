/**
 * One damaged conversation harms nobody else (issue: a truncated meta.json
 * made every conversation.list page fail with -32603 and the conversation
 * could not even be deleted; a missing first segment read as zero records).
 * Through the protocol: reported at start (log and server.status), listed
 * apart, CONVERSATION_DAMAGED on get, removable with delete.
 */
import { rm, truncate } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { createLogger } from "../../src/logging/logger.js";
import { eventually } from "../harness/eventually.js";
import { rpcError } from "../harness/rpc-errors.js";
import { startTestServer, type TestServer } from "../harness/test-server.js";

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

it("reports damaged conversations at start, lists them apart, refuses get with -32011 and deletes them", async () => {
  const first = await startTestServer();
  const client = await first.connect();
  const ids: string[] = [];
  for (const title of ["healthy", "truncated meta", "lost first segment"]) {
    const c = await client.conversation.create({ title });
    await client.message.append({ conversationId: c.id, role: "user", content: `in ${title}` });
    ids.push(c.id);
  }
  await first.stop();
  const [healthy, truncatedMeta, lostSegment] = ids as [string, string, string];
  await truncate(join(first.dataDir, "conversations", truncatedMeta, "meta.json"), 7);
  await rm(join(first.dataDir, "conversations", lostSegment, "records-000000.json"));

  const lines: string[] = [];
  server = await startTestServer({ server: { dataDir: first.dataDir } }, { log: createLogger("warn", (line) => lines.push(line)) });
  const again = await server.connect();

  // At start: the background check finds both, logs each, and server.status lists them.
  await eventually(async () => (await again.server.status()).damagedConversations.length === 2, 5000, "two damaged conversations reported");
  const status = await again.server.status();
  expect(status.damagedConversations.map((d) => d.conversationId).sort()).toEqual([lostSegment, truncatedMeta].sort());
  for (const id of [truncatedMeta, lostSegment]) expect(lines.some((l) => l.includes(id) && l.includes("damaged"))).toBe(true);

  // Listing still works for everyone: the damaged one is named apart, with what is wrong.
  const page = await again.conversation.list({});
  expect(page.data.map((c) => c.id)).toContain(healthy);
  expect(page.data.map((c) => c.id)).not.toContain(truncatedMeta);
  expect(page.damaged?.map((d) => d.conversationId)).toContain(truncatedMeta);
  expect(JSON.stringify(page)).not.toContain(first.dataDir);

  // get answers a clear code; the healthy conversation is untouched.
  for (const id of [truncatedMeta, lostSegment]) {
    const error = await rpcError(again.conversation.get({ conversationId: id, includeRecords: true }));
    expect(error.code).toBe(-32011);
    expect((error.data as { conversationId: string; problem: string }).conversationId).toBe(id);
    expect((error.data as { problem: string }).problem).not.toContain(first.dataDir);
  }
  const fine = await again.conversation.get({ conversationId: healthy, includeRecords: true });
  expect(fine.records!.map((r) => (r as { content: string }).content)).toEqual(["in healthy"]);

  // delete removes them; nothing damaged is left.
  for (const id of [truncatedMeta, lostSegment]) await again.conversation.delete({ conversationId: id });
  const after = await again.conversation.list({});
  expect(after.data.map((c) => c.id)).toEqual([healthy]);
  expect(after.damaged).toBeUndefined();
  expect((await again.server.status()).damagedConversations).toEqual([]);
  expect((await again.server.status()).conversationsStored).toBe(1);
});
