/**
 * `connected` arrives right after the initialize answer, often before the
 * caller of `connect()` can register for it; a late `on("connected")`
 * still hears it, once. (The client's own logic: an in-memory link will do.)
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../harness/test-server.js";

let ts: TestServer;
beforeAll(async () => {
  ts = await startTestServer();
});
afterAll(async () => {
  await ts.close();
});

it("calls a handler registered after connect() with the connected notification, once", async () => {
  const client = await ts.connectInMemory();
  await new Promise((r) => setTimeout(r, 50)); // the notification has surely arrived by now
  const seen: unknown[] = [];
  client.on("connected", (p) => seen.push(p));
  const dispose = client.on("connected", () => seen.push("disposed handler ran"));
  dispose();
  await new Promise((r) => setTimeout(r, 20));
  expect(seen).toEqual([expect.objectContaining({ connectionId: client.connectionId, protocolVersion: "1.0" })]);
});
