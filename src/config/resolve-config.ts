/**
 * The effective configuration: defaults < user file < parent files
 * (farthest first) < nearest file < `--config FILE` < environment variables
 * < command-line flags. See config-layers.ts for how layers merge.
 */
import { resolve as resolvePath } from "node:path";
import { AgentwireConfigFile } from "../../protocol/config.js";
import { formatIssuePath } from "../rpc/issue-path.js";
import { isToolEnvEntry, splitToolEnvList } from "../tools/tool-environment.js";
import { findConfigFiles } from "./config-discovery.js";
import { CONFIG_FIELDS } from "./config-fields.js";
import { ConfigFileError, readConfigFile } from "./config-file.js";
import { type ConfigLayer, type MergedConfig, mergeLayers, setAt, valueAt } from "./config-layers.js";
import { defaultConfig, type ServerConfig } from "./server-config.js";

export interface ResolveOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  home?: string;
  /** Values from command-line flags, shaped as agentwire.json, with the flag behind each path. */
  flags?: ConfigLayer;
  /** `--config FILE`: read after the discovered files, before the environment. */
  explicitFile?: string;
  /** Skip file discovery (tests, embedded servers that want only what they are given). */
  discover?: boolean;
}

export interface ResolvedConfig {
  config: ServerConfig;
  merged: MergedConfig;
  /** The files read, lowest precedence first. */
  files: string[];
}

/** Environment variables that set configuration, and where each goes. */
export const CONFIG_ENV_VARS = {
  AGENTWIRE_MODEL: "model",
  AGENTWIRE_TOKEN: "server.token",
  OPENAI_BASE_URL: "llm.baseUrl",
  OPENAI_API_KEY: "llm.apiKey",
  AGENTWIRE_TOOL_ENV: "tools.envAllow",
} as const;

/** Where a command runs, for the file lookup (CliEnvironment in cli-options.ts). */
export interface CommandPlace {
  cwd?: string;
  home?: string;
  discover?: boolean;
}

/** The layers under a command's flags: `--config FILE` is taken relative to the working directory. */
export function resolveCommandConfig(flags: ConfigLayer, env: NodeJS.ProcessEnv, place: CommandPlace, configFlag?: string): ResolvedConfig {
  const cwd = place.cwd ?? process.cwd();
  return resolveConfig({
    cwd,
    env,
    home: place.home,
    discover: place.discover,
    flags,
    explicitFile: configFlag ? resolvePath(cwd, configFlag) : undefined,
  });
}

export function resolveConfig(options: ResolveOptions): ResolvedConfig {
  const files = options.discover === false ? [] : findConfigFiles(options);
  if (options.explicitFile && !files.includes(options.explicitFile)) files.push(options.explicitFile);
  const layers: ConfigLayer[] = [defaultsLayer()];
  for (const file of files) layers.push({ label: file, values: readConfigFile(file) as Record<string, unknown> });
  layers.push(checked(environmentLayer(options.env)));
  if (options.flags) layers.push(checked(options.flags));
  const merged = mergeLayers(layers);
  return { config: toServerConfig(merged, options.env), merged, files };
}

/** The defaults, shaped as a file, so every value has a source. */
function defaultsLayer(): ConfigLayer {
  const defaults = defaultConfig();
  const values: Record<string, unknown> = {};
  for (const [path, field] of CONFIG_FIELDS) {
    const value = defaults[field];
    if (value !== undefined) setAt(values, path, value);
  }
  return { label: "default", values };
}

function environmentLayer(env: NodeJS.ProcessEnv): ConfigLayer {
  const values: Record<string, unknown> = {};
  const sources: Record<string, string> = {};
  for (const [name, path] of Object.entries(CONFIG_ENV_VARS)) {
    const raw = env[name];
    if (!raw) continue;
    let value: unknown = raw;
    if (name === "AGENTWIRE_TOOL_ENV") {
      const entries = splitToolEnvList(raw);
      const bad = entries.find((e) => !isToolEnvEntry(e));
      if (bad !== undefined) throw new ConfigFileError("environment", name, `takes variable names or NAME* prefixes, got "${bad}"`);
      value = [...new Set(entries)];
    }
    setAt(values, path, value);
    sources[path] = `env ${name}`;
  }
  return { label: "environment", values, sources };
}

/** Environment and flag values pass the same schema as a file, and an error names the variable or flag. */
function checked(layer: ConfigLayer): ConfigLayer {
  const parsed = AgentwireConfigFile.safeParse(layer.values);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const path = formatIssuePath(issue.path);
    const source = layer.sources?.[path] ?? path;
    throw new ConfigFileError(layer.label, source === path ? path : `${source} (${path})`, issue.message);
  }
  return layer;
}

function toServerConfig(merged: MergedConfig, env: NodeJS.ProcessEnv): ServerConfig {
  const config = defaultConfig();
  const target = config as unknown as Record<string, unknown>;
  for (const [path, field] of CONFIG_FIELDS) {
    const value = valueAt(merged.values, path);
    if (value !== undefined) target[field] = value;
  }
  // apiKeyEnv names a variable rather than holding a value; it wins over an apiKey from a lower layer only.
  const keyEnv = valueAt(merged.values, "llm.apiKeyEnv");
  const keyLayer = merged.layerOf.get("llm.apiKey") ?? -1;
  if (typeof keyEnv === "string" && (merged.layerOf.get("llm.apiKeyEnv") ?? -1) > keyLayer) {
    const key = env[keyEnv];
    if (!key) throw new ConfigFileError(merged.sources.get("llm.apiKeyEnv") ?? "configuration", "llm.apiKeyEnv", `names ${keyEnv}, which is not set`);
    config.openaiApiKey = key;
  }
  return config;
}
