/**
 * What ships, exercised: the bundle `npm start` and the `agentwire` bin run
 * (dist/bundle/cli.cjs, built from the current source once per run by
 * vitest's global setup, test/harness/shipped-bundle.ts) loads each of its
 * lazy parts here, as a user's process would: the method schemas (an invalid request), /metrics (prom-client), the
 * provider (openai; @anthropic-ai/sdk for the anthropic wire), the worker's jobs (web_fetch's HTML converter, regex
 * search, diffs), an MCP stdio server (the MCP SDK), the PostgreSQL store
 * (pg), cluster mode (ioredis) with a request forwarded between two
 * instances, the web client page (dist/web), the chat, conversations,
 * config and trust commands, and the `agentwire/embed` and `agentwire/client`
 * entries as a project that depends on this one imports them.
 *
 * Tests from source cannot see a defect of the bundle alone: a CommonJS
 * package loaded lazily arrives there with its exports under `default` only
 * (web_fetch failed on every HTML page in the bundle while the tests passed).
 * Every run below is recorded (test/harness/module-loads.ts), and the
 * last test checks that the runs together loaded every chunk of dist/bundle:
 * a new lazily loaded part fails it until a test here exercises it.
 *
 * PostgreSQL and Redis are the machine's (as in the other suites); without
 * them those parts skip, each saying how to run it, and the chunk check skips
 * too, saying why.
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { WebSocket } from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentwireClient } from "../../clients/typescript/index.js";
import { startFakeOpenAI, type FakeOpenAI } from "../fake-openai/server.js";
import { agentText, killEditors, startEditor } from "../acp/acp-editor.js";
import { stdioFixture } from "../fixtures/mcp/mcp-fixture.js";
import { newConversation } from "../harness/agent-fixture.js";
import { killAllCli, REPO_ROOT, runCli, type CliProcess } from "../harness/cli-process.js";
import { EventRecorder } from "../harness/event-recorder.js";
import { eventually } from "../harness/eventually.js";
import { startFakeWebServer } from "../harness/fake-web-server.js";
import { loadedModules, recordModuleLoads } from "../harness/module-loads.js";
import { postgresReachable, usePostgresDatabase } from "../harness/postgres-db.js";
import { REDIS_URL, redisAvailable, useRedis } from "../harness/redis-test.js";
import { shippedBundle } from "../harness/shipped-bundle.js";

const postgresUp = await postgresReachable("bundle-smoke.test.ts");

const BUNDLE_DIR = join(REPO_ROOT, "dist", "bundle");
/**
 * Chunks (by name, without esbuild's hash) no run here has to load, with the reason: only for code a
 * dependency loads lazily on a path agentwire never takes. A chunk only such chunks import is exempt too.
 */
const NEVER_LOADED: Record<string, string> = {
  node: "@anthropic-ai/sdk's lazy Node parts: its credentials file (agentwire gives the key) and its environments worker's toolset",
};

let entry: string;
let root: string;
let loads: string;
/** Parts skipped for a missing service: the chunk check cannot be complete then. */
const skippedParts: string[] = [];

beforeAll(async () => {
  entry = shippedBundle();
  root = await mkdtemp(join(tmpdir(), "agentwire-bundle-smoke-"));
  loads = join(root, "module-loads.txt");
});
afterAll(async () => {
  await killAllCli();
  await rm(root, { recursive: true, force: true });
});

/** The shipped CLI as a child process, its module loads recorded. */
function bundle(args: string[], env: Record<string, string> = {}, cwd?: string): CliProcess {
  return runCli(args, { ...recordModuleLoads(loads), ...env }, entry, cwd);
}

/** A directory of the test's own under the run's temp dir. */
async function dir(name: string): Promise<string> {
  const path = join(root, `${name}-${randomBytes(3).toString("hex")}`);
  await mkdir(path, { recursive: true });
  return path;
}

