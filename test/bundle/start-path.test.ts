/**
 * What `agentwire serve` and a one-shot `agentwire chat "…" --json` load
 * before they are useful (issue 27): the parts neither needs by default —
 * the history index and the history.* handlers, the agent runtimes, the custom and web tools, picomatch and ignore, the openai SDK's
 * client (the chat's model call is sent without it: src/llm/wires/openai-headers.ts) — are chunks of their own in the shipped bundle, loaded when
 * first used (bundle-smoke.test.ts makes them load), and ws's optional
 * native addon (bufferutil) is not loaded at all. A client command's own
 * server opens no port, so it loads neither ws (with the node:tls it brings)
 * nor what listening loads; embedded through agentwire/embed with
 * `shared: false`, ws loads when a socket first asks to upgrade. A client
 * command speaking to a running server does not load serve's start.
 */
import { existsSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import { WebSocket } from "ws";
import { afterAll, beforeAll, expect, it } from "vitest";
import { AgentwireClient } from "../../clients/typescript/index.js";
import { startFakeOpenAI } from "../fake-openai/server.js";
import { killAllCli, REPO_ROOT, runCli } from "../harness/cli-process.js";
import { loadedModules, recordModuleLoads } from "../harness/module-loads.js";
import { shippedBundle } from "../harness/shipped-bundle.js";

const BUNDLE_DIR = join(REPO_ROOT, "dist", "bundle");
/** Chunks (by name, without esbuild's hash) neither path loads. */
const LAZY = ["history-index", "history-handlers", "runtime-table", "configured-tools", "picomatch", "ignore", "openai"];

let entry: string;
let root: string;
beforeAll(async () => {
  entry = shippedBundle();
  root = await mkdtemp(join(tmpdir(), "agentwire-start-path-"));
});
afterAll(async () => {
  await killAllCli();
  await rm(root, { recursive: true, force: true });
});

/** The lazy chunks' files; each must exist (a chunk of its own). */
async function lazyChunks(): Promise<Map<string, string>> {
  const files = await readdir(BUNDLE_DIR);
  const found = new Map<string, string>();
  for (const name of LAZY) {
    const file = files.find((f) => f.endsWith(".mjs") && f.replace(/-[A-Z0-9]{8}\.mjs$/, "") === name);
    expect(file, `dist/bundle has no chunk of its own for ${name}`).toBeDefined();
    found.set(name, join(BUNDLE_DIR, file!));
  }
  return found;
}

/** The chunks `entry` (a file of dist/bundle) loads with itself: its static imports, and theirs. */
function staticImports(entry: string): Set<string> {
  const found = new Set<string>();
  const todo = [entry];
  while (todo.length > 0) {
    const name = todo.pop()!;
    if (found.has(name)) continue;
    found.add(name);
    // esbuild writes `import{…}from"./x.mjs"`, `export{…}from"./x.mjs"` and `import"./x.mjs"`; a lazy import is `import("./x.mjs")`.
    for (const match of readFileSync(join(BUNDLE_DIR, name), "utf8").matchAll(/(?:from|import)\s*"\.\/([^"]+\.mjs)"/g)) todo.push(match[1]!);
  }
  return found;
}

/** The bundle's files among `loaded`, by name. */
const bundleFiles = (loaded: Set<string>) => [...loaded].filter((path) => path.startsWith(`${BUNDLE_DIR}/`)).map((path) => path.slice(BUNDLE_DIR.length + 1));

it("serve's start path is five files (the bin's loader, the command line, its modules, serve's own, ws), besides the chunks it shares with the workers and the client", async () => {
  // src/build/bundle.ts merges them: esbuild splits the path into a chunk per set of entries sharing a module (47 files before).
  expect(existsSync(join(BUNDLE_DIR, "cli-modules.mjs"))).toBe(true);
  const shared = new Set(["offload-worker.mjs", "socket-thread-worker.mjs", "client.mjs"].flatMap((entry) => [...staticImports(entry)]));
  const loads = join(root, "serve-files.txt");
  const cli = runCli(["serve", "--port", "0", "--data-dir", join(root, "files")], { ...recordModuleLoads(loads), OPENAI_BASE_URL: "http://127.0.0.1:9/v1" }, entry);
  await cli.listening(20_000);
  const files = bundleFiles(await loadedModules(loads));
  cli.child.kill("SIGTERM");
  expect((await cli.exited).code, cli.stderr()).toBe(0);
  const own = files.filter((name) => !shared.has(name));
  // cli.cjs is the loader (src/cli-loader.ts), which runs the others from their CommonJS twins, in this order.
  // ws is a file apart, which serve loads before it listens and a client command's own server only at its first upgrade.
  expect(own.map((name) => name.replace(/-[A-Z0-9]{8}\.mjs$/, ""))).toEqual(["cli.cjs", "cli-main.mjs", "cli-modules.mjs", "serve-start", "ws-library"]);
  // What it shares is merged by the set of entries loading it too: three files when this was written (the version,
  // which the command line and the socket thread read; ws and the socket layer, serve's and the socket thread's;
  // esbuild's helpers, every entry's). Before the merge, 47.
  expect(files.length, files.join(", ")).toBeLessThanOrEqual(9);
}, 60_000);

it("a client command speaking to a running server does not load serve's start (what the start paths share is in the command line's modules)", async () => {
  const serve = runCli(["serve", "--port", "0", "--data-dir", join(root, "for-clients")], { OPENAI_BASE_URL: "http://127.0.0.1:9/v1" }, entry);
  const url = await serve.listening(20_000);
  try {
    const loads = join(root, "client-loads.txt");
    const list = runCli(["conversations", "list", "--url", url], recordModuleLoads(loads), entry);
    expect((await list.exited).code, list.stderr()).toBe(0);
    const files = bundleFiles(await loadedModules(loads)).map((name) => name.replace(/-[A-Z0-9]{8}\.mjs$/, ""));
    expect(files).toContain("chat-command");
    expect(files).not.toContain("serve-start");
  } finally {
    serve.child.kill("SIGTERM");
    await serve.exited;
  }
}, 60_000);

it("serve answers its first server.status without the lazy parts and without ws's native addon", async () => {
  const chunks = await lazyChunks();
  const loads = join(root, "serve-loads.txt");
  const cli = runCli(["serve", "--port", "0", "--data-dir", join(root, "data")], { ...recordModuleLoads(loads), OPENAI_BASE_URL: "http://127.0.0.1:9/v1" }, entry);
  const client = await AgentwireClient.connect(await cli.listening(20_000), { WebSocket });
  expect((await client.server.status()).version).toEqual(expect.any(String));
  await client.close();
  // A native addon is a shared object mapped into the process.
  expect(readFileSync(`/proc/${cli.child.pid}/maps`, "utf8")).not.toContain("bufferutil");
  cli.child.kill("SIGTERM");
  expect((await cli.exited).code, cli.stderr()).toBe(0);
  const loaded = await loadedModules(loads);
  expect(loaded.has(join(BUNDLE_DIR, "cli.cjs"))).toBe(true);
  expect([...chunks].filter(([, file]) => loaded.has(file)).map(([name]) => name)).toEqual([]);
}, 60_000);

/** Runs `chat hello --json` (with its own server) against a fake that answers "Hi.", in a work dir and data home of `name`'s, with `env`; it must complete. */
async function oneShotChat(name: string, env: Record<string, string>): Promise<void> {
  const fake = await startFakeOpenAI({ apiKey: "test-key" });
  try {
    fake.enqueue({ kind: "reply", text: ["Hi."] });
    const cwd = join(root, `work-${name}`);
    await mkdir(cwd, { recursive: true });
    const own = { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: "test-key", AGENTWIRE_MODEL: "fake-model", XDG_DATA_HOME: join(root, `xdg-${name}`) };
    const chat = runCli(["chat", "hello", "--json"], { ...env, ...own }, entry, cwd);
    expect((await chat.exited).code, chat.stderr()).toBe(0);
    expect(chat.stdout()).toContain('"outcome":"completed"');
  } finally {
    await fake.close();
  }
}

it("a one-shot chat --json (embedded server) runs to its end without the lazy parts", async () => {
  const chunks = await lazyChunks();
  const loads = join(root, "chat-loads.txt");
  await oneShotChat("lazy", recordModuleLoads(loads));
  const loaded = await loadedModules(loads);
  expect([...chunks].filter(([, file]) => loaded.has(file)).map(([name]) => name)).toEqual([]);
}, 60_000);

it("a one-shot chat --json loads none of Node's modules it has no use for: the ES module loader's, perf_hooks, fs.rm's rimraf, dns and cluster", async () => {
  // Each was loaded by a line that did not need it, and cost the one-shot on the bench host: an import() of a module
  // outside the bundle (a node: builtin included) loads the ES module loader's own modules and links a module job
  // (~2.6 ms; the store's first journal line imported node:fs/promises so); the global performance loads perf_hooks
  // (~0.7 ms; the dispatcher's time slicer and the metrics' timings); fs.rm loads rimraf (~1.1 ms; the store's file
  // removals). A listening socket loads dns (whose resolver reads resolv.conf) and cluster: the command's own server
  // listened on a loopback port nothing used (~3 ms with the bind).
  const list = join(root, "chat-node-modules.txt");
  await oneShotChat("node-modules", { NODE_OPTIONS: `--require=${join(REPO_ROOT, "test", "harness", "record-node-modules.cjs")}`, AGENTWIRE_TEST_NODE_MODULES: list });
  const modules = readFileSync(list, "utf8").split("\n");
  // The list is the process's own: it holds what every run loads.
  expect(modules).toContain("NativeModule vm");
  expect(modules.filter((name) => name.startsWith("NativeModule internal/modules/esm/") && !/\/(assert|loader|utils)$/.test(name))).toEqual([]);
  expect(modules.filter((name) => ["NativeModule perf_hooks", "NativeModule internal/fs/rimraf", "NativeModule dns", "NativeModule cluster"].includes(name))).toEqual([]);
}, 60_000);

it("the one-shot's model request, sent without the SDK, carries the headers the SDK builds itself", async () => {
  // OPENAI_CUSTOM_HEADERS is one of the inputs only the SDK works out (src/llm/wires/openai-headers.ts): with it set, the
  // bundle's SDK client builds the request's headers, as it did for every request before.
  const fake = await startFakeOpenAI({ apiKey: "test-key" });
  try {
    const sent: Record<string, string | string[] | undefined>[] = [];
    for (const custom of [undefined, "X-Extra: 1"]) {
      fake.enqueue({ kind: "reply", text: ["Hi."] });
      const cwd = join(root, `headers-${sent.length}`);
      await mkdir(cwd, { recursive: true });
      const env = { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: "test-key", AGENTWIRE_MODEL: "fake-model", XDG_DATA_HOME: join(root, `xdg-headers-${sent.length}`), ...(custom ? { OPENAI_CUSTOM_HEADERS: custom } : {}) };
      const chat = runCli(["chat", "hello", "--json"], env, entry, cwd);
      expect((await chat.exited).code, chat.stderr()).toBe(0);
      const { "content-length": _length, host: _host, ...headers } = fake.exchanges.at(-1)!.headers;
      sent.push(headers);
    }
    const [direct, bySdk] = sent;
    expect(bySdk!["x-extra"]).toBe("1");
    delete bySdk!["x-extra"];
    expect(direct).toEqual(bySdk);
    expect(direct!["user-agent"]).toMatch(/^OpenAI\/JS \d/);
  } finally {
    await fake.close();
  }
}, 60_000);

it("a client command's own server (shared: false) loads ws only at its first upgrade, then serves the socket", async () => {
  // agentwire/embed from the shipped bundle; the client's ws is this repository's package, a module apart from the
  // copy bundled into the server, so importing it does not load the server's.
  const script = join(root, "own-server.mjs");
  const embed = pathToFileURL(join(BUNDLE_DIR, "embed.mjs")).href;
  const ws = pathToFileURL(join(REPO_ROOT, "node_modules", "ws", "wrapper.mjs")).href;
  await writeFile(
    script,
    `import { AgentwireClient, defaultConfig, startServer } from ${JSON.stringify(embed)};
const config = defaultConfig();
Object.assign(config.server, { port: 0, dataDir: process.argv[2], logLevel: "silent" });
const server = await startServer(config, { shared: false });
const tlsBeforeUpgrade = process.moduleLoadList.includes("NativeModule tls");
const { WebSocket } = await import(${JSON.stringify(ws)});
const client = await AgentwireClient.connect(server.url, { WebSocket });
const status = await client.server.status();
await client.close();
await server.close();
console.log(JSON.stringify({ tlsBeforeUpgrade, version: status.version }));
`,
  );
  const run = runCli([join(root, "own-server-data")], {}, relative(REPO_ROOT, script), root);
  expect((await run.exited).code, run.stderr()).toBe(0);
  expect(JSON.parse(run.stdout())).toEqual({ tlsBeforeUpgrade: false, version: expect.any(String) });
}, 60_000);
