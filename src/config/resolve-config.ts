/**
 * The effective configuration: defaults < user file < parent files
 * (farthest first) < nearest file < `--config FILE` < environment variables
 * < command-line flags. See config-layers.ts for how layers merge, and
 * config-discovery.ts / config-trust.ts for which files are read and what an
 * untrusted one may set.
 */
import { resolve as resolvePath } from "node:path";
import { KEYLESS_HINT } from "../../protocol/provider-defaults.js";
import { formatIssuePath } from "../../protocol/issue-path.js";
import type { Notice } from "../../protocol/notices.js";
import { findConfigFiles, type FoundConfigFile, realpathOr } from "./config-discovery.js";
import { ConfigFileError, loadConfigFile } from "./config-file.js";
import { projectDataDirNotice } from "./project-data-dir.js";
import { environmentKeys, valueFromText } from "./config-keys.js";
import { type ConfigLayer, type MergedConfig, mergeLayers, setAt, valueAt } from "./config-layers.js";
import { ignoredNotice, trustRequiredPathsIn, untrustedNotice, withoutPaths } from "./config-trust.js";
import { parseConfigValues } from "./config-check.js";
import { defaultConfig, type ServerConfig } from "./server-config.js";
import { TrustStore, trustStorePath } from "./trust-store.js";

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

/**
 * How one configuration file was taken. user: the user file, and
 * explicit: `--config FILE`, apply whole (the user wrote or named them).
 * A project file applies whole when it needs no trust or is trusted as it
 * is; untrusted or changed (since trusted): all but `skipped`. ignored: not
 * read at all, `reason` says why.
 */
export interface ConfigFileState {
  file: string;
  kind: "user" | "project" | "explicit";
  status: "user" | "explicit" | "no trust needed" | "trusted" | "untrusted" | "changed" | "ignored";
  /** Trust-gated keys the file sets that were left out. */
  skipped: string[];
  reason?: string;
}

export interface ResolvedConfig {
  config: ServerConfig;
  merged: MergedConfig;
  /** The files read, lowest precedence first. */
  files: string[];
  /** Every file found, read or not, lowest precedence first, with how it was taken. */
  fileStates: ConfigFileState[];
  /** What was skipped, for the user (also in config.notices): on stderr at start and to clients. */
  notices: Notice[];
}

/** Where a command runs, for the file lookup. */
export interface CommandPlace {
  /** Where the configuration file lookup starts; default process.cwd(). */
  cwd?: string;
  home?: string;
  /** false: read no configuration file (only --config FILE). */
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
  const found: (FoundConfigFile | { file: string; kind: "explicit"; ignored?: undefined })[] = options.discover === false ? [] : findConfigFiles(options);
  const explicit = options.explicitFile;
  if (explicit) {
    // Named on the command line: taken whole, the user chose it (at its discovered place if it was found too).
    const at = found.findIndex((f) => realpathOr(f.file) === realpathOr(explicit));
    if (at >= 0) found[at] = { file: found[at]!.file, kind: "explicit" };
    else found.push({ file: explicit, kind: "explicit" });
  }
  const layers: ConfigLayer[] = [defaultsLayer(options.env, options.home)];
  const fileStates: ConfigFileState[] = [];
  const notices: Notice[] = [];
  // Read only when a project file needs it: most starts never touch the trust list.
  let store: TrustStore | undefined;
  const trustStore = () => (store ??= TrustStore.load(trustStorePath(options.env, options.home)));
  for (const { file, kind, ignored } of found) {
    const loaded = ignored ? { ignored } : loadConfigFile(file, { checkOwner: kind !== "explicit" });
    if (loaded.ignored !== undefined) {
      fileStates.push({ file, kind, status: "ignored", skipped: [], reason: loaded.ignored });
      notices.push(ignoredNotice(file, loaded.ignored));
      continue;
    }
    let values = loaded.values as Record<string, unknown>;
    let state: ConfigFileState = { file, kind, status: kind === "project" ? "no trust needed" : kind, skipped: [] };
    const gated = kind === "project" ? trustRequiredPathsIn(values) : [];
    if (gated.length > 0) {
      const verdict = trustStore().verdict(realpathOr(file), loaded.sha256);
      if (verdict === "trusted") {
        state = { ...state, status: "trusted" };
      } else {
        values = withoutPaths(values, gated);
        state = { ...state, status: verdict, skipped: gated };
        notices.push(untrustedNotice(file, gated, verdict));
      }
    }
    fileStates.push(state);
    layers.push({ label: file, values });
  }
  layers.push(checked(environmentLayer(options.env)));
  if (options.flags) layers.push(checked(options.flags));
  const merged = mergeLayers(layers);
  const config = toServerConfig(merged, options.env);
  const projectStore = projectDataDirNotice(options.cwd, config.server.dataDir);
  if (projectStore) notices.push(projectStore);
  config.notices = notices;
  const files = fileStates.filter((s) => s.status !== "ignored").map((s) => s.file);
  return { config, merged, files, fileStates, notices };
}