/** An XDG_CONFIG_HOME whose agentwire.json (the user's own file, trusted) holds `config`. */
async function userConfig(config: object): Promise<string> {
  const xdg = await dir("config");
  await mkdir(join(xdg, "agentwire"));
  await writeFile(join(xdg, "agentwire", "agentwire.json"), JSON.stringify(config));
  return xdg;
}

const modelEnv = (fake: FakeOpenAI) => ({ OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: "test-key", AGENTWIRE_MODEL: "fake-model" });

async function stop(cli: CliProcess): Promise<void> {
  cli.child.kill("SIGTERM");
  expect((await cli.exited).code, cli.stderr()).toBe(0);
  expect(cli.stderr()).not.toMatch(/Dynamic require|ERR_|uncaught/i);
}

it("serve: answers HTTP and JSON-RPC, /metrics (prom-client), models.list (the provider chunk, a runtime's), history.sources (the history index), and stops on SIGTERM", async () => {
  // A closed port as the model endpoint: models.list must say so fast and clearly.
  // A configured runtime: its code (runtime-table and the runtimes) loads only when one is.
  const xdg = await userConfig({ runtimes: { codex: { runtime: "codex" } } });
  const history = await dir("history");
  // A server mcp.add saved before: the saved file's schema (config-mcp.ts) loads when a data dir has one.
  const data = await dir("data");
  await writeFile(join(data, "mcp-servers.json"), JSON.stringify({ mcpServers: { saved: { command: "node", disabled: true } } }));
  const cli = bundle(["serve", "--port", "0", "--data-dir", data], {
    OPENAI_BASE_URL: "http://127.0.0.1:9/v1",
    XDG_CONFIG_HOME: xdg,
    CODEX_HOME: join(history, "codex"),
    CLAUDE_CONFIG_DIR: join(history, "claude"),
  });
  const url = await cli.listening(20_000);
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
  // Valid params are checked as data; an invalid one loads the method schemas (the inventory chunk), whose error names the field.
  await expect(client.message.append({ conversationId: id, role: "user", content: "a", command: "b" } as never)).rejects.toMatchObject({
    code: -32602,
    message: expect.stringContaining("give content or command, not both"),
  });
  expect((await client.tools.list()).tools.map((t) => t.name)).toContain("shell");
  expect((await client.mcp.list()).servers).toEqual([expect.objectContaining({ name: "saved", state: "disabled" })]);
  // models.list loads the provider chunk (the openai SDK); no endpoint is reachable, and the result says so.
  const listed = await client.models.list();
  expect(listed.providers).toEqual([expect.objectContaining({ name: "default", status: "unreachable", error: expect.stringContaining("ECONNREFUSED") })]);
  expect(listed.runtimes).toEqual([expect.objectContaining({ name: "codex", runtime: "codex" })]);
  // The history index loads at the first history.* call.
  expect((await client.history.sources()).sources.map((source) => source.kind)).toEqual(["codex", "claude"]);
  await client.close();
  await stop(cli);
}, 60_000);

