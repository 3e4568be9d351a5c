/**
 * Every code block in README.md and docs/*.md is either generated or run
 * here (issue 20, item 5), so the docs cannot drift from what the code does.
 * Each fence carries a mark on the line above it, `<!-- block: KIND … -->`
 * (docs/README.md, "How the examples are checked", is the reader's version
 * of this list); a block without one fails the first test.
 *
 * - `run` (sh): run in the page's bash session; every command must succeed.
 *   `until="TEXT"`: the block starts a server; it passes once TEXT is printed
 *   (`times=N`: printed N times, for N servers).
 * - `transcript` (text): `$ command` lines run in the page's session, each
 *   followed by what it printed, matched as doc-transcript.ts says (`…` for
 *   ids and times). `terminal`: the command runs on a pseudo-terminal and gets
 *   the keys of `input="a|b|^D"`, one at each prompt.
 * - `typescript` (ts): type-checked against clients/typescript (one tsc run
 *   for all); with `run`, executed with tsx against a live server. A fragment
 *   (no import) is preceded by a prelude that connects `client` and creates
 *   conversation `id` holding one user message. `agentwire/embed` resolves as
 *   in a project that depends on this one: typed from its declarations, run from
 *   the shipped bundle (package.json `exports`: dist/types and dist/bundle).
 * - `python`: run with a python3 that has `websockets`, against the live
 *   server (only compiled when there is none).
 * - `config` (json, jsonc): a whole agentwire.json; `agentwire serve
 *   --config FILE` must start with it. `env=A,B` sets those variables for it;
 *   `file=NAME` also writes it to the page's working directory at that point;
 *   `step`: a conversation on its model then runs one step against the fake.
 * - `request` (jsonc): JSON-RPC requests, each checked against its method's
 *   params schema from protocol/inventory.ts.
 * - `skill` (markdown): a SKILL.md, put in a workspace and found without
 *   problems by `skills.list`.
 * - `command name=NAME` (markdown): a prompt template, put in a workspace as
 *   `.agentwire/commands/NAME.md` and found without problems by `commands.list`.
 * - `shown — REASON`: not run, for what cannot run here (a real model, a
 *   fresh install); the reason is required and the list is printed.
 *
 * The sandbox: the CLI is the shipped bundle of the current source (dist/bundle,
 * built by vitest's global setup), and `npx agentwire` runs it (`npx
 * NAME` runs the repository's node_modules/.bin/NAME, as in a clone). Each page
 * gets a bash session in its own HOME, working in `~/clone`, which links the
 * repository's test/, clients/ and node_modules/. The ports 11435 (the fake
 * model) and 8765 (the server) are replaced by free ones: a block that starts
 * something with `--port N` gets a fresh port for N for the rest of its page;
 * otherwise N means the sandbox's own fake model and server. Any other
 * `--port N` gets a fresh port for N for the rest of its page too.
 *
 * PostgreSQL and Redis are the machine's (as the other suites use them):
 * docs/cluster.md names the role and database `agentwire`, which the test
 * creates when missing, as the page tells a reader to (and drops after,
 * when it created them). Without PostgreSQL or Redis, that page is skipped,
 * saying so.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { stripComments } from "jsonc-parser";
import { WebSocket } from "ws";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentwireClient } from "../../clients/typescript/index.js";
import { requests } from "../../protocol/inventory.js";
import { helpReference } from "../../src/cli-options.js";
import { readBlock } from "../../src/codegen/blocks.js";
import { Slugger } from "../../src/codegen/markdown.js";
import { renderBlocks, renderOutputs } from "../../src/codegen/outputs.js";
import { startFakeOpenAI, type FakeOpenAI } from "../fake-openai/server.js";
import { cleanEnv } from "../harness/child-env.js";
import { killAllCli, REPO_ROOT, runCli, type CliProcess } from "../harness/cli-process.js";
import { extractBlocks, where, type DocBlock } from "../harness/doc-blocks.js";
import { ShellSession } from "../harness/doc-session.js";
import { compareOutput, parseTranscript, screenOf } from "../harness/doc-transcript.js";
import { POSTGRES_ADMIN_URL, postgresReachable } from "../harness/postgres-db.js";
import { REDIS_URL, redisAvailable } from "../harness/redis-test.js";
import { shippedBundle } from "../harness/shipped-bundle.js";

/** Every command's help, as the CLI prints it. */
const HELP = helpReference();

