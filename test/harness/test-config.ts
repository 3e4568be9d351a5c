/**
 * A server configuration for a test: every default (as `agentwire serve`
 * would start with nothing set), then the test's overrides, section by
 * section. Not checked against the schema on purpose: a test may hand the
 * server what a file could not say (a system prompt with an unknown
 * placeholder, to see startServer refuse it).
 */
import { configKeys } from "../../src/config/config-keys.js";
import { defaultConfig, type ServerConfig } from "../../src/config/server-config.js";

/** Some keys of some sections: objects merge key by key, anything else (a list, a value) replaces; `undefined` unsets. */
export type ConfigOverrides = Overrides<ServerConfig>;
type Overrides<T> = {
  [K in keyof T]?: T[K] extends readonly unknown[] ? T[K] : T[K] extends object | undefined ? Overrides<NonNullable<T[K]>> | undefined : T[K];
};

export function testConfig(...layers: ConfigOverrides[]): ServerConfig {
  let config: Record<string, unknown> = defaultConfig() as unknown as Record<string, unknown>;
  for (const layer of layers) {
    checkKeys(layer as Record<string, unknown>, "");
    config = merged(config, layer as Record<string, unknown>);
  }
  return config as unknown as ServerConfig;
}

const keys = configKeys();
const known = new Set(["notices", ...keys.map((k) => k.path)]);
const sections = new Set(keys.filter((k) => k.section).map((k) => k.path));

/** A key the schema does not have (a flat `dataDir` where `server: { dataDir }` was meant) fails the test at once. */
function checkKeys(layer: Record<string, unknown>, prefix: string): void {
  for (const [key, value] of Object.entries(layer)) {
    const path = `${prefix}${key}`;
    if (!known.has(path)) throw new Error(`testConfig: no configuration key ${path}`);
    if (sections.has(path) && isObject(value)) checkKeys(value, `${path}.`);
  }
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

function merged(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out = { ...base };
  for (const [key, value] of Object.entries(over)) {
    if (value === undefined) delete out[key];
    else out[key] = isObject(value) && isObject(base[key]) ? merged(base[key], value) : value;
  }
  return out;
}
