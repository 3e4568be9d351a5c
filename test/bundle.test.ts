/**
 * The bundle that `npm start` and the `agentwire` bin run (dist/bundle,
 * built by esbuild) serves like the source does. The build runs first, so
 * this tests what a user would start.
 */
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WebSocket } from "ws";
import { afterAll, beforeAll, expect, it } from "vitest";
import { AgentwireClient } from "../clients/typescript/index.js";
import { startFakeOpenAI } from "./fake-openai/server.js";
import { newConversation } from "./harness/agent-fixture.js";
import { killAllCli, REPO_ROOT, runCli } from "./harness/cli-process.js";
import { startFakeWebServer } from "./harness/fake-web-server.js";

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

it("runs the offloaded tool work in its worker: web_fetch converts HTML, search_files matches, edit_file diffs", async () => {
  // The HTML converter is CommonJS loaded lazily: in the bundle it arrived as `default` only, and every
  // HTML fetch failed ("Cannot read properties of undefined (reading 'translate')") while the source passed.
  const page = `<!doctype html><html><head><title>Fake &amp; Page</title><script>alert(1)</script></head>
<body><h1>Hello web</h1><p>Some <b>bold</b> text and <a href="/next">a link</a>.</p><ul><li>one</li><li>two</li></ul></body></html>`;
  const web = await startFakeWebServer({ "/page.html": (_req, res) => res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(page) });
  const fake = await startFakeOpenAI({ apiKey: "test-key" });
  const root = await mkdtemp(join(tmpdir(), "agentwire-bundle-tools-"));
  try {
    const workspace = join(root, "workspace");
    await mkdir(workspace);
    await writeFile(join(workspace, "notes.txt"), "alpha\nneedle one\nbeta\n");
    await writeFile(join(workspace, "evil.txt"), `${"a".repeat(40)}!\n`);
    const xdg = join(root, "config");
    await mkdir(join(xdg, "agentwire"), { recursive: true });
    await writeFile(join(xdg, "agentwire", "agentwire.json"), JSON.stringify({ tools: { web: { fetch: { enabled: true } } } }));
    const cli = runCli(
      ["serve", "--port", "0", "--data-dir", join(root, "data"), "--log-level", "silent"],
      { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: "test-key", AGENTWIRE_MODEL: "fake-model", XDG_CONFIG_HOME: xdg },
      "dist/bundle/cli.mjs",
    );
    const client = await AgentwireClient.connect(await cli.listening(20_000), { WebSocket });
    const call = (id: string, name: string, args: object) => ({ id, name, args: JSON.stringify(args) });
    fake.enqueue(
      {
        kind: "reply",
        toolCalls: [
          call("call_fetch", "web_fetch", { url: `${web.url}/page.html` }),
          call("call_search", "search_files", { pattern: "needle", path: "notes.txt" }),
          call("call_edit", "edit_file", { path: "notes.txt", old_string: "beta", new_string: "gamma" }),
          // Backtracks for hours: the worker running it is terminated when the call's budget (1 s here) runs out.
          call("call_evil", "search_files", { pattern: "^(a+)+$", path: "evil.txt" }),
        ],
      },
      { kind: "reply", text: ["done"] },
    );
    const { id, events } = await newConversation(client, { workspace, settings: { toolTimeoutMs: 2000 } });
    const { generationId } = await client.step({ conversationId: id, autoConfirm: true });
    expect((await events.waitForEnd(generationId, 20_000)).method).toBe("generation_complete");
    const results = Object.fromEntries(
      fake.requests[1]!.messages.filter((m: { role: string }) => m.role === "tool").map((m: { tool_call_id: string; content: string }) => [m.tool_call_id, m.content]),
    );
    expect(results.call_fetch).toBe(
      [
        `URL: ${web.url}/page.html`,
        "Status: 200 OK",
        "Content-Type: text/html",
        "Title: Fake & Page",
        "",
        "# Hello web\n\nSome **bold** text and [a link](/next).\n\n* one\n* two",
      ].join("\n"),
    );
    expect(results.call_search).toBe("notes.txt:2:needle one");
    expect(results.call_edit).toBe(
      "Edited notes.txt: replaced 1 occurrence (+1 -1 lines)\n\n--- a/notes.txt\n+++ b/notes.txt\n@@ -1,3 +1,3 @@\n alpha\n needle one\n-beta\n+gamma\n",
    );
    expect(results.call_evil).toMatch(/^\[search cut short: the pattern used up the call's 1000 ms time budget while matching evil\.txt/);
    await client.close();
    cli.child.kill("SIGTERM");
    expect((await cli.exited).code).toBe(0);
    expect(cli.stderr()).not.toMatch(/Dynamic require|ERR_|uncaught/i);
  } finally {
    await web.close();
    await fake.close();
    await rm(root, { recursive: true, force: true });
  }
}, 60_000);
