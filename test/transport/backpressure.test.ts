/**
 * A client that stops reading is dropped once its send backlog passes
 * maxBufferedBytes, and everyone else keeps being served.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { eventually } from "../harness/eventually.js";
import { openInitialized } from "../harness/raw-socket.js";
import { startTestServer, type TestServer } from "../harness/test-server.js";

let ts: TestServer;
beforeAll(async () => {
  ts = await startTestServer({ limits: { maxBufferedBytes: 256 * 1024 } });
});
afterAll(async () => {
  await ts.close();
});

it("drops a subscriber that stops reading; other clients are unaffected", async () => {
  const writer = await ts.connect();
  const { id } = await writer.conversation.create({ title: "firehose" });
  const stalled = await openInitialized(ts.url);
  stalled.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "conversation.subscribe", params: { conversationId: id } }));
  await stalled.next();
  // Stop reading: the kernel buffers fill, then the server's backlog grows.
  (stalled.socket as unknown as { _socket: { pause(): void } })._socket.pause();

  const big = "x".repeat(64 * 1024);
  let appended = 0;
  await eventually(async () => {
    await Promise.all(
      Array.from({ length: 8 }, () => writer.message.append({ conversationId: id, role: "user", content: big })),
    );
    appended += 8;
    return (await writer.server.status()).connections === 1;
  }, 20_000);
  expect(appended).toBeGreaterThan(0);
  expect((await writer.server.status()).totals.slowConsumersDropped).toBe(1);
  // The writer (the only connection left) still gets answers.
  const got = await writer.conversation.get({ conversationId: id });
  expect(got.conversation.recordCount).toBe(appended);
});
