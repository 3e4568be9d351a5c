/**
 * agentwire.json: discovery (user file, parents, nearest), precedence
 * against environment and flags, how objects and lists merge, errors that
 * name the file and the key, `agentwire config` with its sources and masked
 * secrets, and a configured default reaching a conversation. Project files
 * that set trust-gated keys are trusted first, through the code path of
 * `agentwire trust` (config-trust.test.ts tests the trust itself).
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AgentwireConfigFile } from "../../protocol/config.js";
import { parseCli } from "../../src/cli-options.js";
import { ConfigFileError } from "../../src/config/config-file.js";
import { configKeys } from "../../src/config/config-keys.js";
import { valueAt } from "../../src/config/config-layers.js";
import { formatReport, MASK, reportLines } from "../../src/config/config-report.js";
import { runTrust } from "../../src/config/trust-command.js";
import { defaultConfig } from "../../src/config/server-config.js";
import { killAllCli, runCli } from "../harness/cli-process.js";
import { startTestServer } from "../harness/test-server.js";

let root: string;
let project: string;
let xdg: string;
let dataHome: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "agentwire-config-"));
  project = join(root, "work", "project");
  xdg = join(root, "xdg");
  dataHome = join(root, "data-home");
  await mkdir(project, { recursive: true });
  await mkdir(join(xdg, "agentwire"), { recursive: true });
});
afterEach(async () => {
  await killAllCli();
  await rm(root, { recursive: true, force: true });
});

const write = (path: string, text: string) => writeFile(path, text);
const serve = (argv: string[] = [], env: NodeJS.ProcessEnv = {}) =>
  parseCli(["serve", ...argv], { XDG_CONFIG_HOME: xdg, XDG_DATA_HOME: dataHome, ...env }, { cwd: project });
/** `agentwire trust DIR`, as the command runs it. */
const trust = (dir: string) => runTrust({ action: "trust", target: dir }, { env: { XDG_DATA_HOME: dataHome } }, () => {});

function configError(run: () => unknown): ConfigFileError {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigFileError) return error;
    throw error;
  }
  throw new Error("expected a ConfigFileError");
}