it("runs the offloaded tool work in its worker: web_fetch converts HTML, search_files matches, edit_file diffs", async () => {
  // The HTML converter is CommonJS loaded lazily: in the bundle it arrived as `default` only, and every
  // HTML fetch failed ("Cannot read properties of undefined (reading 'translate')") while the source passed.
  const page = `<!doctype html><html><head><title>Fake &amp; Page</title><script>alert(1)</script></head>
<body><h1>Hello web</h1><p>Some <b>bold</b> text and <a href="/next">a link</a>.</p><ul><li>one</li><li>two</li></ul></body></html>`;
  const web = await startFakeWebServer({ "/page.html": (_req, res) => res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(page) });
  const fake = await startFakeOpenAI({ apiKey: "test-key" });
  try {
    const workspace = await dir("workspace");
    await writeFile(join(workspace, "notes.txt"), "alpha\nneedle one\nbeta\n");
    await writeFile(join(workspace, "evil.txt"), `${"a".repeat(40)}!\n`);
    // list_files with a glob under a .gitignore: picomatch and ignore load at such a call.
    await writeFile(join(workspace, ".gitignore"), "hidden.txt\n");
    await writeFile(join(workspace, "hidden.txt"), "ignored\n");
    // A workspace approvals file: its schema (the conversation settings' ApprovalRule) loads when a turn first reads one.
    await mkdir(join(workspace, ".agentwire"));
    await writeFile(join(workspace, ".agentwire", "approvals.json"), JSON.stringify({ rules: [{ tool: "not a tool!" }] }));
    const xdg = await userConfig({ tools: { web: { fetch: { enabled: true }, allowPrivateNetwork: ["127.0.0.1"] } } });
    const cli = bundle(["serve", "--port", "0", "--data-dir", await dir("data"), "--log-level", "silent"], { ...modelEnv(fake), XDG_CONFIG_HOME: xdg });
    const client = await AgentwireClient.connect(await cli.listening(20_000), { WebSocket });
    const call = (id: string, name: string, args: object) => ({ id, name, args: JSON.stringify(args) });
    fake.enqueue(
      {
        kind: "reply",
        toolCalls: [
          call("call_fetch", "web_fetch", { url: `${web.url}/page.html` }),
          call("call_search", "search_files", { pattern: "needle", path: "notes.txt" }),
          call("call_edit", "edit_file", { path: "notes.txt", old_string: "beta", new_string: "gamma" }),
          call("call_list", "list_files", { glob: "*.txt" }),
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
    expect(results.call_list).toContain("notes.txt");
    expect(results.call_list).not.toContain("hidden.txt");
    expect(results.call_edit).toBe(
      "Edited notes.txt: replaced 1 occurrence (+1 -1 lines)\n\n--- a/notes.txt\n+++ b/notes.txt\n@@ -1,3 +1,3 @@\n alpha\n needle one\n-beta\n+gamma\n",
    );
    expect(results.call_evil).toMatch(/^\[search cut short: the pattern used up the call's 1000 ms time budget while matching evil\.txt/);
    const notice = events.events.find((e) => e.method === "notice" && (e.params as { code?: string }).code === "approvals_file_invalid");
    expect((notice?.params as { message?: string } | undefined)?.message).toContain("rules.0.tool: not a tool name");
    await client.close();
    await stop(cli);
  } finally {
    await web.close();
    await fake.close();
  }
}, 60_000);

it("the built-in tools' zod schemas load for arguments their data refuses, and word the error; a plan set through zod carries into a fork", async () => {
  // The tools' parameters are data (src/tools/builtin-tool-schemas.ts); each tool's zod schema is a chunk of its own, loaded here.
  const fake = await startFakeOpenAI({ apiKey: "test-key" });
  try {
    const cli = bundle(["serve", "--port", "0", "--data-dir", await dir("data"), "--log-level", "silent"], modelEnv(fake));
    const client = await AgentwireClient.connect(await cli.listening(20_000), { WebSocket });
    const call = (id: string, name: string, args: object) => ({ id, name, args: JSON.stringify(args) });
    fake.enqueue(
      {
        kind: "reply",
        toolCalls: [
          call("call_shell", "shell", { command: 5 }),
          call("call_read", "read_file", { path: "" }),
          call("call_ask", "ask_user", { question: "Which?", choices: ["a", "a"] }),
          call("call_skill", "load_skill", { name: "" }),
          call("call_spawn", "spawn_agent", { prompt: "" }),
          // Valid, but its entries' text is trimmed, which only zod does: taken through the schema.
          call("call_plan", "update_plan", { entries: [{ content: " Check the tools ", status: "in_progress" }] }),
        ],
      },
      { kind: "reply", text: ["done"] },
    );
    const workspace = await dir("tools-workspace");
    const { id, events } = await newConversation(client, { workspace });
    const { generationId } = await client.step({ conversationId: id, autoConfirm: true });
    expect((await events.waitForEnd(generationId, 20_000)).method).toBe("generation_complete");
    const results = Object.fromEntries(
      fake.requests[1]!.messages.filter((m: { role: string }) => m.role === "tool").map((m: { tool_call_id: string; content: string }) => [m.tool_call_id, m.content]),
    );
    expect(results.call_shell).toBe("Invalid arguments:\ncommand: Invalid input: expected string, received number");
    expect(results.call_read).toBe("Invalid arguments:\npath: Too small: expected string to have >=1 characters");
    expect(results.call_ask).toBe("Invalid arguments:\nchoices: must not repeat a choice");
    expect(results.call_skill).toMatch(/^Invalid arguments:\nname: /);
    expect(results.call_spawn).toMatch(/^Invalid arguments:\nprompt: /);
    const entries = [{ content: "Check the tools", status: "in_progress" }];
    expect((await client.conversation.get({ conversationId: id })).state.plan).toMatchObject({ entries });
    // The fork finds the plan its records set (src/handlers/fork-plan.ts, loaded with the first fork).
    const fork = await client.conversation.fork({ conversationId: id });
    expect((await client.conversation.get({ conversationId: fork.id })).state.plan).toMatchObject({ entries, generationId });
    await client.close();
    await stop(cli);
  } finally {
    await fake.close();
  }
}, 60_000);

it("server.socketThread: the socket thread's entry loads, a step streams to two sockets, /metrics is answered through the main thread", async () => {
  const fake = await startFakeOpenAI({ apiKey: "test-key" });
  try {
    const xdg = await userConfig({ server: { socketThread: true } });
    const cli = bundle(["serve", "--port", "0", "--data-dir", await dir("data"), "--log-level", "warn"], { ...modelEnv(fake), XDG_CONFIG_HOME: xdg });
    const url = await cli.listening(20_000);
    const client = await AgentwireClient.connect(url, { WebSocket });
    const watcher = await AgentwireClient.connect(url, { WebSocket });
    fake.enqueue({ kind: "reply", text: ["through ", "the ", "thread"] });
    const { id, events } = await newConversation(client);
    const watched = new EventRecorder(watcher, id);
    await watcher.conversation.subscribe({ conversationId: id });
    const { generationId } = await client.step({ conversationId: id });
    expect((await events.waitForEnd(generationId, 20_000)).method).toBe("generation_complete");
    expect((await watched.waitForEnd(generationId, 20_000)).method).toBe("generation_complete");
    expect(watched.of("generation_progress").map((p) => p.delta).join("")).toBe("through the thread");
    const metrics = await fetch(url.replace("ws://", "http://") + "/metrics");
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain("agentwire_connections");
    await client.close();
    await watcher.close();
    await stop(cli);
  } finally {
    await fake.close();
  }
}, 60_000);

it("a provider on the anthropic wire: the @anthropic-ai/sdk chunk loads and a thinking answer streams through it", async () => {
  const fake = await startFakeOpenAI({ apiKey: "test-key" });
  try {
    const xdg = await userConfig({ providers: { claude: { wire: "anthropic", baseUrl: fake.url, apiKey: "test-key" } }, defaultProvider: "claude" });
    const cli = bundle(["serve", "--port", "0", "--data-dir", await dir("data"), "--log-level", "warn"], { XDG_CONFIG_HOME: xdg, AGENTWIRE_MODEL: "fake-model" });
    const client = await AgentwireClient.connect(await cli.listening(20_000), { WebSocket });
    fake.enqueue({ kind: "reply", reasoning: ["Hm."], text: ["Hello from Claude."] });
    const { id, events } = await newConversation(client, { settings: { reasoning: "low" } });
    const { generationId } = await client.step({ conversationId: id });
    expect((await events.waitForEnd(generationId, 20_000)).method).toBe("generation_complete");
    expect(fake.wires).toEqual(["anthropic"]);
    expect(fake.requests[0]).toMatchObject({ thinking: { type: "enabled", budget_tokens: 1024 } });
    const { records } = await client.conversation.get({ conversationId: id, includeRecords: true });
    expect(records![1]).toMatchObject({ type: "reasoning", content: "Hm." });
    expect(records![2]).toMatchObject({ content: "Hello from Claude.", providerItems: [{ type: "thinking", thinking: "Hm." }] });
    await client.close();
    await stop(cli);
  } finally {
    await fake.close();
  }
}, 60_000);

it("agentwire acp: the ACP SDK's chunk loads, a prompt streams to the editor, and the process ends when stdin closes", async () => {
  const fake = await startFakeOpenAI({ apiKey: "test-key" });
  try {
    const workspace = await dir("acp-workspace");
    const editor = await startEditor(entry, ["--data-dir", await dir("acp-data")], { ...recordModuleLoads(loads), ...modelEnv(fake) }, workspace);
    const init = await editor.agent.request("initialize", { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: "smoke", version: "1" } });
    expect(init).toMatchObject({ protocolVersion: 1, agentCapabilities: { loadSession: true } });
    fake.enqueue({ kind: "reply", text: ["Hello, editor."] });
    const { sessionId } = await editor.agent.request("session/new", { cwd: workspace, mcpServers: [] });
    const answer = await editor.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "hi" }] });
    expect(answer).toMatchObject({ stopReason: "end_turn" });
    expect(agentText(editor.updates(sessionId))).toBe("Hello, editor.");
    expect((await editor.close()).code, editor.stderr()).toBe(0);
  } finally {
    await killEditors();
    await fake.close();
  }
}, 60_000);

