/**
 * Dead peers are found and dropped: the server pings every heartbeat
 * interval and terminates a socket that did not answer the previous ping.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { openRaw } from "../harness/raw-socket.js";
import { startTestServer, type TestServer } from "../harness/test-server.js";

let ts: TestServer;
beforeAll(async () => {
  ts = await startTestServer({ server: { heartbeatMs: 100 } });
});
afterAll(async () => {
  await ts.close();
});

it("terminates a peer that stops answering pings and keeps one that answers", async () => {
  // Timed from before the socket opens: its first ping comes at the next tick of the server's
  // interval (which started with the server), and the termination one interval after that.
  const opening = Date.now();
  const silent = await openRaw(ts.url, { autoPong: false });
  const lively = await ts.connect();
  const closed = await silent.closed;
  // Terminated (no close frame), after at least one unanswered ping (a few ms of clock granularity allowed).
  expect(closed.code).toBe(1006);
  expect(Date.now() - opening).toBeGreaterThanOrEqual(95);
  // The answering client is still served after several intervals.
  await new Promise((r) => setTimeout(r, 350));
  const status = await lively.server.status();
  expect(status.connections).toBe(1);
});
