/**
 * agentwire.json's schema as data (src/config/config-table.ts) parsed without
 * zod (protocol/schema-data.ts) must never disagree with zod's parse of
 * the real schema: a value it accepts, zod accepts with the same output (keys,
 * order, defaults); a value it refuses, zod refuses. Checked over realistic
 * configurations, each key set to values on both sides of its bounds, and
 * random mutations of them. And the gate (src/config/config-check.ts): a
 * configuration that needs zod before its schema is loaded throws
 * ConfigSchemaNeeded; a valid one does not need it.
 */
import { describe, expect, it, vi } from "vitest";
import { CONFIG_DEFAULTS } from "../../protocol/config-defaults.js";
import { AgentwireConfigFile } from "../../protocol/config.js";
import { configKeys } from "../../src/config/config-keys.js";
import { CONFIG_NODE } from "../../src/config/config-table.js";
import { defaultConfig } from "../../src/config/server-config.js";
import { fastParse, INVALID, UNKNOWN } from "../../protocol/schema-data.js";
import { agree as agreeWith, mutator, newTally, sameOutput } from "../harness/schema-agreement.js";

const tally = newTally();
const agree = (values: unknown, label: string) => agreeWith(CONFIG_NODE, AgentwireConfigFile, values, label, tally);

function setAt(target: Record<string, unknown>, path: string, value: unknown): Record<string, unknown> {
  const names = path.split(".");
  let at = target;
  for (const name of names.slice(0, -1)) {
    if (typeof at[name] !== "object" || at[name] === null || Array.isArray(at[name])) at[name] = {};
    at = at[name] as Record<string, unknown>;
  }
  at[names.at(-1)!] = value;
  return target;
}

/** Configurations as users write them: every kind of section the schema has, filled. */
const REALISTIC: Record<string, unknown>[] = [
  {},
  { server: { port: 0, dataDir: "/tmp/x" } },
  { model: "fake-model", llm: { baseUrl: "http://127.0.0.1:11434/v1", apiKeyEnv: "OLLAMA_KEY" } },
  { llm: { baseUrl: "  http://example.com/v1\t" } },
  {
    providers: {
      local: { baseUrl: "http://127.0.0.1:8080/v1", wire: "responses", headers: { "X-A": "b" }, models: { m1: { tools: false, reasoning: ["low", "high"], pricing: { input: 1, output: 2 } } } },
      other: { baseUrl: "http://127.0.0.1:8081/v1", models: { m2: { reasoning: true } } },
    },
    defaultProvider: "local",
  },
  { mcpServers: { files: { command: "node", args: ["server.js"], env: { A: "1" } }, web: { url: "http://127.0.0.1:3000/mcp", headers: { Authorization: "Bearer x" } } } },
  { runtimes: { codex: { kind: "codex" } } },
  {
    tools: {
      timeoutMs: 5000,
      envAllow: ["PATH", "LANG_*"],
      shell: { command: ["zsh", "-c"] },
      files: {},
      custom: [{ name: "deploy", description: "Deploy", command: "make deploy" }],
      web: { allowPrivateNetwork: true, fetch: { maxBytes: 1000 }, search: { url: "http://127.0.0.1:9/search", apiKey: "k" } },
    },
  },
  { conversations: { settings: { approval: "auto", temperature: 0.5, toolPolicy: { shell: "ask" } }, systemPrompt: "Work in {{workspace}}." } },
  { modes: { review: { name: "Review", tools: "read-only", prompt: "Review." } } },
  { history: {} },
  { limits: { maxBatch: 10, maxAgentDepth: 0, eventLogSize: 1 } },
  { server: { store: "postgres://u@127.0.0.1:5432/test", redis: "redis://127.0.0.1:6379", allowOrigins: ["http://localhost:5173"], logLevel: "debug", logFormat: "json" } },
];

/** Values on both sides of what a key of each kind takes. */
function probes(kind: ReturnType<typeof configKeys>[number]["value"]): unknown[] {
  const common = [null, true, "text", 3, 2.5, -1, [], {}, ["x"], "", Number.MAX_SAFE_INTEGER + 2];
  switch (kind.kind) {
    case "integer":
      return [...common, kind.min, kind.max, kind.min !== undefined ? kind.min - 1 : undefined, kind.max !== undefined ? kind.max + 1 : undefined, 0, 100_000].filter((v) => v !== undefined);
    case "enum":
      return [...common, ...kind.options, "bogus"];
    case "list":
      return [...common, [""], ["A=B"], ["PATH", "X_*"], ["http://a", "http://b"], ["a", 1]];
    default:
      return [...common, " http://x ", "postgres://a@b/c", "redis://x", "lowdb", "a".repeat(300), { a: 1 }, { a: { baseUrl: "http://x" } }];
  }
}