describe("layers", () => {
  it("defaults < user file < parent file < nearest file < environment < flags, each value with its source", async () => {
    await write(join(xdg, "agentwire", "agentwire.json"), `{ "model": "user-model", "server": { "port": 1001, "heartbeatMs": 5 }, "limits": { "maxBatch": 7 } }`);
    await write(join(root, "work", "agentwire.json"), `{ "server": { "port": 1002 }, "limits": { "maxDepth": 9 } }`);
    await write(join(project, "agentwire.json"), `{ "server": { "port": 1003 }, "llm": { "baseUrl": "http://file.example/v1" } }`);
    const { config, resolved } = serve(["--model", "flag-model"], { AGENTWIRE_MODEL: "env-model", OPENAI_BASE_URL: "http://env.example/v1" });

    expect(resolved!.files).toEqual([
      join(xdg, "agentwire", "agentwire.json"),
      join(root, "work", "agentwire.json"),
      join(project, "agentwire.json"),
    ]);
    expect(config).toMatchObject({
      model: "flag-model",
      server: { port: 1003, heartbeatMs: 5 },
      limits: { maxBatch: 7, maxDepth: 9, maxPayloadBytes: defaultConfig().limits.maxPayloadBytes },
      llm: { baseUrl: "http://env.example/v1" },
    });
    const sources = resolved!.merged.sources;
    expect(sources.get("model")).toBe("flag --model");
    expect(sources.get("server.port")).toBe(join(project, "agentwire.json"));
    expect(sources.get("server.heartbeatMs")).toBe(join(xdg, "agentwire", "agentwire.json"));
    expect(sources.get("limits.maxDepth")).toBe(join(root, "work", "agentwire.json"));
    expect(sources.get("llm.baseUrl")).toBe("env OPENAI_BASE_URL");
    expect(sources.get("limits.maxPayloadBytes")).toBe("default");
  });

  it("merges objects key by key and replaces lists whole", async () => {
    await write(join(root, "work", "agentwire.json"), `{ "server": { "allowOrigins": ["http://a", "http://b"] }, "conversations": { "settings": { "maxIterations": 3, "toolHistoryRounds": 2 } } }`);
    await write(join(project, "agentwire.json"), `{ "server": { "allowOrigins": ["http://c"] }, "conversations": { "settings": { "maxIterations": 5 } } }`);
    trust(join(root, "work"));
    trust(project);
    const { config } = serve();
    expect(config!.server.allowOrigins).toEqual(["http://c"]);
    expect(config!.conversations.settings).toEqual({ maxIterations: 5, toolHistoryRounds: 2 });
  });

  it("takes comments and trailing commas, resolves a file's relative dataDir against the file, and reads --config last among files", async () => {
    await write(join(root, "work", "agentwire.json"), `// shared\n{\n  /* where */ "server": { "dataDir": "store", },\n}\n`);
    const extra = join(root, "extra.json");
    await write(extra, `{ "server": { "logLevel": "debug" } }`);
    const { config } = serve(["--config", extra]);
    expect(config!.server.dataDir).toBe(join(root, "work", "store"));
    expect(config!.server.logLevel).toBe("debug");
  });

  it("counts a file reached twice once", async () => {
    await write(join(project, "agentwire.json"), `{ "limits": { "maxBatch": 3 } }`);
    await symlink(project, join(xdg, "agentwire-link"));
    const { resolved } = parseCli(["serve"], { XDG_CONFIG_HOME: join(xdg, "agentwire-link", "..") }, { cwd: project });
    expect(resolved!.files).toEqual([join(project, "agentwire.json")]);
  });

  it("reads an API key from the variable llm.apiKeyEnv names, and a nearer apiKey wins over a farther apiKeyEnv", async () => {
    await write(join(root, "work", "agentwire.json"), `{ "llm": { "apiKeyEnv": "MY_KEY" } }`);
    trust(join(root, "work"));
    expect(serve([], { MY_KEY: "sk-from-my-key" }).config!.llm.apiKey).toBe("sk-from-my-key");
    expect(configError(() => serve()).message).toContain("llm.apiKeyEnv: names MY_KEY, which is not set (an endpoint that takes no key, such as Ollama, needs no apiKeyEnv: leave it out)");
    await write(join(project, "agentwire.json"), `{ "llm": { "apiKey": "sk-nearer" } }`);
    trust(project);
    expect(serve([], { MY_KEY: "sk-from-my-key" }).config!.llm.apiKey).toBe("sk-nearer");
  });

  it("starts every key at its schema default, and agentwire config says so", () => {
    const defaults = defaultConfig() as unknown as Record<string, unknown>;
    const lines = new Map(reportLines(serve().resolved!).map((l) => [l.path, l]));
    const keys = configKeys().filter((k) => !k.section && "default" in k);
    expect(keys.length).toBeGreaterThan(40);
    for (const key of keys) {
      // The connection cap is the one default fitted to the machine (its open-file limit).
      const expected = key.path === "limits.maxConnections" ? expect.any(Number) : key.default;
      expect(valueAt(defaults, key.path), key.path).toEqual(expected);
      expect(lines.get(key.path), key.path).toMatchObject({ value: expected, source: "default" });
    }
  });
});

