/**
 * The bin (dist/bundle/cli.cjs, src/cli-loader.ts) runs the command line
 * from the CommonJS twins of the bundle's files through V8's code cache: the
 * first run writes a cache for each twin it ran, the next compiles from it,
 * and a cache that is missing, damaged or cannot be written changes nothing
 * but the time it takes.
 */
import { existsSync } from "node:fs";
import { chmod, copyFile, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
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

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "agentwire-code-cache-"));
});
afterAll(async () => {
  await killAllCli();
  await rm(root, { recursive: true, force: true });
});

/** Runs `agentwire config --json` (the command line and its modules, no server) with the cache in `cache`; its stdout. */
async function configRun(cache: string, extraEnv: Record<string, string> = {}): Promise<string> {
  const cli = runCli(["config", "--json"], { AGENTWIRE_CODE_CACHE: cache, XDG_DATA_HOME: join(root, "data"), ...extraEnv });
  const { code } = await cli.exited;
  expect(code, cli.stderr()).toBe(0);
  expect(cli.stderr()).toBe("");
  return cli.stdout();
}

/** The cache's files, by name, with their modification times. */
async function cacheFiles(dir: string): Promise<Map<string, number>> {
  const names = await readdir(dir).catch(() => [] as string[]);
  return new Map(await Promise.all(names.map(async (name) => [name, (await stat(join(dir, name))).mtimeMs] as [string, number])));
}

/** Every cache in `before` is still there as it was: V8 took it (a cache it refused would have been written again). */
async function expectUntouched(dir: string, before: Map<string, number>): Promise<void> {
  const after = await cacheFiles(dir);
  for (const [name, mtime] of before) expect(after.get(name), name).toBe(mtime);
}

it("the first run writes a cache for each file it ran from its twin, and the next runs from it without writing it again", async () => {
  const cache = join(root, "cache");
  const loads = join(root, "config-loads.txt");
  const first = await configRun(cache, recordModuleLoads(loads));
  const ran = [...(await loadedModules(loads))].filter((path) => path.includes("/dist/bundle/") && !path.endsWith("/cli.cjs"));
  expect(ran.map((path) => path.slice(path.lastIndexOf("/") + 1))).toContain("cli-main.mjs");
  const written = await cacheFiles(cache);
  // One cache per file run, named for it, this bundle's text of it, the command, this Node and these flags.
  expect([...written.keys()].map((name) => name.slice(0, name.indexOf(".mjs-") + 4)).sort()).toEqual(ran.map((path) => path.slice(path.lastIndexOf("/") + 1)).sort());
  for (const name of written.keys()) expect(name).toContain(`-config-${process.version}-${process.arch}-`);
  // Without the preload (other NODE_OPTIONS), a cache of their own beside these.
  await configRun(cache);
  expect((await cacheFiles(cache)).size).toBe(written.size * 2);
  // V8 accepted every one: a cache it refused would be written again. (The same NODE_OPTIONS: other flags keep a cache of their own.)
  const second = await configRun(cache, recordModuleLoads(join(root, "config-loads-2.txt")));
  expect(second).toBe(first);
  await expectUntouched(cache, written);
}, 60_000);

it("each command keeps a cache of its own; a run that fails writes none", async () => {
  const cache = join(root, "commands");
  await configRun(cache);
  const config = await cacheFiles(cache);
  const help = runCli(["help"], { AGENTWIRE_CODE_CACHE: cache });
  expect((await help.exited).code, help.stderr()).toBe(0);
  const both = await cacheFiles(cache);
  expect([...both.keys()].filter((name) => name.includes("-help-")).length).toBeGreaterThan(0);
  await expectUntouched(cache, config);
  const typo = runCli(["confgi"], { AGENTWIRE_CODE_CACHE: cache });
  expect((await typo.exited).code).toBe(2);
  expect([...(await cacheFiles(cache)).keys()].filter((name) => name.includes("-confgi-"))).toEqual([]);
}, 60_000);