it("an MCP stdio server from the configuration file: started, its tools listed, one called by the model", async () => {
  const fake = await startFakeOpenAI({ apiKey: "test-key" });
  try {
    const xdg = await userConfig({ mcpServers: { fixture: stdioFixture() } });
    const cli = bundle(["serve", "--port", "0", "--data-dir", await dir("data"), "--log-level", "warn"], { ...modelEnv(fake), XDG_CONFIG_HOME: xdg });
    const client = await AgentwireClient.connect(await cli.listening(20_000), { WebSocket });
    let state = "";
    await eventually(async () => {
      state = JSON.stringify((await client.mcp.list()).servers);
      return /"state":"connected"/.test(state);
    }, 20_000, "the fixture MCP server to connect");
    expect((await client.tools.list()).tools.map((t) => t.name)).toContain("mcp__fixture__echo");
    fake.enqueue(
      { kind: "reply", toolCalls: [{ id: "call_echo", name: "mcp__fixture__echo", args: JSON.stringify({ text: "through the bundle" }) }] },
      { kind: "reply", text: ["ok"] },
    );
    const { id, events } = await newConversation(client, { workspace: await dir("workspace") });
    const { generationId } = await client.step({ conversationId: id, autoConfirm: true });
    expect((await events.waitForEnd(generationId, 20_000)).method).toBe("generation_complete");
    const tool = fake.requests[1]!.messages.find((m: { role: string }) => m.role === "tool") as { content: string };
    expect(tool.content).toContain("echo: through the bundle");
    await client.close();
    await stop(cli);
  } finally {
    await fake.close();
  }
}, 60_000);