describe("the schema as data agrees with zod", () => {
  it("on every default: CONFIG_DEFAULTS is zod's parse of {}, and the defaults layer (every default written out) parses without zod", () => {
    expect(sameOutput(CONFIG_DEFAULTS, AgentwireConfigFile.parse({}))).toBe(true);
    const { notices: _, ...layer } = defaultConfig({}, "/home/u");
    const fast = fastParse(CONFIG_NODE, layer);
    expect(fast).not.toBe(UNKNOWN);
    expect(fast).not.toBe(INVALID);
    agree(layer, "defaults layer");
  });

  it("on realistic configurations, alone and over the defaults layer", () => {
    const { notices: _, ...layer } = defaultConfig({}, "/home/u");
    for (const config of REALISTIC) {
      agree(config, "realistic");
      agree(structuredClone({ ...layer, ...config }), "realistic over defaults");
    }
  });

  it("on each key set to values on both sides of its bounds, alone and beside realistic ones", () => {
    Object.assign(tally, { accepted: 0, refused: 0, unknown: 0 });
    for (const key of configKeys()) {
      for (const value of probes(key.value)) {
        agree(setAt({}, key.path, structuredClone(value)), key.path);
        agree(setAt(structuredClone(REALISTIC[4]!), key.path, structuredClone(value)), `${key.path} with providers`);
      }
    }
    // Not vacuous: probes are decided without zod both ways, and few are left to zod (~200 / ~2200 / ~40 when written).
    expect(tally.accepted).toBeGreaterThan(150);
    expect(tally.refused).toBeGreaterThan(1500);
    expect(tally.unknown).toBeLessThan(tally.accepted / 3);
  });

  it("on random mutations of realistic configurations (a fixed seed)", () => {
    const { pick, mutate } = mutator(20261127);
    Object.assign(tally, { accepted: 0, refused: 0, unknown: 0 });
    for (let i = 0; i < 3000; i++) agree(mutate(pick(REALISTIC)), "mutation");
    // ~540 accepted, ~2200 refused, ~270 left to zod when written.
    expect(tally.accepted).toBeGreaterThan(300);
    expect(tally.refused).toBeGreaterThan(1000);
  });
});

describe("the gate", () => {
  it("parses a valid configuration without zod's schema, and asks for the schema (ConfigSchemaNeeded) where it needs zod", async () => {
    // A module instance of its own: this worker's setup loaded the schema into the shared one.
    vi.resetModules();
    const check = await import("../../src/config/config-check.js");
    expect(check.configSchemaLoaded()).toBe(false);
    const valid = check.parseConfigValues({ server: { port: 0 } });
    expect(valid).toMatchObject({ success: true, data: { server: { port: 0, host: "127.0.0.1" } } });
    expect(check.configSchemaLoaded()).toBe(false);
    expect(() => check.parseConfigValues({ server: { port: -1 } })).toThrow(check.ConfigSchemaNeeded);
    // A named rule (systemPrompt's placeholders) is data: a valid template needs no schema, an unknown placeholder is worded by zod.
    expect(check.parseConfigValues({ conversations: { systemPrompt: "{{workspace}}" } })).toMatchObject({ success: true });
    expect(() => check.parseConfigValues({ conversations: { systemPrompt: "{{nope}}" } })).toThrow(check.ConfigSchemaNeeded);
    expect(check.configSchemaLoaded()).toBe(false);
    expect(() => check.listElementProblem("tools.envAllow", "A=B")).toThrow(check.ConfigSchemaNeeded);
    await check.loadConfigSchema();
    expect(check.parseConfigValues({ server: { port: -1 } })).toMatchObject({ success: false, issues: [{ path: ["server", "port"] }] });
    expect(check.parseConfigValues({ conversations: { systemPrompt: "{{nope}}" } })).toMatchObject({
      success: false,
      issues: [{ path: ["conversations", "systemPrompt"], message: expect.stringContaining("unknown placeholder {{nope}}") }],
    });
    expect(check.listElementProblem("tools.envAllow", "A=B")).toBe("takes environment variable names or NAME* prefixes");
    expect(check.listElementProblem("tools.envAllow", "PATH")).toBeUndefined();
    vi.resetModules();
  });

  it("parses a part (a provider's definition) as data, and words an invalid one with zod's schema once it is loaded", async () => {
    vi.resetModules();
    const check = await import("../../src/config/config-check.js");
    expect(check.parseConfigPart("providers.*", { baseUrl: "http://127.0.0.1:1/v1" })).toMatchObject({ baseUrl: "http://127.0.0.1:1/v1", wire: "chat" });
    expect(check.parseConfigPart("providers.*.models.*", {})).toMatchObject({ tools: true });
    expect(check.partParsesWithoutSchema("providers", { bad: { baseUrl: "not a url" } })).toBe(false);
    expect(() => check.parseConfigPart("providers.*", { baseUrl: "not a url" })).toThrow(check.ConfigSchemaNeeded);
    expect(() => check.safeParseConfigPart("mcpServers.*", { url: "not a url" })).toThrow(check.ConfigSchemaNeeded);
    await check.loadConfigSchema();
    expect(() => check.parseConfigPart("providers.*", { baseUrl: "not a url" })).toThrow(/baseUrl/);
    expect(check.safeParseConfigPart("mcpServers.*", { url: "not a url" })).toMatchObject({ success: false, issues: [{ path: expect.arrayContaining(["url"]) }] });
    vi.resetModules();
  });

  it("a server started with a provider the data refuses loads the schema first: zod's error, not ConfigSchemaNeeded", async () => {
    vi.resetModules();
    const { startServer } = await import("../../src/server.js");
    const check = await import("../../src/config/config-check.js");
    expect(check.configSchemaLoaded()).toBe(false);
    const config = { ...defaultConfig({}, "/home/u"), providers: { bad: { baseUrl: "not a url" } } };
    await expect(startServer(config as never)).rejects.toThrow(/baseUrl/);
    expect(check.configSchemaLoaded()).toBe(true);
    vi.resetModules();
  });
});