/** The defaults, shaped as a file, so every value has a source. */
function defaultsLayer(env: NodeJS.ProcessEnv, home: string | undefined): ConfigLayer {
  const { notices: _, ...values } = defaultConfig(env, home);
  return { label: "default", values };
}

/** The variables the schema's keys name (`.meta({ env })`), each read as its key's type. */
function environmentLayer(env: NodeJS.ProcessEnv): ConfigLayer {
  const values: Record<string, unknown> = {};
  const sources: Record<string, string> = {};
  for (const [name, key] of environmentKeys()) {
    const raw = env[name];
    if (!raw) continue;
    const read = valueFromText(key, [raw]);
    if ("problem" in read) throw new ConfigFileError("environment", name, read.problem);
    setAt(values, key.path, read.value);
    sources[key.path] = `env ${name}`;
  }
  return { label: "environment", values, sources };
}

/** Environment and flag values pass the same schema as a file, and an error names the variable or flag. */
function checked(layer: ConfigLayer): ConfigLayer {
  const parsed = parseConfigValues(layer.values);
  if (!parsed.success) {
    const issue = parsed.issues[0]!;
    const path = formatIssuePath(issue.path);
    const source = layer.sources?.[path] ?? path;
    throw new ConfigFileError(layer.label, source === path ? path : `${source} (${path})`, issue.message);
  }
  return layer;
}

/**
 * The merged layers parsed: every layer was checked on its own, and the
 * defaults layer is the lowest, so this fills only defaults inside maps and
 * lists (a provider's `wire`).
 */
function toServerConfig(merged: MergedConfig, env: NodeJS.ProcessEnv): ServerConfig {
  const parsed = parseConfigValues(merged.values);
  if (!parsed.success) {
    const issue = parsed.issues[0]!;
    const path = formatIssuePath(issue.path);
    throw new ConfigFileError(merged.sources.get(path) ?? "configuration", path, issue.message);
  }
  // The defaults layer always sets server.dataDir (the per-user directory), so the merge has one.
  const config: ServerConfig = { ...parsed.data, server: { ...parsed.data.server, dataDir: parsed.data.server.dataDir! }, notices: [] };
  // apiKeyEnv names a variable rather than holding a value; it wins over an apiKey from a lower layer only.
  const keyEnv = config.llm.apiKeyEnv;
  const keyLayer = merged.layerOf.get("llm.apiKey") ?? -1;
  if (keyEnv !== undefined && (merged.layerOf.get("llm.apiKeyEnv") ?? -1) > keyLayer) {
    const key = env[keyEnv];
    if (!key) throw new ConfigFileError(merged.sources.get("llm.apiKeyEnv") ?? "configuration", "llm.apiKeyEnv", `names ${keyEnv}, which is not set${KEYLESS_HINT}`);
    config.llm = { ...config.llm, apiKey: key };
  }
  return config;
}