it("the web client page: GET / serves dist/web's page, and its script (valid JavaScript) and style", async () => {
  // The browser test (test/clients/web-client.test.ts) runs the page itself, against a server from source.
  const cli = bundle(["serve", "--port", "0", "--data-dir", await dir("data"), "--log-level", "warn"]);
  const http = (await cli.listening(20_000)).replace("ws://", "http://").replace(/\/$/, "");
  const html = await fetch(`${http}/`);
  expect(html.status).toBe(200);
  expect(html.headers.get("content-type")).toContain("text/html");
  const page = await html.text();
  expect(page).toBe(readFileSync(join(REPO_ROOT, "dist", "web", "index.html"), "utf8"));
  // The page names its script and style; both are served as the built files.
  for (const [name, type] of [
    ["app.js", "text/javascript"],
    ["app.css", "text/css"],
  ] as const) {
    expect(page).toContain(`"/${name}"`);
    const response = await fetch(`${http}/${name}`);
    expect(response.status, name).toBe(200);
    expect(response.headers.get("content-type"), name).toContain(type);
    expect(await response.text(), name).toBe(readFileSync(join(REPO_ROOT, "dist", "web", name), "utf8"));
  }
  // The script parses as the module the page loads (node --check reads a .mjs file as one).
  const copy = join(await dir("web"), "app.mjs");
  await writeFile(copy, readFileSync(join(REPO_ROOT, "dist", "web", "app.js")));
  const check = spawnSync(process.execPath, ["--check", copy], { encoding: "utf8" });
  expect(check.status, check.stderr).toBe(0);
  await stop(cli);
}, 60_000);