it("a run that loaded more of the bundle than the run that wrote a cache it used writes it again at its exit; one that loaded as much does not", async () => {
  // A cache holds the functions compiled when it was written: `chat --help` compiles little of the command line's
  // files, a chat with its own server much more, and without the rewrite every chat after the help would compile
  // the rest itself (a chat --url that wrote serve-start's cache cost each later one-shot ~10 ms).
  const cache = join(root, "richer");
  const fake = await startFakeOpenAI({ apiKey: "test-key" });
  try {
    const help = runCli(["chat", "--help"], { AGENTWIRE_CODE_CACHE: cache });
    expect((await help.exited).code, help.stderr()).toBe(0);
    const byHelp = await cacheFiles(cache);
    const cliMain = [...byHelp.keys()].find((name) => name.startsWith("cli-main.mjs-"))!;
    expect(cliMain).toBeDefined();
    const sizeByHelp = (await stat(join(cache, cliMain))).size;
    const chat = async () => {
      fake.enqueue({ kind: "reply", text: ["Hi."] });
      const env = { AGENTWIRE_CODE_CACHE: cache, OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: "test-key", AGENTWIRE_MODEL: "fake-model", XDG_DATA_HOME: join(root, "richer-data") };
      const run = runCli(["chat", "hello", "--json"], env);
      expect((await run.exited).code, run.stderr()).toBe(0);
      expect(run.stdout()).toContain('"outcome":"completed"');
    };
    await chat();
    const byChat = await cacheFiles(cache);
    expect(byChat.get(cliMain)).not.toBe(byHelp.get(cliMain));
    expect((await stat(join(cache, cliMain))).size).toBeGreaterThan(sizeByHelp);
    // The next chat loads as much as the one that wrote them: every cache stays as it is.
    await chat();
    await expectUntouched(cache, byChat);
  } finally {
    await fake.close();
  }
}, 60_000);

it("a damaged cache is refused by V8 and written again; the run is the same", async () => {
  const cache = join(root, "damaged");
  const before = await configRun(cache);
  const files = await cacheFiles(cache);
  expect(files.size).toBeGreaterThan(0);
  for (const name of files.keys()) await writeFile(join(cache, name), "not V8's cache");
  expect(await configRun(cache)).toBe(before);
  for (const name of files.keys()) expect((await readFile(join(cache, name))).toString()).not.toBe("not V8's cache");
}, 60_000);

it("AGENTWIRE_CODE_CACHE=off writes nothing; a directory that cannot be made costs nothing but the cache", async () => {
  const blocker = join(root, "a-file");
  await writeFile(blocker, "");
  const reference = await configRun(join(root, "reference"));
  expect(await configRun("off")).toBe(reference);
  // A path under a regular file: mkdir fails (as it does in a read-only install, whoever runs it).
  expect(await configRun(join(blocker, "cache"))).toBe(reference);
  expect((await stat(blocker)).isFile()).toBe(true);
}, 60_000);

it("a cache directory other users can write to is neither read nor written: its bytecode would run as this process's code", async () => {
  const shared = join(root, "shared");
  await mkdir(shared, { mode: 0o777 });
  await chmod(shared, 0o777); // past the umask
  const reference = await configRun(join(root, "reference-2"));
  expect(await configRun(shared)).toBe(reference);
  expect(await readdir(shared)).toEqual([]);
  // The same directory, for its owner alone: used.
  await chmod(shared, 0o700);
  expect(await configRun(shared)).toBe(reference);
  expect((await readdir(shared)).length).toBeGreaterThan(0);
  // A cache directory the loader makes is its user's alone.
  expect((await stat(join(root, "reference-2"))).mode & 0o777).toBe(0o700);
}, 60_000);

it("with --enable-source-maps the bin runs the ES modules, whose maps Node applies (it maps no vm.Script's frames), and writes no cache", async () => {
  const cache = join(root, "source-maps");
  const reference = await configRun(join(root, "reference-3"));
  expect(await configRun(cache, { NODE_OPTIONS: "--enable-source-maps" })).toBe(reference);
  expect(existsSync(cache)).toBe(false);
}, 60_000);