const DOC_FILES = ["README.md", ...readdirSync(join(REPO_ROOT, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];
const blocks = DOC_FILES.flatMap((file) => extractBlocks(file, readFileSync(join(REPO_ROOT, file), "utf8")));
const marked = (kind: string) => blocks.filter((b) => b.mark?.kind === kind);

/** Which fence languages each kind takes. */
const KINDS: Record<string, readonly string[]> = {
  run: ["sh", "bash"],
  transcript: ["text"],
  typescript: ["ts"],
  python: ["python"],
  config: ["json", "jsonc"],
  request: ["json", "jsonc"],
  skill: ["markdown"],
  command: ["markdown"],
  shown: [],
};
/** Kinds that run in the page's session, in order. */
const SESSION_KINDS = new Set(["run", "transcript"]);
const DOC_PORTS = { fake: "11435", server: "8765" } as const;
const TSX_LOADER = pathToFileURL(join(REPO_ROOT, "node_modules/tsx/dist/loader.mjs")).href;

describe("every code block in the docs is marked", () => {
  it("with a known kind, in a language that kind takes (or lies in a generated block)", () => {
    const problems: string[] = [];
    for (const block of blocks) {
      if (block.generated) {
        if (block.mark) problems.push(`${where(block)}: a block inside a generated block needs no mark`);
        continue;
      }
      if (!block.mark) {
        problems.push(`${where(block)}: no <!-- block: KIND --> mark on the line above the fence`);
        continue;
      }
      const langs = KINDS[block.mark.kind];
      if (!langs) problems.push(`${where(block)}: unknown kind "${block.mark.kind}" (known: ${Object.keys(KINDS).join(", ")})`);
      else if (langs.length > 0 && !langs.includes(block.lang)) problems.push(`${where(block)}: a ${block.mark.kind} block is ${langs.join(" or ")}, not "${block.lang}"`);
      if (block.mark.kind === "shown" && block.mark.rest.replace(/[—–-]/g, "").trim() === "") problems.push(`${where(block)}: "shown" needs a reason`);
    }
    expect(problems).toEqual([]);
    const shown = marked("shown").map((b) => `${where(b)} (${b.mark!.rest.replace(/^\s*[—–-]\s*/, "").trim()})`);
    console.log(`docs: ${blocks.length} blocks; not run (shown): ${shown.length}\n  ${shown.join("\n  ")}`);
  });

  it("generated blocks are what npm run gen writes; whole generated pages are gen outputs", () => {
    const fresh = new Map(renderBlocks().map((b) => [`${b.path}#${b.name}`, b.content]));
    for (const block of blocks.filter((b) => b.generated)) {
      const key = `${block.file}#${block.generated}`;
      expect(fresh.has(key), `${where(block)}: npm run gen writes no block "${block.generated}" in ${block.file}`).toBe(true);
      expect(readBlock(readFileSync(join(REPO_ROOT, block.file), "utf8"), block.generated!)).toEqual({ content: fresh.get(key) });
    }
    const outputs = renderOutputs(REPO_ROOT);
    for (const page of readdirSync(join(REPO_ROOT, "docs/reference"))) {
      expect(outputs.has(`docs/reference/${page}`), `docs/reference/${page} is not written by npm run gen`).toBe(true);
    }
  });
});

describe("what the docs name exists", () => {
  const texts = DOC_FILES.map((file) => ({ file, text: readFileSync(join(REPO_ROOT, file), "utf8") }));
  /** Inline code spans outside fenced blocks, with their page. */
  const spans = texts.flatMap(({ file, text }) =>
    [...text.replace(/^(\s*)(```|~~~)[\s\S]*?^\1\2/gm, "").matchAll(/`([^`\n]+)`/g)].map((m) => ({ file, code: m[1]! })),
  );

  it("links: files exist, anchors are headings of their page", () => {
    const slugsOf = new Map<string, Set<string>>();
    const slugs = (path: string) => {
      if (!slugsOf.has(path)) {
        const slugger = new Slugger();
        const headings = readFileSync(join(REPO_ROOT, path), "utf8").split("\n").filter((l) => /^#{1,6} /.test(l));
        slugsOf.set(path, new Set(headings.map((l) => slugger.slug(l.replace(/^#+ /, "")))));
      }
      return slugsOf.get(path)!;
    };
    const broken: string[] = [];
    for (const { file, text } of texts) {
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue; // http:, https:, mailto:
        const [path, anchor] = target!.split("#") as [string, string | undefined];
        const resolved = path === "" ? file : join(dirname(file), path);
        if (!existsSync(join(REPO_ROOT, resolved))) broken.push(`${file}: ${target} (no such file)`);
        else if (anchor !== undefined && resolved.endsWith(".md") && !slugs(resolved).has(anchor)) broken.push(`${file}: ${target} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("configuration keys are keys of the configuration reference", () => {
    const normal = (path: string) => path.replace(/<[^>]+>/g, "*").replace(/\[\d*\]/g, "").replace(/(\.\*)+$/, "");
    const reference = readFileSync(join(REPO_ROOT, "docs/reference/config.md"), "utf8");
    const keys = new Set([...reference.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => normal(m[1]!)));
    const methods = new Set([...Object.keys(requests)]);
    const unknown = spans
      .filter(({ code }) => /^(server|limits|llm|tools|conversations|providers|mcpServers)\.[\w.*<>[\]-]+$/.test(code) && !methods.has(code) && !/\.(ts|js|json|md|py)$/.test(code))
      .filter(({ code }) => !keys.has(normal(code)))
      .map(({ file, code }) => `${file}: ${code}`);
    expect(unknown).toEqual([]);
  });

  it("flags are in agentwire --help, files and environment variables in the repository", () => {
    // Flags of other commands the guides mention, with whose they are.
    const OTHER_FLAGS: Record<string, string> = { "--quick": "npm run bench", "--only": "npm run bench", "--max-old-space-size": "node", "--trace-deopt": "node", "--enable-source-maps": "node" };
    const problems: string[] = [];
    for (const { file, code } of spans) {
      const flag = /^(--[a-z][a-z-]*)/.exec(code)?.[1];
      if (flag && !OTHER_FLAGS[flag] && !new RegExp(`(^|[\\s,])${flag}\\b`, "m").test(HELP)) problems.push(`${file}: flag ${flag} is not in agentwire --help`);
      if (/^(src|test|bench|protocol|clients|docs)\/[\w./*-]+$/.test(code) && !globExists(code)) problems.push(`${file}: ${code} does not exist`);
      for (const name of code.match(/\b(AGENTWIRE|OPENAI)_[A-Z_]+\b/g) ?? []) {
        if (!codeMentions(name)) problems.push(`${file}: ${name} appears nowhere in src/ or test/`);
      }
    }
    expect(problems).toEqual([]);
  });
});

/** Whether a repository path exists; `*` matches within one path segment. */
function globExists(pattern: string): boolean {
  const parts = pattern.replace(/\/$/, "").split("/");
  const walk = (dir: string, i: number): boolean => {
    if (i === parts.length) return true;
    if (!parts[i]!.includes("*")) return existsSync(join(dir, parts[i]!)) && walk(join(dir, parts[i]!), i + 1);
    const re = new RegExp(`^${parts[i]!.split("*").map((p) => p.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`);
    return existsSync(dir) && readdirSync(dir).some((entry) => re.test(entry) && walk(join(dir, entry), i + 1));
  };
  return walk(REPO_ROOT, 0);
}

let sources: string | undefined;
/** Whether a name occurs in the source or the tests (an environment variable the docs mention must be read or set somewhere). */
function codeMentions(name: string): boolean {
  if (sources === undefined) {
    const read = (dir: string): string[] =>
      readdirSync(join(REPO_ROOT, dir), { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? (e.name === "fixtures" ? [] : read(join(dir, e.name))) : e.name.endsWith(".ts") ? [readFileSync(join(REPO_ROOT, dir, e.name), "utf8")] : [],
      );
    sources = [...read("src"), ...read("protocol"), ...read("test")].join("\n");
  }
  return sources.includes(name);
}

// ---------------------------------------------------------------------------------------------
// The sandbox: the shipped bundle, the fake model, a server for client snippets, npx.

let bundleEntry: string;
let fake: FakeOpenAI;
let server: CliProcess;
let serverUrl: string;
let sandbox: string;
let binDir: string;

beforeAll(async () => {
  sandbox = await mkdtemp(join(tmpdir(), "agentwire-docs-"));
  bundleEntry = shippedBundle();
  fake = await startFakeOpenAI();
  binDir = join(sandbox, "bin");
  await mkdir(binDir);
  // npx as in a clone after npm ci: the package's own bin, else node_modules/.bin.
  await writeFile(
    join(binDir, "npx"),
    [
      "#!/usr/bin/env bash",
      `if [ "$1" = agentwire ]; then shift; exec node '${join(REPO_ROOT, bundleEntry)}' "$@"; fi`,
      'while [ "${1#-}" != "$1" ]; do shift; done',
      `bin='${join(REPO_ROOT, "node_modules/.bin")}'/"$1"; shift`,
      '[ -x "$bin" ] || { echo "npx (docs sandbox): no such command: $bin" >&2; exit 127; }',
      'exec "$bin" "$@"',
      "",
    ].join("\n"),
    { mode: 0o755 },
  );
  server = runCli(
    ["serve", "--port", "0", "--data-dir", join(sandbox, "server-data"), "--log-level", "warn"],
    { OPENAI_BASE_URL: fake.url, AGENTWIRE_MODEL: "bench-tool-true" },
    bundleEntry,
    sandbox,
  );
  serverUrl = await server.listening(20_000);
}, 60_000);

afterAll(async () => {
  await killAllCli();
  await fake?.close();
  if (sandbox) await rm(sandbox, { recursive: true, force: true });
});

function freePort(): Promise<string> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(String(port)));
    });
  });
}

/** A HOME with `~/clone` linking the repository's test/, clients/ and node_modules/. */
async function makeHome(name: string): Promise<{ home: string; clone: string }> {
  const home = join(sandbox, "homes", name);
  const clone = join(home, "clone");
  // Private, whatever the umask: a directory others may write stops the agentwire.json lookup.
  await mkdir(clone, { recursive: true, mode: 0o700 });
  for (const dir of ["test", "clients", "node_modules"]) await symlink(join(REPO_ROOT, dir), join(clone, dir));
  return { home, clone };
}

function sandboxEnv(home: string): NodeJS.ProcessEnv {
  const env = cleanEnv({ HOME: home, PATH: `${binDir}:${process.env.PATH}`, TERM: "dumb", SHELL: "/bin/bash" });
  // The XDG defaults under the sandbox's HOME apply, as the docs describe them.
  delete env.XDG_CONFIG_HOME;
  delete env.XDG_DATA_HOME;
  return env;
}

/** Replaces the docs' ports (see the header): `ports` holds what this page started itself. */
async function withPorts(text: string, ports: Map<string, string>): Promise<string> {
  for (const [role, port] of Object.entries(DOC_PORTS)) {
    if (!ports.has(port) && new RegExp(`--port ${port}\\b`).test(text)) ports.set(port, await freePort());
    const own = role === "fake" ? new URL(fake.url).port : new URL(serverUrl).port;
    text = text.replace(new RegExp(`\\b${port}\\b`, "g"), ports.get(port) ?? own);
  }
  // Any other port a block listens on (docs/cluster.md's 8801–8803): a fresh one, for the rest of the page.
  for (const [, port] of text.matchAll(/--port (\d{4,5})\b/g)) if (!ports.has(port!)) ports.set(port!, await freePort());
  for (const [port, fresh] of ports) if (!Object.values(DOC_PORTS).includes(port as never)) text = text.replace(new RegExp(`\\b${port}\\b`, "g"), fresh);
  return text;
}

// ---------------------------------------------------------------------------------------------
// Pages: run and transcript blocks, in order, in one session each.

const sessionPages = DOC_FILES.filter((file) => blocks.some((b) => b.file === file && (SESSION_KINDS.has(b.mark?.kind ?? "") || b.mark?.options.has("file"))));

/** What a page's blocks need from the machine, set up before they run; `prepare` returns its undoing. */
const PAGE_NEEDS: Record<string, { what: string; available(): Promise<boolean>; prepare(): Promise<() => Promise<void>> }> = {
  "docs/cluster.md": {
    what: `PostgreSQL (${POSTGRES_ADMIN_URL}) or Redis (${REDIS_URL})`,
    available: async () => redisAvailable && (await postgresReachable("docs/cluster.md")),
    prepare: clusterDatabase,
  },
};

/**
 * The role and database docs/cluster.md names (`postgres://agentwire@…/agentwire`), created as the
 * page tells a reader to when missing; dropped afterwards only when created here, with the keys
 * its instances left under Redis's default prefix.
 */
async function clusterDatabase(): Promise<() => Promise<void>> {
  const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await admin.connect();
  try {
    const exists = async (sql: string) => (await admin.query(sql)).rowCount! > 0;
    const createdRole = !(await exists("SELECT 1 FROM pg_roles WHERE rolname = 'agentwire'"));
    if (createdRole) await admin.query("CREATE ROLE agentwire LOGIN");
    const createdDb = !(await exists("SELECT 1 FROM pg_database WHERE datname = 'agentwire'"));
    if (createdDb) await admin.query("CREATE DATABASE agentwire OWNER agentwire");
    return async () => {
      if (!createdDb) return;
      const undo = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
      await undo.connect();
      try {
        await undo.query("DROP DATABASE IF EXISTS agentwire WITH (FORCE)");
        if (createdRole) await undo.query("DROP ROLE IF EXISTS agentwire");
      } finally {
        await undo.end();
      }
      const { Redis } = await import("ioredis");
      const redis = new Redis(REDIS_URL);
      try {
        let cursor = "0";
        do {
          const [next, keys] = await redis.scan(cursor, "MATCH", "agentwire:*", "COUNT", 1000);
          if (keys.length > 0) await redis.del(...keys);
          cursor = next;
        } while (cursor !== "0");
      } finally {
        redis.disconnect();
      }
    };
  } finally {
    await admin.end();
  }
}

/** Pages whose needs this machine lacks: skipped, saying so. */
const UNAVAILABLE = new Set<string>();
for (const [file, needs] of Object.entries(PAGE_NEEDS)) {
  if (await needs.available()) continue;
  console.log(`docs-blocks: ${file} skipped: ${needs.what} does not answer`);
  UNAVAILABLE.add(file);
}

// Pages are independent (a HOME each): they run side by side, each page's blocks in order.
describe.concurrent("shell blocks and transcripts, in one session per page", () => {
  for (const file of sessionPages) it.skipIf(UNAVAILABLE.has(file))(`${file}: run as written`, async () => {
    const release = await PAGE_NEEDS[file]?.prepare();
    const { home, clone } = await makeHome(file.replace(/\W/g, "_"));
    const session = ShellSession.start(clone, sandboxEnv(home), home);
    const ports = new Map<string, string>();
    try {
      for (const block of blocks.filter((b) => b.file === file)) {
        const kind = block.mark?.kind;
        if (kind === "config" && block.mark!.options.has("file")) {
          const { cwd } = await session.snapshot();
          await writeFile(join(cwd, block.mark!.options.get("file")!), block.body);
        } else if (kind === "run") {
          const until = block.mark!.options.get("until");
          const times = Number(block.mark!.options.get("times") ?? 1);
          const result = await session.run(await withPorts(block.body, ports), { until, times });
          expect(result.failed, `${where(block)} failed:\n${result.output}`).toEqual([]);
          if (until !== undefined) expect(result.printed, `${where(block)} ended without printing ${until}:\n${result.output}`).toBe(true);
          else expect(result.code, `${where(block)} exited ${result.code}:\n${result.output}`).toBe(0);
        } else if (kind === "transcript") {
          const body = await withPorts(block.body, ports);
          if (block.mark!.flags.has("terminal")) await terminalTranscript(block, body, session);
          else {
            for (const step of parseTranscript(body)) {
              const { output } = await session.run(step.command, { trapErrors: false });
              const mismatch = compareOutput(step.command, step.expected, output);
              expect(mismatch, `${where(block)}: ${mismatch}`).toBeNull();
            }
          }
        }
      }
    } finally {
      await session.close();
      await release?.();
    }
  }, 120_000);
});

/** One command on a pseudo-terminal, with the session's directory and environment; keys go in at each prompt. */
async function terminalTranscript(block: DocBlock, body: string, session: ShellSession): Promise<void> {
  const steps = parseTranscript(body);
  expect(steps, `${where(block)}: a terminal transcript holds one command`).toHaveLength(1);
  const [{ command, expected }] = steps as [(typeof steps)[0]];
  const keys = (block.mark!.options.get("input") ?? "").split("|").filter(Boolean).map((k) => (k === "^D" ? "\x04" : k === "^C" ? "\x03" : `${k}\r`));
  const { cwd, env } = await session.snapshot();
  const child = spawn("script", ["-qfec", command, "/dev/null"], {
    cwd,
    env: { ...env, TERM: "xterm", COLUMNS: "120", LINES: "40" },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let raw = "";
  let changedAt = Date.now();
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    raw += chunk;
    changedAt = Date.now();
  });
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  try {
    let seenUpTo = 0;
    for (const key of keys) {
      // A prompt: the screen's last line ends with ":" or ">", new since the last key, and quiet for 200 ms.
      const deadline = Date.now() + 20_000;
      for (;;) {
        const last = screenOf(raw).split("\n").at(-1)!;
        if (raw.length > seenUpTo && /[:>]$/.test(last) && Date.now() - changedAt > 200) break;
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`${where(block)}: no prompt for ${JSON.stringify(key)}; screen:\n${screenOf(raw)}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      child.stdin!.write(key);
      seenUpTo = raw.length + key.length;
    }
    const code = await Promise.race([exited, new Promise<"timeout">((r) => setTimeout(() => r("timeout"), 20_000))]);
    expect(code, `${where(block)}: ${command} did not end; screen:\n${screenOf(raw)}`).not.toBe("timeout");
    const mismatch = compareOutput(command, expected, screenOf(raw));
    expect(mismatch, `${where(block)}: ${mismatch}`).toBeNull();
  } finally {
    if (child.exitCode === null) child.kill("SIGKILL");
  }
}

// ---------------------------------------------------------------------------------------------
// TypeScript and Python snippets against the sandbox server.

const PRELUDE = [
  'import { WebSocket } from "ws";',
  'import { AgentwireClient } from "./clients/typescript/index.js";',
  'const client = await AgentwireClient.connect("ws://127.0.0.1:8765", { WebSocket });',
  'const { id } = await client.conversation.create({ title: "docs" });',
  'await client.message.append({ conversationId: id, role: "user", content: "hello" });',
  "",
].join("\n");
const isFragment = (block: DocBlock) => !/^import /m.test(block.body);
const tsSource = (block: DocBlock) => (isFragment(block) ? `${PRELUDE}${block.body}await client.close();\n` : block.body);
const tsName = (block: DocBlock) => `${block.file.replace(/\W/g, "_")}_${block.line}.ts`;

// This describe and the next run beside the pages above (their tests too): they only talk to the sandbox's
// server and read files of their own.
describe.skipIf(marked("typescript").length === 0)("TypeScript blocks", { concurrent: true }, () => {
  let dir: string;
  beforeAll(async () => {
    dir = join(sandbox, "ts");
    await mkdir(dir);
    for (const link of ["clients", "node_modules", "protocol"]) await symlink(join(REPO_ROOT, link), join(dir, link));
    // This package as a dependency, one folder up (node_modules above is the repository's own).
    await mkdir(join(sandbox, "node_modules"));
    await symlink(REPO_ROOT, join(sandbox, "node_modules", "agentwire"));
    await writeFile(join(dir, "package.json"), '{ "type": "module" }\n');
    for (const block of marked("typescript")) await writeFile(join(dir, tsName(block)), await withPorts(tsSource(block), new Map()));
    // Written before any block runs: tsx reads it too.
    const tsconfig = {
      compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", lib: ["ES2023", "DOM"], types: ["node"], strict: true, skipLibCheck: true, noEmit: true },
      files: marked("typescript").map(tsName),
    };
    await writeFile(join(dir, "tsconfig.json"), JSON.stringify(tsconfig));
  });

  it("type-check against the generated client", async () => {
    const { code, output } = await run(process.execPath, [join(REPO_ROOT, "node_modules/typescript/bin/tsc"), "-p", dir], dir);
    expect(output).toBe("");
    expect(code).toBe(0);
  }, 60_000);

  it.each(marked("typescript").filter((b) => b.mark!.flags.has("run")).map((b) => [where(b), b] as const))("%s runs against a live server", async (_, block) => {
    const { code, output } = await run(process.execPath, ["--import", TSX_LOADER, join(dir, tsName(block))], dir);
    expect(code, output).toBe(0);
  }, 30_000);
});

describe.skipIf(marked("python").length === 0)("Python blocks", { concurrent: true }, () => {
  const python = ["/usr/bin/python3", "python3"].find((p) => run.sync(p, ["-c", "import websockets"]) === 0);
  it.each(marked("python").map((b) => [where(b), b] as const))(`%s ${python ? "runs against a live server" : "compiles (no python3 with websockets here)"}`, async (_, block) => {
    const source = await withPorts(block.body, new Map());
    const env = { PYTHONPATH: join(REPO_ROOT, "clients/python"), PYTHONDONTWRITEBYTECODE: "1" };
    const args = python ? ["-c", source] : ["-c", `compile(${JSON.stringify(source)}, "block", "exec")`];
    if (!python) console.warn("docs-blocks: no python3 with websockets; Python blocks only compiled");
    const { code, output } = await run(python ?? "python3", args, sandbox, env);
    expect(code, output).toBe(0);
    if (python) expect(output, "the example prints the answer it streams").toMatch(/t:\d+;/);
  }, 30_000);
});

// ---------------------------------------------------------------------------------------------
// Configuration files, requests, skills.

describe.skipIf(marked("config").length === 0)("config blocks", { concurrent: true }, () => {
  it.each(marked("config").map((b) => [where(b), b] as const))("%s starts agentwire serve --config FILE", async (_, block) => {
    const dir = await mkdtemp(join(sandbox, "config-"));
    await writeFile(join(dir, "agentwire.json"), block.body);
    // The sandbox's PATH: an MCP server started with npx fails at once instead of asking the registry.
    const env: Record<string, string> = { OPENAI_BASE_URL: fake.url, HOME: dir, PATH: `${binDir}:${process.env.PATH}` };
    for (const name of (block.mark!.options.get("env") ?? "").split(",").filter(Boolean)) env[name] = "docs-sandbox-value";
    const cli = runCli(["serve", "--config", join(dir, "agentwire.json"), "--port", "0", "--data-dir", join(dir, "data"), "--log-level", "warn"], env, bundleEntry, dir);
    const url = await cli.listening(20_000).catch((error: Error) => expect.fail(`${where(block)}: ${error.message}`));
    if (block.mark!.flags.has("step")) await stepThrough(block, url);
    cli.child.kill("SIGTERM");
    // Exit 0 from its SIGTERM handler, or the signal itself when it came before the handler was set.
    expect(await cli.exited).toSatisfy(({ code, signal }) => code === 0 || signal === "SIGTERM");
    expect(cli.stderr()).not.toMatch(/bad configuration|uncaught|unhandled/i);
  }, 30_000);
});

/**
 * A `config step` block also runs one step on its model, whose endpoint is the fake (OPENAI_BASE_URL
 * wins over the file's llm.baseUrl): it must complete, and the request reach the fake keyless
 * when the file names no key (no variable of the sandbox holds one).
 */
async function stepThrough(block: DocBlock, url: string): Promise<void> {
  const file = JSON.parse(stripComments(block.body)) as { model: string; llm?: { apiKey?: string; apiKeyEnv?: string } };
  const client = await AgentwireClient.connect(url, { WebSocket });
  try {
    const { id } = await client.conversation.create({ title: "docs config" });
    await client.message.append({ conversationId: id, role: "user", content: "hello" });
    const { generationId } = await client.step({ conversationId: id, autoConfirm: true });
    const end = await client.generation.wait({ conversationId: id, generationId });
    expect(end, `${where(block)}: the step on ${file.model}`).toMatchObject({ done: true, outcome: "completed" });
  } finally {
    await client.close();
  }
  const exchange = fake.exchanges.find((e) => e.body.model === file.model);
  expect(exchange, `${where(block)}: no request for ${file.model} reached the fake`).toBeDefined();
  if (file.llm?.apiKey === undefined && file.llm?.apiKeyEnv === undefined) expect(exchange!.headers.authorization).toBe("Bearer none");
}

describe.skipIf(marked("request").length === 0)("request blocks", () => {
  it.each(marked("request").map((b) => [where(b), b] as const))("%s: every request's params are valid", (_, block) => {
    const frames = topLevelObjects(stripComments(block.body)).map((text) => JSON.parse(text) as { method?: string; params?: unknown });
    const sent = frames.filter((f) => f.method !== undefined);
    expect(sent.length, `${where(block)} holds no request`).toBeGreaterThan(0);
    for (const frame of sent) {
      const entry = (requests as Record<string, { params: { safeParse(v: unknown): { success: boolean; error?: unknown } } }>)[frame.method!];
      expect(entry, `${where(block)}: no method ${frame.method}`).toBeDefined();
      const parsed = entry!.params.safeParse(frame.params ?? {});
      expect(parsed.success, `${where(block)}: ${frame.method}: ${String(parsed.error)}`).toBe(true);
    }
  });
});

describe.skipIf(marked("skill").length === 0)("skill blocks", () => {
  it.each(marked("skill").map((b) => [where(b), b] as const))("%s is found by skills.list without problems", async (_, block) => {
    const name = /^name:\s*(\S+)/m.exec(block.body)?.[1];
    expect(name, `${where(block)}: no name in the front matter`).toBeDefined();
    const workspace = await mkdtemp(join(sandbox, "skills-"));
    await mkdir(join(workspace, ".agentwire/skills", name!), { recursive: true });
    await writeFile(join(workspace, ".agentwire/skills", name!, "SKILL.md"), block.body);
    const client = await AgentwireClient.connect(serverUrl, { WebSocket });
    try {
      const { id } = await client.conversation.create({ workspace });
      const listed = await client.skills.list({ conversationId: id });
      expect(listed.problems).toEqual([]);
      expect(listed.skills.map((s) => s.name)).toContain(name);
    } finally {
      await client.close();
    }
  });
});

describe.skipIf(marked("command").length === 0)("command blocks", () => {
  it.each(marked("command").map((b) => [where(b), b] as const))("%s is found by commands.list without problems", async (_, block) => {
    const name = block.mark!.options.get("name");
    expect(name, `${where(block)}: the mark names no command (name=NAME)`).toBeDefined();
    const workspace = await mkdtemp(join(sandbox, "commands-"));
    await mkdir(join(workspace, ".agentwire/commands"), { recursive: true });
    await writeFile(join(workspace, ".agentwire/commands", `${name!}.md`), block.body);
    const client = await AgentwireClient.connect(serverUrl, { WebSocket });
    try {
      const listed = await client.commands.list({ workspace });
      expect(listed.problems).toEqual([]);
      expect(listed.commands.map((c) => c.name)).toContain(name);
    } finally {
      await client.close();
    }
  });
});

// ---------------------------------------------------------------------------------------------

/** The top-level `{…}` values of a text of JSON objects in a row (strings respected). */
function topLevelObjects(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === "\\") i++;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === "{") {
      if (depth++ === 0) start = i;
    } else if (ch === "}" && --depth === 0) out.push(text.slice(start, i + 1));
  }
  return out;
}

function run(command: string, args: string[], cwd: string, env: Record<string, string> = {}): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, env: cleanEnv(env), stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => (output += c));
    child.stderr.setEncoding("utf8").on("data", (c: string) => (output += c));
    child.on("error", (error) => resolve({ code: -1, output: String(error) }));
    child.on("close", (code) => resolve({ code, output }));
  });
}
run.sync = (command: string, args: string[]): number | null => spawnSync(command, args, { stdio: "ignore", timeout: 10_000 }).status;
