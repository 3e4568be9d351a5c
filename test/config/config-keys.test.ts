/**
 * The key list read off the config schema (src/config/config-keys.ts): a key
 * declared once in protocol/config*.ts — type, default, description, flag,
 * environment variable — is what the flags, the environment layer,
 * `agentwire config`, `--help` and the reference page all see.
 */
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { AgentwireConfigFile, LimitsSection } from "../../protocol/config.js";
import { firstSentence } from "../../src/cli-help.js";
import { configGroups } from "../../src/codegen/reference-config.js";
import { walkConfigKeys } from "../../src/config/config-key-walk.js";
import { configKeys, environmentKeys, flaggedKeys, valueFromText } from "../../src/config/config-keys.js";

describe("a key added to the schema", () => {
  // One entry, as a new key would be written in protocol/config.ts.
  const withWidgets = AgentwireConfigFile.extend({
    limits: LimitsSection.extend({
      maxWidgets: z.number().int().min(1).default(7).describe("Widgets at most.").meta({ flag: "--max-widgets N", env: "AGENTWIRE_MAX_WIDGETS" }),
    }).prefault({}),
  });

  it("is listed with its path, default, flag and variable, and parsing {} gives its default", () => {
    const keys = walkConfigKeys(withWidgets);
    expect(keys.find((k) => k.path === "limits.maxWidgets")).toMatchObject({
      default: 7,
      flag: "--max-widgets N",
      env: "AGENTWIRE_MAX_WIDGETS",
      description: "Widgets at most.",
      section: false,
      value: { kind: "integer", min: 1 },
    });
    expect(flaggedKeys(keys).get("--max-widgets")?.path).toBe("limits.maxWidgets");
    expect(environmentKeys(keys).get("AGENTWIRE_MAX_WIDGETS")?.path).toBe("limits.maxWidgets");
    expect(withWidgets.parse({}).limits.maxWidgets).toBe(7);
  });

  it("gets a reference row with the same facts", () => {
    const schema = z.toJSONSchema(withWidgets, { target: "draft-7", io: "input" }) as Record<string, unknown>;
    const row = configGroups(schema)
      .flatMap((g) => g.rows)
      .find((r) => r.path === "limits.maxWidgets");
    expect(row).toMatchObject({ default: "`7`", flag: "--max-widgets N", env: "AGENTWIRE_MAX_WIDGETS", description: "Widgets at most." });
  });
});

describe("the real schema", () => {
  it("walks into sections and stops at keys that hold values", () => {
    const keys = new Map(configKeys().map((k) => [k.path, k]));
    for (const section of ["server", "limits", "llm", "tools", "tools.files", "tools.web", "conversations"]) expect(keys.get(section)?.section, section).toBe(true);
    for (const value of ["providers", "mcpServers", "conversations.settings", "tools.web.fetch", "tools.custom"]) expect(keys.get(value)?.section, value).toBe(false);
    expect(keys.get("server.port")).toMatchObject({ default: 8765, flag: "--port PORT", value: { kind: "integer", min: 0, max: 65535 } });
    expect(keys.get("server.logLevel")?.value).toEqual({ kind: "enum", options: ["debug", "info", "warn", "error", "silent"] });
    expect(keys.get("tools.envAllow")?.value.kind).toBe("list");
    expect(keys.get("model")).not.toHaveProperty("default");
  });

  it("reads a flag's or variable's text as the key's type", () => {
    const keys = flaggedKeys();
    const port = keys.get("--port")!;
    expect(valueFromText(port, ["8080"])).toEqual({ value: 8080 });
    expect(valueFromText(port, ["-1"])).toEqual({ problem: 'must be an integer ≥ 0, got "-1"' });
    expect(valueFromText(port, ["1.5"])).toEqual({ problem: 'must be an integer ≥ 0, got "1.5"' });
    expect(valueFromText(port, ["70000"])).toEqual({ problem: "must be at most 65535, got 70000" });
    expect(valueFromText(keys.get("--log-format")!, ["xml"])).toEqual({ problem: 'must be text or json, got "xml"' });
    // A list: repeated flags and commas, blanks dropped, each element once, each checked by the element's schema.
    const env = keys.get("--tool-env")!;
    expect(valueFromText(env, ["A, B_*", "A,,C"])).toEqual({ value: ["A", "B_*", "C"] });
    expect(valueFromText(env, ["A=B"])).toEqual({ problem: 'takes environment variable names or NAME* prefixes, got "A=B"' });
    expect(valueFromText(keys.get("--store")!, ["postgres://db/x"])).toEqual({ value: "postgres://db/x" });
  });
});

describe("--help's line for a key", () => {
  it.each([
    ["Port to listen on; 0 picks a free one.", "Port to listen on; 0 picks a free one"],
    ["OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 for Ollama.", "OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 for Ollama"],
    ["Cluster mode: a Redis URL (redis://HOST:6379, e.g. Valkey. Or Redis) shared. Redis carries events.", "Cluster mode: a Redis URL (redis://HOST:6379, e.g. Valkey. Or Redis) shared"],
  ])("is the description's first sentence: %s", (text, first) => {
    expect(firstSentence(text)).toBe(first);
  });
});