it("the client commands: chat (with its embedded server), conversations, config, trust, mcp, status and config --schema", async () => {
  const fake = await startFakeOpenAI({ apiKey: "test-key" });
  try {
    const project = await dir("project");
    const dataDir = join(project, "data");
    const env = { ...modelEnv(fake), XDG_DATA_HOME: await dir("xdg-data") };
    fake.enqueue({ kind: "reply", text: ["Hi there."] });
    const chat = bundle(["chat", "say hi", "--json", "--data-dir", dataDir], env, project);
    expect((await chat.exited).code, chat.stderr()).toBe(0);
    const id = (JSON.parse(chat.stdout().split("\n")[0]!) as { result: { id: string } }).result.id;
    expect(chat.stdout()).toContain("Hi there.");

    const list = bundle(["conversations", "list", "--data-dir", dataDir, "--json"], env, project);
    expect((await list.exited).code, list.stderr()).toBe(0);
    expect((JSON.parse(list.stdout()) as { id: string }[]).map((c) => c.id)).toEqual([id]);
    // Reading a stored conversation loads the store's run-state check (lowdb-run-state) and the record schemas with it.
    const show = bundle(["conversations", "show", id, "--data-dir", dataDir, "--json"], env, project);
    expect((await show.exited).code, show.stderr()).toBe(0);
    expect(show.stdout()).toContain("Hi there.");

    const file = join(project, "agentwire.json");
    await writeFile(file, "{}");
    const trust = bundle(["trust", project], env, project);
    expect((await trust.exited).code, trust.stderr()).toBe(0);
    expect(trust.stdout()).toContain(`trusted ${file}`);
    const config = bundle(["config", "--json"], env, project);
    expect((await config.exited).code, config.stderr()).toBe(0);
    // The report (JSON) names the project's file among those it read.
    expect(JSON.stringify(JSON.parse(config.stdout()))).toContain(JSON.stringify(file));

    // The management commands, each loaded lazily: mcp (and the user file it edits), status (models and tools share its chunk), config --schema.
    const xdg = await dir("xdg-config");
    const fixture = stdioFixture();
    const mcp = bundle(["mcp", "add", "fx", "--data-dir", dataDir, "--", fixture.command, ...fixture.args], { ...env, XDG_CONFIG_HOME: xdg }, project);
    expect((await mcp.exited).code, mcp.stderr()).toBe(0);
    expect(JSON.parse(readFileSync(join(xdg, "agentwire", "agentwire.json"), "utf8"))).toMatchObject({ mcpServers: { fx: { command: fixture.command } } });
    const status = bundle(["status", "--json", "--data-dir", dataDir], env, project);
    expect((await status.exited).code, status.stderr()).toBe(0);
    expect(JSON.parse(status.stdout())).toMatchObject({ conversationsStored: 1 });
    const schema = bundle(["config", "--schema"], env, project);
    expect((await schema.exited).code, schema.stderr()).toBe(0);
    expect(schema.stdout()).toBe(`${join(REPO_ROOT, "protocol", "config.schema.json")}\n`);
  } finally {
    await fake.close();
  }
}, 60_000);

