/**
 * The bundle that `npm start` and the `agentwire` bin run (dist/bundle,
 * built by esbuild) serves like the source does. The build runs first, so
 * this tests what a user would start.
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WebSocket } from "ws";
import { afterAll, beforeAll, expect, it } from "vitest";
import { AgentwireClient } from "../clients/typescript/index.js";
import { killAllCli, REPO_ROOT, runCli } from "./harness/cli-process.js";

let dataDir: string;
beforeAll(async () => {
  execFileSync("npm", ["run", "build", "--silent"], { cwd: REPO_ROOT, stdio: "pipe" });
  dataDir = await mkdtemp(join(tmpdir(), "agentwire-bundle-"));
}, 120_000);
afterAll(async () => {
  await killAllCli();
  await rm(dataDir, { recursive: true, force: true });
});

it("starts, answers HTTP and JSON-RPC, loads its lazy parts, and stops on SIGTERM", async () => {
  // A closed port as the model endpoint: models.list must say so fast and clearly.
  const cli = runCli(["serve", "--port", "0", "--data-dir", dataDir], { OPENAI_BASE_URL: "http://127.0.0.1:9/v1" }, "dist/bundle/cli.mjs");
  const url = await cli.listening();
  const http = url.replace("ws://", "http://");
  expect(await (await fetch(`${http}/healthz`)).json()).toMatchObject({ ok: true });
  expect(await (await fetch(`${http}/openrpc.json`)).json()).toMatchObject({ openrpc: expect.any(String) });
  // prom-client is CommonJS, loaded lazily: in the bundle its exports arrive differently than under Node.
  const metrics = await fetch(`${http}/metrics`);
  expect(metrics.status).toBe(200);
  expect(await metrics.text()).toContain("agentwire_connections ");

  const client = await AgentwireClient.connect(url, { WebSocket });
  const { id } = await client.conversation.create({ title: "bundled" });
  await client.message.append({ conversationId: id, role: "user", content: "hi" });
  expect((await client.tools.list()).tools.map((t) => t.name)).toContain("shell");
  // models.list loads the provider chunk (the openai SDK); no endpoint is reachable, and the result says so.
  const listed = await client.models.list();
  expect(listed.providers).toEqual([expect.objectContaining({ name: "default", status: "unreachable", error: expect.stringContaining("ECONNREFUSED") })]);
  await client.close();

  cli.child.kill("SIGTERM");
  expect((await cli.exited).code).toBe(0);
  expect(cli.stderr()).not.toMatch(/Dynamic require|ERR_|uncaught/i);
}, 60_000);

it("carries zod without its translations (start-up compiles every byte loaded)", async () => {
  // `import { z } from "zod"` pulls zod's namespace whole, 64 locales included (about 450 KB the start
  // compiled for nothing); `import * as z` lets esbuild keep only what is used. A German message
  // stands for all of them.
  const dir = join(REPO_ROOT, "dist", "bundle");
  const files = (await readdir(dir)).filter((f) => f.endsWith(".mjs"));
  expect(files.length).toBeGreaterThan(1);
  for (const file of files) expect(await readFile(join(dir, file), "utf8"), file).not.toContain("ltige Eingabe");
});