describe("errors name the file, the key and the problem", () => {
  it("a syntax error with its line and column", async () => {
    await write(join(project, "agentwire.json"), `{\n  "server": {\n    "port": 80,,\n  }\n}`);
    const error = configError(() => serve());
    expect(error.file).toBe(join(project, "agentwire.json"));
    expect(error.where).toBe("line 3, column 16");
    expect(error.problem).toContain("syntax error");
  });

  it("an unknown key, by its full path, and every other problem of the file too", async () => {
    await write(join(project, "agentwire.json"), `{ "server": { "prot": 80 }, "limits": { "maxBatch": 0 } }`);
    const error = configError(() => serve());
    expect(error.where).toBe("server.prot");
    expect(error.message).toContain("unknown key");
    expect(error.message).toContain("limits.maxBatch");
  });

  it("a value of the wrong type", async () => {
    await write(join(project, "agentwire.json"), `{ "mcpServers": { "bad name!": { "command": "x" } }, "tools": { "custom": [{ "name": "t", "description": "d" }] } }`);
    const error = configError(() => serve());
    expect(error.message).toMatch(/mcpServers|tools\.custom\[0\]\.command/);
  });

  it("an environment variable that is not valid, by its name", () => {
    const error = configError(() => serve([], { OPENAI_BASE_URL: "not a url" }));
    expect(error.where).toBe("env OPENAI_BASE_URL (llm.baseUrl)");
  });

  it("a flag outside its key's bounds or values, as the schema declares them, by the flag", () => {
    expect(() => serve(["--owner-lease-ms", "299"])).toThrow(/^--owner-lease-ms must be an integer ≥ 300, got "299"$/);
    expect(() => serve(["--port", "65536"])).toThrow(/^--port must be at most 65535, got 65536$/);
    expect(() => serve(["--port", "eighty"])).toThrow(/^--port must be an integer ≥ 0, got "eighty"$/);
    expect(() => serve(["--log-level", "loud"])).toThrow(/^--log-level must be debug, info, warn, error or silent, got "loud"$/);
    expect(() => serve(["--log-format", "xml"])).toThrow(/^--log-format must be text or json, got "xml"$/);
    expect(() => serve(["--store", "mysql://x"])).toThrow(/flag --store \(server\.store\): must be "lowdb" or a postgres:\/\/ URL/);
  });

  it("a tools.envAllow entry that is no variable name, in a file as from --tool-env (once a crash at start)", async () => {
    await write(join(project, "agentwire.json"), `{ "tools": { "envAllow": ["MY_VAR", "MY-VAR"] } }`);
    const error = configError(() => serve());
    expect(error.where).toBe("tools.envAllow[1]");
    expect(error.problem).toBe("takes environment variable names or NAME* prefixes");
  });
});