it("agentwire/embed and agentwire/client, as a project that depends on this one imports them: a server and clients in one process, over the in-memory link", async () => {
  const fake = await startFakeOpenAI({ apiKey: "test-key" });
  try {
    // A project with this package in its node_modules: the name resolves through package.json `exports`.
    const project = await dir("embedder");
    await mkdir(join(project, "node_modules"));
    await symlink(REPO_ROOT, join(project, "node_modules", "agentwire"));
    const script = join(project, "embedder.mjs");
    await writeFile(
      script,
      `import { connectInMemory, defaultConfig, inMemoryWebSocket, startServer } from "agentwire/embed";
import { AgentwireClient } from "agentwire/client";
const config = defaultConfig();
Object.assign(config.server, { port: 0, dataDir: process.argv[2], logLevel: "silent" });
Object.assign(config.llm, { baseUrl: process.argv[3], apiKey: "test-key" });
config.model = "fake-model";
const server = await startServer(config);
const client = await connectInMemory(server);
const { id } = await client.conversation.create({ title: "embedded" });
await client.conversation.subscribe({ conversationId: id });
client.on("tool_pending", (e) => client.tool.confirm({ conversationId: id, toolCallId: e.toolCallId, action: "confirm" }));
await client.message.append({ conversationId: id, role: "user", content: "hi" });
const { generationId } = await client.step({ conversationId: id });
const end = await client.generation.wait({ conversationId: id, generationId, timeoutMs: 20000 });
const { records } = await client.conversation.get({ conversationId: id, includeRecords: true });
const other = await AgentwireClient.connect("memory://agentwire", { WebSocket: inMemoryWebSocket(server) });
const listed = (await other.conversation.list({})).data.map((c) => c.id);
await other.close();
console.log(JSON.stringify({ end, records, listed: listed.includes(id) }));
await client.close();
await server.close();
`,
    );
    fake.enqueue(
      { kind: "reply", toolCalls: [{ id: "call_1", name: "shell", args: JSON.stringify({ command: "echo embedded-tool" }) }] },
      { kind: "reply", text: ["Embedded answer."] },
    );
    const run = runCli([join(project, "data"), fake.url], recordModuleLoads(loads), relative(REPO_ROOT, script), project);
    expect((await run.exited).code, run.stderr()).toBe(0);
    const { end, records, listed } = JSON.parse(run.stdout()) as { end: { done: boolean; outcome?: string }; records: { type: string; status?: string; result?: string; content?: string }[]; listed: boolean };
    expect(listed, "agentwire/client's client lists the conversation").toBe(true);
    expect(end).toMatchObject({ done: true, outcome: "completed" });
    expect(records.find((r) => r.type === "tool_call")).toMatchObject({ status: "completed", result: expect.stringContaining("embedded-tool") });
    expect(records.at(-1)).toMatchObject({ type: "message", content: "Embedded answer." });
    // What ran is the shipped bundle's entry, not the source.
    const modules = await loadedModules(loads);
    expect(modules.has(join(BUNDLE_DIR, "embed.mjs"))).toBe(true);
    expect(modules.has(join(BUNDLE_DIR, "client.mjs"))).toBe(true);
  } finally {
    await fake.close();
  }
}, 60_000);

describe.skipIf(!postgresUp)("the PostgreSQL store (pg)", () => {
  const db = usePostgresDatabase("bundle");

  it("serve --store postgres://… keeps conversations in the database, across a restart", async () => {
    const args = ["serve", "--port", "0", "--data-dir", await dir("data"), "--store", db.url, "--log-level", "warn"];
    const first = bundle(args);
    const client = await AgentwireClient.connect(await first.listening(20_000), { WebSocket });
    const { id } = await client.conversation.create({ title: "in postgres" });
    await client.message.append({ conversationId: id, role: "user", content: "kept in a table" });
    await client.close();
    await stop(first);
    expect(await db.query("SELECT id, record_count FROM agentwire_conversations")).toEqual([{ id, record_count: 1 }]);

    const second = bundle(args);
    const again = await AgentwireClient.connect(await second.listening(20_000), { WebSocket });
    const got = await again.conversation.get({ conversationId: id, includeRecords: true });
    expect(got.records!.map((r) => (r.type === "message" ? r.content : r.type))).toEqual(["kept in a table"]);
    await again.close();
    await stop(second);
  }, 60_000);
});
if (!postgresUp) skippedParts.push("the PostgreSQL store");

