/**
 * The package as a user gets it (issue 21, item 2): `npm pack` of the built
 * tree, `npm install -g` of the tarball into a prefix of its own with the
 * real npm, and the installed `agentwire` run from a directory outside the
 * clone. What the tarball holds is checked against package.json itself:
 * every `bin` and `exports` target ships, nothing of src/, test/, bench/ or
 * the sources of clients/ does.
 *
 * Fast on purpose: the tarball is packed with --ignore-scripts from what
 * vitest's global setup built (dist/bundle, dist/web, dist/types; `npm pack`
 * alone would run prepack and build them again), and the install is
 * --offline: the package has no dependencies to fetch, and its one optional
 * dependency (bufferutil) is skipped when it is not in npm's cache.
 */
import { execFile, spawnSync } from "node:child_process";
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "../fake-openai/server.js";
import { cleanEnv } from "../harness/child-env.js";
import { killAllCli, REPO_ROOT } from "../harness/cli-process.js";
import { shippedBundle } from "../harness/shipped-bundle.js";

const run = promisify(execFile);
const pkg = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as {
  name: string;
  version: string;
  private?: boolean;
  license?: string;
  bin: Record<string, string>;
  exports: Record<string, string | Record<string, string>>;
  engines?: { node?: string };
  dependencies?: Record<string, string>;
  scripts: Record<string, string>;
};

let dir: string;
let tarball: string;
let files: string[];
let prefix: string;
/** A directory outside the clone, where the installed bin runs. */
let elsewhere: string;
let installed: string;
let fake: FakeOpenAI;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  shippedBundle(); // fails, saying why, when dist/ is not built from the source as it is
  dir = await mkdtemp(join(tmpdir(), "agentwire-package-"));
  const { stdout } = await run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", dir], { cwd: REPO_ROOT });
  const [packed] = JSON.parse(stdout) as [{ filename: string; files: { path: string }[] }];
  tarball = join(dir, packed.filename);
  files = packed.files.map((f) => f.path);
  prefix = join(dir, "prefix");
  elsewhere = join(dir, "elsewhere");
  await mkdir(elsewhere);
  // An empty cache: --offline then proves the install needs nothing from the registry.
  await run("npm", ["install", "-g", "--prefix", prefix, "--offline", "--cache", join(dir, "npm-cache"), "--no-audit", "--no-fund", tarball], {
    cwd: elsewhere,
    env: cleanEnv({ HOME: elsewhere }),
  });
  installed = join(prefix, "lib/node_modules", pkg.name);
  fake = await startFakeOpenAI();
  env = cleanEnv({ HOME: elsewhere, OPENAI_BASE_URL: fake.url, AGENTWIRE_MODEL: "fake-model" });
}, 60_000);