it("serve writes its start path's cache once it has run a second, and starts from it", async () => {
  const cache = join(root, "serve");
  const env = { AGENTWIRE_CODE_CACHE: cache, OPENAI_BASE_URL: "http://127.0.0.1:9/v1" };
  const cli = runCli(["serve", "--port", "0", "--data-dir", join(root, "serve-data")], env);
  await cli.listening(20_000);
  // Written while it runs (not only at exit: a server killed with SIGKILL keeps it).
  let written = await cacheFiles(cache);
  for (let i = 0; i < 100 && ![...written.keys()].some((name) => name.startsWith("serve-start-")); i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    written = await cacheFiles(cache);
  }
  expect([...written.keys()].some((name) => name.startsWith("serve-start-")), [...written.keys()].join(", ")).toBe(true);
  cli.child.kill("SIGKILL");
  await cli.exited;
  const again = runCli(["serve", "--port", "0", "--data-dir", join(root, "serve-data")], env);
  await again.listening(20_000);
  again.child.kill("SIGTERM");
  expect((await again.exited).code, again.stderr()).toBe(0);
  // What the first wrote was taken as it was (the kill may have come before the rest was written: this run wrote that).
  await expectUntouched(cache, written);
}, 60_000);

it("serve keeps its first second's cache: a turn run later loads more files, and its exit writes only theirs", async () => {
  const cache = join(root, "serve-turn");
  const fake = await startFakeOpenAI({ apiKey: "test-key" });
  try {
    fake.enqueue({ kind: "reply", text: ["Hi."] });
    const env = { AGENTWIRE_CODE_CACHE: cache, OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: "test-key", AGENTWIRE_MODEL: "fake-model" };
    const cli = runCli(["serve", "--port", "0", "--data-dir", join(root, "serve-turn-data")], env);
    const url = await cli.listening(20_000);
    let first = await cacheFiles(cache);
    for (let i = 0; i < 100 && ![...first.keys()].some((name) => name.startsWith("serve-start-")); i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      first = await cacheFiles(cache);
    }
    expect([...first.keys()].some((name) => name.startsWith("create-provider-")), [...first.keys()].join(", ")).toBe(false);
    // A turn: the model call loads the provider's file.
    const client = await AgentwireClient.connect(url, { WebSocket });
    const { id } = await client.conversation.create({ title: "a turn" });
    await client.message.append({ conversationId: id, role: "user", content: "hello" });
    const { generationId } = await client.step({ conversationId: id });
    expect((await client.generation.wait({ conversationId: id, generationId })).done).toBe(true);
    await client.close();
    cli.child.kill("SIGTERM");
    expect((await cli.exited).code, cli.stderr()).toBe(0);
    const after = await cacheFiles(cache);
    expect([...after.keys()].some((name) => name.startsWith("create-provider-")), [...after.keys()].join(", ")).toBe(true);
    await expectUntouched(cache, first);
  } finally {
    await fake.close();
  }
}, 60_000);

it("the loader's import(): the bundle's files from their twins (one instance each), anything else through Node's own", async () => {
  // A bundle of two hand-written twins, run by the shipped loader (dist/bundle/cli.cjs) copied beside them.
  const dir = join(root, "tiny-bundle");
  await mkdir(dir);
  await copyFile(join(REPO_ROOT, shippedBundle()), join(dir, "cli.cjs"));
  const outside = join(root, "outside.mjs");
  await writeFile(outside, "export const where = 'an ES module outside the bundle';\n");
  const twin = (body: string) => `(function (exports, require, module, __importMeta, __dimp) {"use strict";\n${body}\n})`;
  await writeFile(join(dir, "other.cjs"), twin("let count = 0; exports.bump = () => ++count; exports.url = __importMeta.url;"));
  await writeFile(
    join(dir, "cli-main.cjs"),
    twin(`
      const other = require("./other.mjs");
      other.bump();
      Promise.all([__dimp("./other.mjs"), __dimp("node:os"), __dimp(${JSON.stringify(pathToFileURL(outside).href)})]).then(([again, os, esm]) => {
        process.stdout.write(JSON.stringify({ same: again === other, count: again.bump(), os: typeof os.cpus, esm: esm.where, url: other.url }) + "\\n");
      });`),
  );
  await writeFile(join(dir, "cjs-twins.json"), JSON.stringify({ "cli-main.mjs": "a", "other.mjs": "b" }));
  const cli = runCli([], { AGENTWIRE_CODE_CACHE: join(root, "tiny-cache") }, relative(REPO_ROOT, join(dir, "cli.cjs")));
  expect((await cli.exited).code, cli.stderr()).toBe(0);
  expect(JSON.parse(cli.stdout())).toEqual({ same: true, count: 2, os: "function", esm: "an ES module outside the bundle", url: pathToFileURL(join(dir, "other.mjs")).href });
}, 60_000);
