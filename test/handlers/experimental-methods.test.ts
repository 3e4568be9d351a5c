/**
 * A method marked experimental in the inventory is refused unless the client
 * asked for `capabilities.experimentalApi: true` in initialize. No method is
 * experimental yet, so one is marked for the length of this test — in the
 * method table (protocol/method-table.ts, generated from the inventory), which
 * is what the dispatcher reads.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { methodTable } from "../../protocol/method-table.js";
import { rpcError } from "../harness/rpc-errors.js";
import { startTestServer, type TestServer } from "../harness/test-server.js";

let server: TestServer;
const entry = methodTable["tools.list"] as { experimental?: string };

beforeAll(async () => {
  entry.experimental = "the tool spec shape may still change";
  server = await startTestServer();
});
afterAll(async () => {
  delete entry.experimental;
  await server.close();
});

it("refuses it with EXPERIMENTAL_API_REQUIRED naming the method and the reason, without the capability", async () => {
  const client = await server.connectInMemory();
  const error = await rpcError(client.tools.list());
  expect(error.code).toBe(-32004);
  expect(error.message).toContain("tools.list");
  expect(error.data).toEqual({ method: "tools.list", reason: "the tool spec shape may still change" });
  // Other methods are unaffected.
  expect((await client.server.status()).connections).toBeGreaterThanOrEqual(1);
});

it("serves it to a client that initialized with experimentalApi: true", async () => {
  const client = await server.connectInMemory({ experimentalApi: true });
  expect((await client.tools.list()).tools.map((t) => t.name)).toContain("shell");
});