describe("agentwire config", { timeout: 20_000 }, () => {
  it("prints every value with where it came from, and masks secrets", async () => {
    await write(
      join(project, "agentwire.json"),
      `{ "server": { "token": "file-token-123" }, "mcpServers": { "gh": { "command": "gh-mcp", "env": { "GITHUB_TOKEN": "ghp_secret" } } } }`,
    );
    trust(project);
    const { resolved } = serve(["--port", "9123"], { OPENAI_API_KEY: "sk-env-secret" });
    const text = formatReport(resolved!);
    expect(text).toMatch(/server\.port\s+9123\s+flag --port/);
    const escape = (t: string) => t.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
    expect(text).toMatch(new RegExp(`server\\.token\\s+${escape(JSON.stringify(MASK))}\\s+${escape(join(project, "agentwire.json"))}`));
    expect(text).toMatch(/llm\.apiKey\s+".+"\s+env OPENAI_API_KEY/);
    expect(text).toMatch(/limits\.maxBatch\s+100\s+default/);
    expect(text).toContain('"GITHUB_TOKEN"');
    for (const secret of ["file-token-123", "ghp_secret", "sk-env-secret"]) expect(text).not.toContain(secret);
  });

  it("providers reach the ServerConfig, and their API keys and header values are masked", async () => {
    await write(
      join(project, "agentwire.json"),
      `{ "defaultProvider": "or", "providers": { "or": { "baseUrl": "https://openrouter.ai/api/v1", "apiKey": "sk-or-secret", "headers": { "HTTP-Referer": "ref-secret" }, "models": { "qwen": { "tools": false } } } } }`,
    );
    trust(project);
    const { config, resolved } = serve();
    expect(config!.defaultProvider).toBe("or");
    expect(config!.providers.or).toMatchObject({ baseUrl: "https://openrouter.ai/api/v1", apiKey: "sk-or-secret", models: { qwen: { tools: false } } });
    const text = formatReport(resolved!);
    expect(text).toMatch(/providers\.or\.apiKey\s+"•/);
    expect(text).toContain("HTTP-Referer");
    for (const secret of ["sk-or-secret", "ref-secret"]) expect(text).not.toContain(secret);
  });

  it("shows a value under a key that holds a dot (a model named gpt-4.1) as it was set", async () => {
    await write(join(project, "agentwire.json"), `{ "providers": { "oa": { "baseUrl": "http://127.0.0.1:9/v1", "models": { "gpt-4.1": { "imageInput": true } } } } }`);
    trust(project);
    const text = formatReport(serve().resolved!);
    expect(text).toMatch(/providers\.oa\.models\.gpt-4\.1\.imageInput\s+true\s/);
  });

  it("as the real binary: the report, --json, and a bad file stopping serve with exit 2 and no stack trace", async () => {
    await write(join(project, "agentwire.json"), `{ "model": "m1", "llm": { "apiKey": "sk-file-secret" } }`);
    trust(project);
    const report = runCli(["config", "--json"], { XDG_CONFIG_HOME: xdg, XDG_DATA_HOME: dataHome }, undefined, project);
    expect((await report.exited).code).toBe(0);
    const json = JSON.parse(report.stdout()) as { files: string[]; values: { model: string; llm: { apiKey: string } }; sources: Record<string, string> };
    expect(json.files).toEqual([join(project, "agentwire.json")]);
    expect(json.values.model).toBe("m1");
    expect(json.values.llm.apiKey).toBe(MASK);
    expect(json.sources.model).toBe(join(project, "agentwire.json"));
    expect(report.stdout()).not.toContain("sk-file-secret");

    await write(join(project, "agentwire.json"), `{ "limits": { "maxBatch": "lots" } }`);
    const bad = runCli(["serve", "--port", "0"], { XDG_CONFIG_HOME: xdg }, undefined, project);
    expect((await bad.exited).code).toBe(2);
    expect(bad.stderr()).toContain(`${join(project, "agentwire.json")}: limits.maxBatch:`);
    expect(bad.stderr()).not.toMatch(/\n\s+at /);
    expect(bad.stdout()).toBe("");

    // Valid as a file, unusable as tools: two custom tools of one name stop the start as cleanly.
    const tool = { name: "twice", description: "d", command: "true" };
    await write(join(project, "agentwire.json"), JSON.stringify({ tools: { custom: [tool, tool] } }));
    trust(project);
    const clash = runCli(["serve", "--port", "0", "--data-dir", join(root, "data")], { XDG_CONFIG_HOME: xdg, XDG_DATA_HOME: dataHome }, undefined, project);
    expect((await clash.exited).code).toBe(1);
    expect(clash.stderr()).toMatch(/^agentwire: .*twice/m);
    expect(clash.stderr()).not.toMatch(/\n\s+at /);
  });
});

it("conversations.settings from the configuration reaches a new conversation, under what conversation.create sets", async () => {
  await write(join(project, "agentwire.json"), `{ "conversations": { "settings": { "maxIterations": 4, "toolHistoryRounds": 1 } } }`);
  const { config } = serve();
  const server = await startTestServer({ conversations: { settings: config!.conversations.settings } });
  try {
    const client = await server.connectInMemory();
    const plain = await client.conversation.create({});
    expect(plain.settings).toMatchObject({ maxIterations: 4, toolHistoryRounds: 1 });
    const own = await client.conversation.create({ settings: { maxIterations: 9 } });
    expect(own.settings).toMatchObject({ maxIterations: 9, toolHistoryRounds: 1 });
  } finally {
    await server.close();
  }
});

it("the configuration guide's example is a valid agentwire.json", async () => {
  const { readFile } = await import("node:fs/promises");
  const guide = await readFile(new URL("../../docs/configuration.md", import.meta.url), "utf8");
  const example = /<!-- block: config [^>]*id=config-example[^>]*-->\s*```jsonc\n([\s\S]*?)```/.exec(guide);
  expect(example, "docs/configuration.md has a ```jsonc block marked id=config-example").not.toBeNull();
  const { parse } = await import("jsonc-parser");
  const parsed = AgentwireConfigFile.safeParse(parse(example![1]!));
  expect(parsed.success ? "ok" : parsed.error.message).toBe("ok");
});