describe.skipIf(!postgresUp || !redisAvailable)("cluster mode (ioredis): two instances on one PostgreSQL database and one Redis", () => {
  const db = usePostgresDatabase("bundlecluster");
  const redis = useRedis();

  it("a step sent to the instance that does not own the conversation runs on the owner", async () => {
    // Each instance has a model endpoint of its own: which one is called shows where the generation ran.
    const [ownerModel, otherModel] = await Promise.all([startFakeOpenAI({ apiKey: "test-key" }), startFakeOpenAI({ apiKey: "test-key" })]);
    try {
      const start = (fake: FakeOpenAI) =>
        bundle(["serve", "--port", "0", "--data-dir", join(root, `cluster-${randomBytes(3).toString("hex")}`), "--store", db.url, "--redis", REDIS_URL, "--redis-prefix", redis.keys.prefix, "--log-level", "warn"], modelEnv(fake));
      const [owner, other] = [start(ownerModel), start(otherModel)];
      const [ownerClient, otherClient] = await Promise.all(
        [owner, other].map(async (cli) => AgentwireClient.connect(await cli.listening(20_000), { WebSocket })),
      );
      // Created on the first instance, which so owns it.
      const { id } = await ownerClient.conversation.create({ title: "owned by the first" });
      const events = new EventRecorder(otherClient, id);
      await otherClient.conversation.subscribe({ conversationId: id });
      await otherClient.message.append({ conversationId: id, role: "user", content: "hello across instances" });
      ownerModel.enqueue({ kind: "reply", text: ["Answered by the owner."] });
      const { generationId } = await otherClient.step({ conversationId: id });
      expect((await events.waitForEnd(generationId, 20_000)).method).toBe("generation_complete");
      const { records } = await otherClient.conversation.get({ conversationId: id, includeRecords: true });
      expect(records!.at(-1)).toMatchObject({ type: "message", role: "assistant", content: "Answered by the owner." });
      expect(ownerModel.requests).toHaveLength(1);
      expect(otherModel.requests).toHaveLength(0);
      await Promise.all([ownerClient.close(), otherClient.close()]);
      await Promise.all([stop(owner), stop(other)]);
    } finally {
      await Promise.all([ownerModel.close(), otherModel.close()]);
    }
  }, 60_000);
});
if (!postgresUp || !redisAvailable) skippedParts.push("cluster mode");

it("these runs loaded every chunk of the bundle: no lazily loaded part goes untested", async (context) => {
  if (skippedParts.length > 0) {
    console.log(`bundle-smoke.test.ts: the check that every chunk of dist/bundle was loaded is SKIPPED: ${skippedParts.join(" and ")} did not run (services missing, see above)`);
    context.skip();
  }
  const chunks = (await readdir(BUNDLE_DIR)).filter((file) => file.endsWith(".mjs"));
  const loaded = await loadedModules(loads);
  const exempt = new Set(chunks.filter((file) => file.replace(/-[A-Z0-9]{8}\.mjs$/, "") in NEVER_LOADED));
  const sources = new Map(await Promise.all(chunks.map(async (file) => [file, await readFile(join(BUNDLE_DIR, file), "utf8")] as const)));
  for (let grew = true; grew; ) {
    grew = false;
    for (const file of chunks) {
      if (exempt.has(file) || loaded.has(join(BUNDLE_DIR, file))) continue;
      const importers = chunks.filter((other) => other !== file && sources.get(other)!.includes(`"./${file}"`));
      if (importers.length > 0 && importers.every((other) => exempt.has(other))) {
        exempt.add(file);
        grew = true;
      }
    }
  }
  const unloaded = chunks.filter((file) => !loaded.has(join(BUNDLE_DIR, file)) && !exempt.has(file));
  expect(chunks.length).toBeGreaterThan(10);
  expect(loaded.has(join(BUNDLE_DIR, "cli.cjs"))).toBe(true);
  expect(unloaded, `chunks of dist/bundle no run of the bundle here loaded (${unloaded.join(", ")}): exercise the lazy part they hold in this file`).toEqual([]);
});
