/**
 * The bundle that `npm start` and the `agentwire` bin run (dist/bundle,
 * built by esbuild) serves like the source does. The build runs first, so
 * this tests what a user would start.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WebSocket } from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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

/**
 * Issue 19, item 7: a tool runs as a child of the serving process and as the
 * same user, so `/proc/$PPID/environ` and `/proc/$PPID/cmdline` were one `cat`
 * away from the API key and the token the tool environment leaves out (and
 * `ps` showed --token to every local user). The tool below reads both.
 */
describe.skipIf(process.platform !== "linux")("the serving process holds no secret a tool can read from /proc", { timeout: 60_000 }, () => {
  const READ_PARENT = "tr '\\0' '\\n' < /proc/$PPID/environ; echo '--- cmdline'; tr '\\0' ' ' < /proc/$PPID/cmdline; echo";
  const secret = (name: string) => `${name}-${randomBytes(8).toString("hex")}`;

  /** One serve run: the model (which requires the API key) has the shell tool read its parent; returns the tool's output. */
  async function toolReadsParent(args: string[], env: Record<string, string>, token: string, apiKey: string): Promise<{ output: string; stderr: string }> {
    const fake = await startFakeOpenAI({ apiKey });
    const dir = await mkdtemp(join(tmpdir(), "agentwire-secrets-"));
    try {
      const cli = runCli(
        ["serve", "--port", "0", "--data-dir", join(dir, "data"), "--log-level", "warn", ...args],
        { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: apiKey, AGENTWIRE_MODEL: "fake-model", ...env },
        "dist/bundle/cli.mjs",
      );
      const client = await AgentwireClient.connect(await cli.listening(20_000), { WebSocket, token });
      fake.enqueue({ kind: "reply", toolCalls: [{ id: "read_1", name: "shell", args: JSON.stringify({ command: READ_PARENT }) }] }, { kind: "reply", text: ["ok"] });
      const { id, events } = await newConversation(client, { workspace: dir });
      const { generationId } = await client.step({ conversationId: id, autoConfirm: true });
      const completed = await events.waitForMethod("tool_completed", 15_000);
      await events.waitForEnd(generationId, 15_000);
      await client.close();
      // The key still works inside the process: the fake answered both model calls.
      expect(fake.rejected).toEqual([]);
      expect(fake.requests).toHaveLength(2);
      cli.child.kill("SIGTERM");
      expect((await cli.exited).code).toBe(0);
      return { output: String(completed.params.record.result), stderr: cli.stderr() };
    } finally {
      await fake.close();
      await rm(dir, { recursive: true, force: true });
    }
  }

  function expectClean(output: string, secrets: string[], title: RegExp): void {
    expect(output).toContain("--- cmdline");
    for (const value of secrets) expect(output, "a secret in /proc/$PPID").not.toContain(value);
    // The command line is informative still: what runs, with its flags, minus the secret values.
    expect(output.slice(output.indexOf("--- cmdline"))).toMatch(title);
  }

  it("serve: OPENAI_API_KEY, AGENTWIRE_TOKEN and any other variable are gone from /proc/$PPID/environ", async () => {
    const [apiKey, token, other] = [secret("sk-key"), secret("wire-token"), secret("aws-secret")];
    const { output, stderr } = await toolReadsParent([], { AGENTWIRE_TOKEN: token, AWS_SECRET_ACCESS_KEY: other }, token, apiKey);
    expectClean(output, [apiKey, token, other, "AWS_SECRET_ACCESS_KEY", "OPENAI_API_KEY"], /agentwire serve --port 0 --data-dir \S+ --log-level warn/);
    expect(stderr).not.toMatch(/could not clear/);
  });

  it("serve --token TOKEN: the token is gone from /proc/$PPID/cmdline (and so from ps)", async () => {
    const [apiKey, token] = [secret("sk-key"), secret("flag-token")];
    const { output } = await toolReadsParent(["--token", token], {}, token, apiKey);
    expectClean(output, [apiKey, token], /agentwire serve .*--token \*\*\*/);
  });

  it("serve --token-file PATH: the token is read from the file and appears nowhere", async () => {
    const [apiKey, token] = [secret("sk-key"), secret("file-token")];
    const file = join(await mkdtemp(join(tmpdir(), "agentwire-token-")), "token");
    await writeFile(file, `${token}\n`, { mode: 0o600 });
    try {
      const { output } = await toolReadsParent(["--token-file", file], {}, token, apiKey);
      expectClean(output, [apiKey, token], new RegExp(`agentwire serve .*--token-file ${file}`));
    } finally {
      await rm(join(file, ".."), { recursive: true, force: true });
    }
  });

  it("chat (its embedded server runs tools in the chat process): neither key nor token in /proc/$PPID", async () => {
    const [apiKey, token, envToken] = [secret("sk-key"), secret("chat-token"), secret("env-token")];
    const fake = await startFakeOpenAI({ apiKey });
    const dir = await mkdtemp(join(tmpdir(), "agentwire-secrets-chat-"));
    try {
      fake.enqueue({ kind: "reply", toolCalls: [{ id: "read_1", name: "shell", args: JSON.stringify({ command: READ_PARENT }) }] }, { kind: "reply", text: ["ok"] });
      const cli = runCli(
        ["chat", "read your parent", "--yes", "--json", "--data-dir", join(dir, "data"), "--token", token],
        { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: apiKey, AGENTWIRE_MODEL: "fake-model", AGENTWIRE_TOKEN: envToken },
        "dist/bundle/cli.mjs",
        dir,
      );
      expect((await cli.exited).code).toBe(0);
      expect(fake.rejected).toEqual([]);
      const completed = cli
        .stdout()
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { method?: string; params?: any })
        .find((line) => line.method === "tool_completed");
      expectClean(String(completed?.params.record.result), [apiKey, token, envToken], /agentwire chat read your parent --yes --json --data-dir \S+ --token \*\*\*/);
    } finally {
      await fake.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
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
    await writeFile(join(xdg, "agentwire", "agentwire.json"), JSON.stringify({ tools: { web: { fetch: { enabled: true }, allowPrivateNetwork: ["127.0.0.1"] } } }));
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
