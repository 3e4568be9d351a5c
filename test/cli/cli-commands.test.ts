/**
 * The CLI's commands as a user runs them: the shipped bundle as a child
 * process, against a real server (one in this process, reached with --url,
 * whose model is the fake OpenAI-compatible server), or the server the
 * command embeds. Per-command help, `agentwire help COMMAND`, usage errors,
 * `mcp list|add|remove|probe` (add and remove edit the user's agentwire.json
 * and keep its comments), `models`, `tools`, `status`, `chat --continue`,
 * `config --schema`, each with --json.
 */
import { existsSync, realpathSync, statSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "../fake-openai/server.js";
import { FIXTURE_SERVER, stdioFixture } from "../fixtures/mcp/mcp-fixture.js";
import { type AgentFixture, startAgentFixture } from "../harness/agent-fixture.js";
import { REPO_ROOT, runCli } from "../harness/cli-process.js";
import { parseCli } from "../../src/cli-options.js";
import { maskedArgs } from "../../src/process-secrets.js";
import { useShippedCli } from "../harness/shipped-cli.js";

const run = useShippedCli();
let scratch: string;

beforeAll(async () => {
  scratch = realpathSync(await mkdtemp(join(tmpdir(), "agentwire-cli-commands-")));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

let dirs = 0;
async function freshDir(name: string): Promise<string> {
  const dir = join(scratch, `${name}-${dirs++}`);
  await mkdir(dir, { recursive: true });
  return dir;
}

/** Runs the bundle to its end in `cwd` (default: a fresh directory). */
async function agentwire(args: string[], env: Record<string, string> = {}, cwd?: string) {
  const cli = run(args, env, cwd ?? (await freshDir("cwd")));
  const { code } = await cli.exited;
  return { code, stdout: cli.stdout(), stderr: cli.stderr() };
}

const COMMANDS = ["serve", "config", "chat", "acp", "conversations", "mcp", "mcp list", "mcp add", "mcp remove", "mcp probe", "models", "tools", "status", "trust"];

describe("help and usage", { timeout: 60_000 }, () => {
  it("every command has help of its own, with examples; `help CMD` prints what `CMD --help` does", async () => {
    // Every command through the parser; a few through the shipped CLI, the rest would only repeat its start-up.
    const help = (argv: string[]) => {
      const parsed = parseCli(argv, {}, { discover: false });
      expect(parsed.help?.error).toBe(false);
      return parsed.help!.text;
    };
    const texts = new Map<string, string>();
    for (const command of COMMANDS) {
      const words = command.split(" ");
      const viaFlag = help([...words, "--help"]);
      expect(viaFlag).toMatch(new RegExp(`^Usage: agentwire ${command} `));
      expect(viaFlag).toContain(`\nExamples:\n  $ agentwire ${words[0]}`);
      expect(help(["help", ...words])).toBe(viaFlag);
      texts.set(command, viaFlag);
    }
    // No two commands share a help text (the old CLI printed the same global text for each).
    expect(new Set(texts.values()).size).toBe(COMMANDS.length);
    expect(texts.get("chat")).toContain("--continue");
    expect(texts.get("mcp add")).toContain("--http <URL>");
    expect(texts.get("mcp")).not.toContain("--continue");
    // The configuration keys' flags and their help are the schema's: serve lists them, a client command its embedded server's.
    expect(texts.get("serve")).toMatch(/--max-payload <BYTES>\s+largest accepted frame/);
    expect(texts.get("models")).toMatch(/--data-dir <DIR>\s+where conversations are stored/);

    const shipped = await Promise.all(
      [["chat", "--help"], ["help", "chat"], ["mcp", "--help"], ["help", "mcp"], ["mcp", "add", "--help"], ["help", "mcp", "add"]].map((argv) => agentwire(argv)),
    );
    for (const result of shipped) expect(result.code, result.stderr).toBe(0);
    expect(shipped.map((result) => result.stdout)).toEqual([texts.get("chat"), texts.get("chat"), texts.get("mcp"), texts.get("mcp"), texts.get("mcp add"), texts.get("mcp add")]);
  });

  it("an unknown command, subcommand or flag exits 2 naming it and the help to read", async () => {
    const [command, sub, flag, missing] = await Promise.all([
      agentwire(["frobnicate"]),
      agentwire(["mcp", "frobnicate"]),
      agentwire(["models", "--no-such-flag"]),
      agentwire(["mcp"]),
    ]);
    expect(command).toMatchObject({ code: 2, stdout: "" });
    expect(command.stderr).toBe("agentwire: unknown command 'frobnicate'\nRun agentwire --help for usage.\n");
    expect(sub.code).toBe(2);
    expect(sub.stderr).toContain("unknown command 'frobnicate'");
    expect(sub.stderr).toContain("Run agentwire mcp --help for usage.");
    expect(flag.code).toBe(2);
    expect(flag.stderr).toBe("agentwire: unknown option '--no-such-flag'\nRun agentwire models --help for usage.\n");
    // A command that needs a subcommand: its help, on stderr, and 2.
    expect(missing).toMatchObject({ code: 2, stdout: "" });
    expect(missing.stderr).toMatch(/^Usage: agentwire mcp /);
  });

  it("config --schema prints the absolute path of the installed schema, from the bundle and from source", async () => {
    const expected = join(REPO_ROOT, "protocol", "config.schema.json");
    const bundled = await agentwire(["config", "--schema"]);
    expect(bundled).toMatchObject({ code: 0, stdout: `${expected}\n` });
    const source = runCli(["config", "--schema", "--json"], {}, "src/cli.ts", await freshDir("source"));
    expect((await source.exited).code).toBe(0);
    expect(JSON.parse(source.stdout())).toEqual({ path: expected });
    expect(JSON.parse(await readFile(expected, "utf8"))).toHaveProperty("$schema");
  });
});

describe("against a running server (--url)", { timeout: 60_000 }, () => {
  let fx: AgentFixture;
  beforeAll(async () => {
    fx = await startAgentFixture({ transport: "websocket" });
  });
  afterAll(async () => {
    await fx?.close();
  });

  it("tools and status, as text and as --json", async () => {
    const [tools, toolsJson, status, statusJson] = await Promise.all([
      agentwire(["tools", "--url", fx.server.url]),
      agentwire(["tools", "--url", fx.server.url, "--json"]),
      agentwire(["status", "--url", fx.server.url]),
      agentwire(["status", "--url", fx.server.url, "--json"]),
    ]);
    for (const result of [tools, toolsJson, status, statusJson]) expect(result.code, result.stderr).toBe(0);
    const listed = JSON.parse(toolsJson.stdout) as { tools: { name: string; source: string }[] };
    expect(listed.tools).toContainEqual(expect.objectContaining({ name: "shell", source: "builtin" }));
    expect(tools.stdout).toMatch(/^shell\s+builtin\s+\S/m);
    const { version, conversationsStored } = JSON.parse(statusJson.stdout) as { version: string; conversationsStored: number };
    expect(version).toMatch(/^\d+\.\d+\.\d+/);
    expect(status.stdout).toMatch(new RegExp(`^version\\s+${version.replace(/\./g, "\\.")}$`, "m"));
    expect(status.stdout).toMatch(new RegExp(`^conversations\\s+${conversationsStored} stored`, "m"));
  });

  it("mcp add writes the server into the user's agentwire.json, comments kept, and the running server starts it; list shows it; remove undoes both", async () => {
    const xdg = await freshDir("xdg");
    const file = join(xdg, "agentwire", "agentwire.json");
    await mkdir(join(xdg, "agentwire"));
    const original = `// my settings\n{\n  /* the model I use */\n  "model": "fake-model",\n}\n`;
    await writeFile(file, original);
    const env = { XDG_CONFIG_HOME: xdg };

    const added = await agentwire(["mcp", "add", "fx", "--url", fx.server.url, "--json", "--", process.execPath, FIXTURE_SERVER], env);
    expect(added.code, added.stderr).toBe(0);
    const report = JSON.parse(added.stdout) as { configFile: string; running: { server: { name: string; state: string; tools: { name: string }[] } } };
    expect(report.configFile).toBe(file);
    expect(report.running.server).toMatchObject({ name: "fx", state: "connected" });
    expect(report.running.server.tools.map((t) => t.name)).toContain("mcp__fx__echo");
    const edited = await readFile(file, "utf8");
    expect(edited).toContain("// my settings");
    expect(edited).toContain("/* the model I use */");
    expect(edited).toContain(`"command": ${JSON.stringify(process.execPath)}`);

    const [list, listJson, again] = await Promise.all([
      agentwire(["mcp", "list", "--url", fx.server.url], env),
      agentwire(["mcp", "list", "--url", fx.server.url, "--json"], env),
      agentwire(["mcp", "add", "fx", "--url", fx.server.url, "--", process.execPath, FIXTURE_SERVER], env),
    ]);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/^fx\s+stdio\s+added \(mcp\.add\)\s+connected$/m);
    expect(list.stdout).toMatch(/^ {2}mcp__fx__echo\s/m);
    expect((JSON.parse(listJson.stdout) as { servers: { name: string }[] }).servers.map((s) => s.name)).toEqual(["fx"]);
    // A name already in the file is refused, and the file is left as it was.
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`${file} already has an MCP server named "fx"`);
    expect(await readFile(file, "utf8")).toBe(edited);

    const removed = await agentwire(["mcp", "remove", "fx", "--url", fx.server.url], env);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stdout).toContain(`removed MCP server "fx" from ${file}`);
    expect(removed.stdout).toContain(`the server at ${fx.server.url} stopped it`);
    const after = await readFile(file, "utf8");
    expect(after).toContain("// my settings");
    expect(after).toContain("/* the model I use */");
    expect(after).not.toContain("fx");
    expect((await fx.client.mcp.list()).servers).toEqual([]);
    const gone = await agentwire(["mcp", "remove", "fx", "--url", fx.server.url], env);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain(`no MCP server named "fx" in ${file}`);
  });

  it("mcp add's --header and --env values are masked in the process title, as --token's", () => {
    expect(maskedArgs(["mcp", "add", "docs", "--http", "http://h/mcp", "--header", "Authorization=Bearer s3cret", "--env=KEY=v4lue"])).toEqual([
      "mcp", "add", "docs", "--http", "http://h/mcp", "--header", "***", "--env=***",
    ]);
  });

  it("mcp probe lists what a server offers and adds nothing", async () => {
    const probe = await agentwire(["mcp", "probe", "--url", fx.server.url, "--json", "--", process.execPath, FIXTURE_SERVER]);
    expect(probe.code, probe.stderr).toBe(0);
    const result = JSON.parse(probe.stdout) as { serverInfo: { name: string }; tools: { name: string; inputSchema: object }[] };
    expect(result.tools.map((t) => t.name)).toContain("echo");
    expect(result.tools[0]!.inputSchema).toHaveProperty("type", "object");
    expect((await fx.client.mcp.list()).servers).toEqual([]);
    const text = await agentwire(["mcp", "probe", "--url", fx.server.url, "--", process.execPath, FIXTURE_SERVER]);
    expect(text.stdout).toMatch(new RegExp(`^${result.serverInfo.name} \\S+: ${result.tools.length} tools$`, "m"));
    const bad = await agentwire(["mcp", "probe", "--url", fx.server.url, "--http", "not a url"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^agentwire: --http: /);
  });

  it("chat --continue goes on with the last conversation of this directory; with none, it says so and exits 1", async () => {
    const workspace = await freshDir("workspace");
    fx.fake.enqueue({ kind: "reply", text: ["first answer"] }, { kind: "reply", text: ["second answer"] });
    const first = await agentwire(["chat", "--url", fx.server.url, "remember 42"], {}, workspace);
    expect(first.code, first.stderr).toBe(0);
    const second = await agentwire(["chat", "--url", fx.server.url, "--continue", "--json", "what number?"], {}, workspace);
    expect(second.code, second.stderr).toBe(0);
    const lines = second.stdout.trim().split("\n").map((line) => JSON.parse(line) as { type: string; method?: string; outcome?: string });
    expect(lines.map((l) => l.method)).not.toContain("conversation.create");
    expect(lines.at(-1)).toMatchObject({ type: "end", outcome: "completed" });
    // The model saw the first exchange: the same conversation went on.
    const sent = fx.fake.requests.at(-1)!.messages.map((m: { role: string; content: unknown }) => `${m.role}:${String(m.content)}`);
    expect(sent).toEqual(expect.arrayContaining(["user:remember 42", "assistant:first answer", "user:what number?"]));

    const elsewhere = await freshDir("empty");
    const none = await agentwire(["chat", "--url", fx.server.url, "--continue", "hi"], {}, elsewhere);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain(`no conversation to continue: none has ${elsewhere} as its workspace`);
  });
});

describe("with the server the command embeds", { timeout: 60_000 }, () => {
  let fake: FakeOpenAI;
  beforeAll(async () => {
    fake = await startFakeOpenAI({ apiKey: "test-key" });
  });
  afterAll(async () => {
    await fake?.close();
  });

  it("models: every provider's models, the default marked; --json is models.list's result", async () => {
    const env = { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: "test-key", AGENTWIRE_MODEL: "fake-model" };
    const [text, json] = await Promise.all([
      agentwire(["models", "--data-dir", await freshDir("data")], env),
      agentwire(["models", "--json", "--data-dir", await freshDir("data")], env),
    ]);
    expect(text.code, text.stderr).toBe(0);
    expect(json.code, json.stderr).toBe(0);
    const listed = JSON.parse(json.stdout) as { models: { id: string }[]; providers: { name: string; status: string }[]; defaultModel: string };
    expect(listed.providers).toEqual([expect.objectContaining({ status: "ok" })]);
    const id = listed.models.find((m) => m.id.endsWith("/fake-model"))!.id;
    expect(text.stdout).toMatch(new RegExp(`^ {2}${id}\\s+default`, "m"));
  });

  it("mcp add with no server running: the file is created (only the user may read it), and the next command's server has the MCP server", async () => {
    const xdg = await freshDir("xdg");
    const file = join(xdg, "agentwire", "agentwire.json");
    const env = { XDG_CONFIG_HOME: xdg };
    const fixture = stdioFixture();
    const added = await agentwire(["mcp", "add", "fx", "--data-dir", await freshDir("data"), "--", fixture.command, ...fixture.args], env);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toContain("no running server was reached: servers started from now on have it");
    expect(existsSync(file)).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(file, "utf8"))).toEqual({ mcpServers: { fx: { command: fixture.command, args: fixture.args } } });
    const list = await agentwire(["mcp", "list", "--json", "--data-dir", await freshDir("data")], env);
    expect(list.code, list.stderr).toBe(0);
    const { servers } = JSON.parse(list.stdout) as { servers: { name: string; origin: string; state: string; tools: unknown[] }[] };
    expect(servers).toEqual([expect.objectContaining({ name: "fx", origin: "config", state: "connected" })]);
    expect(servers[0]!.tools.length).toBeGreaterThan(0);
  });
});