afterAll(async () => {
  await killAllCli();
  await fake?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("the tarball", () => {
  it("is named for the package and holds what ships, nothing of the sources", () => {
    expect(tarball.endsWith(`${pkg.name}-${pkg.version}.tgz`)).toBe(true);
    const targets = [
      ...Object.values(pkg.bin),
      ...Object.values(pkg.exports).flatMap((target) => (typeof target === "string" ? [target] : Object.values(target))),
    ].map((path) => path.replace(/^\.\//, ""));
    expect(targets).toContain("dist/bundle/embed.mjs");
    for (const target of [...targets, "dist/web/index.html", "protocol/config.schema.json", "protocol/openrpc.json", "README.md", "LICENSE"]) {
      expect(files, `${target} is not in the tarball`).toContain(target);
    }
    const stray = files.filter((f) => /^(src|test|bench|clients|node_modules)\//.test(f) || f.endsWith(".map") || f.endsWith(".ts") && !f.endsWith(".d.ts") || f.includes(".source-digest"));
    expect(stray).toEqual([]);
  });

  it("package.json is publishable: not private, licensed, engines, no build on install", async () => {
    expect(pkg.private).toBeUndefined();
    expect(pkg.license).toBe("MIT");
    expect(readFileSync(join(REPO_ROOT, "LICENSE"), "utf8")).toMatch(/^MIT License/);
    expect(pkg.engines?.node).toBe(">=20");
    // The bundle inlines every library: nothing is fetched to run it (bufferutil is optional).
    expect(pkg.dependencies ?? {}).toEqual({});
    // npm 11 offers to run a package's `prepare` at install; in an installed package it could not build.
    expect(pkg.scripts.prepare).toBeUndefined();
    expect(pkg.scripts.prepack).toMatch(/bundle/);
    const { stdout, stderr } = await run("npm", ["publish", "--dry-run", "--ignore-scripts", "--json", tarball], { cwd: dir, env: cleanEnv({ HOME: dir }) });
    // Only the note that a real publish needs a login (the dry run has none here).
    expect(stderr.split("\n").filter((line) => /npm (warn|error)/i.test(line) && !/requires you to be logged in/.test(line))).toEqual([]);
    expect((JSON.parse(stdout) as Record<string, unknown>)[pkg.name]).toMatchObject({ name: pkg.name, version: pkg.version });
  }, 30_000);
});

describe("installed with npm install -g from the tarball", () => {
  it("puts agentwire on the prefix's bin, which runs from any directory", async () => {
    const { stdout } = await run(join(prefix, "bin/agentwire"), ["--version"], { cwd: elsewhere, env });
    expect(stdout.trim()).toBe(pkg.version);
    // Nothing but the optional bufferutil (and its loader) was installed beside it.
    const deps = existsSync(join(installed, "node_modules")) ? spawnSync("ls", [join(installed, "node_modules")], { encoding: "utf8" }).stdout.split("\n").filter(Boolean) : [];
    expect(deps.filter((d) => d !== "bufferutil" && d !== "node-gyp-build")).toEqual([]);
  });

  it("ships the configuration schema where `agentwire config --schema` finds it", async () => {
    const { stdout } = await run(join(prefix, "bin/agentwire"), ["config", "--schema"], { cwd: elsewhere, env });
    expect(realpathSync(stdout.trim())).toBe(realpathSync(join(installed, "protocol/config.schema.json")));
    const schema = JSON.parse(readFileSync(stdout.trim(), "utf8")) as { title?: string; properties?: object };
    expect(schema.title).toBe("agentwire.json");
    expect(schema.properties).toHaveProperty("llm");
  });

  it("serves: the WebSocket, the web client page and the OpenRPC document", async () => {
    const server = startInstalled(["serve", "--port", "0", "--data-dir", join(dir, "serve-data"), "--log-level", "warn"]);
    const url = await server.listening;
    const http = url.replace(/^ws/, "http").replace(/\/?$/, "/");
    const page = await fetch(http);
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/<script[^>]*app\.js/);
    expect((await fetch(`${http}app.js`)).status).toBe(200);
    const openrpc = (await (await fetch(`${http}openrpc.json`)).json()) as { openrpc?: string };
    expect(openrpc.openrpc).toBeDefined();
    server.child.kill("SIGTERM");
    await server.exited;
  }, 30_000);

  it("chats one shot against an OpenAI-compatible endpoint", async () => {
    const { stdout } = await run(join(prefix, "bin/agentwire"), ["chat", "hello", "--data-dir", join(dir, "chat-data")], { cwd: elsewhere, env, timeout: 20_000 });
    expect(stdout).toContain("Hello from the fake.");
  }, 30_000);

  it("types the entry points it exports: agentwire/client alone, agentwire/embed with zod beside it", async () => {
    // A project that depends on the package: installed from the tarball into its node_modules.
    const project = join(dir, "project");
    await mkdir(project);
    await writeFile(join(project, "package.json"), '{ "name": "embedder", "private": true, "type": "module" }\n');
    await run("npm", ["install", "--offline", "--cache", join(dir, "npm-cache"), "--no-audit", "--no-fund", "--no-save", tarball], { cwd: project, env: cleanEnv({ HOME: elsewhere }) });
    // The embed declarations name zod's types (ServerConfig is inferred from the schemas): an optional peer.
    await symlink(join(REPO_ROOT, "node_modules/zod"), join(project, "node_modules/zod"));
    await writeFile(
      join(project, "client.ts"),
      [
        'import { AgentwireClient, AgentwireRpcError } from "agentwire/client";',
        "export async function title(client: AgentwireClient): Promise<string | undefined> {",
        '  const created = await client.conversation.create({ title: "typed" });',
        "  const got = await client.conversation.get({ conversationId: created.id });",
        "  // @ts-expect-error: no such method",
        "  client.conversation.nope();",
        "  return got.conversation.title ?? String(AgentwireRpcError.name);",
        "}",
        "",
      ].join("\n"),
    );
    await writeFile(
      join(project, "embed.ts"),
      [
        'import { connectInMemory, defaultConfig, startServer } from "agentwire/embed";',
        "const config = defaultConfig();",
        "config.server.port = 0;",
        "// @ts-expect-error: a port is a number",
        'config.server.port = "0";',
        "const client = await connectInMemory(await startServer(config));",
        "await client.close();",
        "",
      ].join("\n"),
    );
    const compilerOptions = { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true, noEmit: true, types: [] };
    await writeFile(join(project, "tsconfig.client.json"), JSON.stringify({ compilerOptions, files: ["client.ts"] }));
    await writeFile(join(project, "tsconfig.embed.json"), JSON.stringify({ compilerOptions: { ...compilerOptions, skipLibCheck: true }, files: ["embed.ts"] }));
    const tsc = join(REPO_ROOT, "node_modules/typescript/bin/tsc");
    const checks = ["tsconfig.client.json", "tsconfig.embed.json"].map((config) =>
      run(process.execPath, [tsc, "-p", config], { cwd: project }).then(
        () => [config, ""],
        (error: { stdout?: string; stderr?: string }) => [config, `${error.stdout ?? ""}${error.stderr ?? ""}` || String(error)],
      ),
    );
    for (const [config, output] of await Promise.all(checks)) expect(output, config).toBe("");
  }, 60_000);
});

/** The installed bin as a child process, from the directory outside the clone. */
function startInstalled(args: string[]) {
  const child = execFile(join(prefix, "bin/agentwire"), args, { cwd: elsewhere, env });
  let out = "";
  let err = "";
  child.stdout!.on("data", (chunk: string) => (out += chunk));
  child.stderr!.on("data", (chunk: string) => (err += chunk));
  const exited = new Promise<void>((resolve) => child.on("close", () => resolve()));
  const listening = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listening line; stderr: ${err}`)), 20_000);
    child.stdout!.on("data", () => {
      const match = /agentwire listening on (ws:\/\/\S+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.on("close", () => reject(new Error(`exited before listening; stderr: ${err}`)));
  });
  return { child, listening, exited };
}
