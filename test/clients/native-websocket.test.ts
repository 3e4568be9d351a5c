/**
 * The generated client on the WHATWG WebSocket that browsers have (Node's
 * built-in one, behind --experimental-websocket on Node 20), not on `ws`.
 */
import { spawn } from "node:child_process";
import { afterAll, beforeAll, expect, it } from "vitest";
import { REPO_ROOT } from "../harness/cli-process.js";
import { startTestServer, type TestServer } from "../harness/test-server.js";

let ts: TestServer;
beforeAll(async () => {
  ts = await startTestServer({ server: { token: "native-token" } });
});
afterAll(async () => {
  await ts.close();
});

function runNativeClient(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ["--experimental-websocket", "--no-warnings", "--import", "tsx", "test/fixtures/native-websocket-client.ts", ...args],
      { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "pipe"] },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

it("connects with the token, calls typed methods, receives notifications, and settles calls in flight at close", async () => {
  const { code, stdout, stderr } = await runNativeClient([ts.url, "native-token"]);
  expect(stderr).toBe("");
  expect(code).toBe(0);
  const seen = JSON.parse(stdout.trim());
  expect(seen.connectionId).toMatch(/^k_/);
  expect(seen.events).toEqual(["1:héllo ✓"]);
  expect(seen.rpcCode).toBe(-32010);
  // A call in flight at close settles either way (answered first, or rejected) — it never hangs.
  expect(["resolved", "CONNECTION_CLOSED"]).toContain(seen.afterClose);
}, 30_000);

it("is refused without the token", async () => {
  const { code } = await runNativeClient([ts.url]);
  expect(code).not.toBe(0);
}, 30_000);
