/**
 * Merging configuration layers with provenance. Objects merge key by key;
 * any other value — a string, a number, an array — set by a later layer
 * replaces the earlier one whole (so `allowOrigins` or `tools.custom` in a
 * nearer file replaces, never appends to, a farther file's list). An MCP
 * server definition is replaced whole too: half of a stdio definition
 * merged into half of an HTTP one would be neither.
 */

/** One layer: its values (shaped as agentwire.json) and where each came from. */
export interface ConfigLayer {
  /** e.g. "default", "/home/me/project/agentwire.json", "environment", "flags". */
  label: string;
  values: Record<string, unknown>;
  /** A more precise source for some paths, e.g. {"llm.apiKey": "env OPENAI_API_KEY"}. */
  sources?: Record<string, string>;
}

export interface MergedConfig {
  values: Record<string, unknown>;
  /** Dotted path of each value that was set (leaves, arrays, whole MCP server definitions) → where it came from. */
  sources: Map<string, string>;
  /** Dotted path → index of the layer that set it (to compare precedence). */
  layerOf: Map<string, number>;
  /**
   * Dotted path → the value set there. Read this rather than splitting a path
   * on dots: a key may hold a dot itself (a model named `gpt-4.1`).
   */
  leaves: Map<string, unknown>;
}

/** Paths whose value is replaced whole rather than merged (`*` matches one key). */
const REPLACED_WHOLE = [/^mcpServers\.[^.]+$/];

export function mergeLayers(layers: readonly ConfigLayer[]): MergedConfig {
  const values: Record<string, unknown> = {};
  const sources = new Map<string, string>();
  const layerOf = new Map<string, number>();
  const leaves = new Map<string, unknown>();
  layers.forEach((layer, index) => mergeInto(values, layer.values, "", { ...layer, index }, { sources, layerOf, leaves }));
  return { values, sources, layerOf, leaves };
}

function mergeInto(
  target: Record<string, unknown>,
  source: Record<string, unknown>,
  prefix: string,
  layer: ConfigLayer & { index: number },
  maps: Pick<MergedConfig, "sources" | "layerOf" | "leaves">,
): void {
  const { sources, layerOf, leaves } = maps;
  for (const [key, value] of Object.entries(source)) {
    if (value === undefined) continue;
    const path = prefix ? `${prefix}.${key}` : key;
    if (isPlainObject(value) && !REPLACED_WHOLE.some((re) => re.test(path))) {
      const existing = target[key];
      const into = isPlainObject(existing) ? existing : {};
      target[key] = into;
      mergeInto(into, value, path, layer, maps);
      continue;
    }
    for (const known of [...sources.keys()]) {
      if (known.startsWith(`${path}.`)) {
        sources.delete(known);
        layerOf.delete(known);
        leaves.delete(known);
      }
    }
    target[key] = value;
    sources.set(path, layer.sources?.[path] ?? layer.label);
    layerOf.set(path, layer.index);
    leaves.set(path, value);
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The value at a dotted path, or undefined. */
export function valueAt(values: Record<string, unknown>, path: string): unknown {
  let current: unknown = values;
  for (const key of path.split(".")) {
    if (!isPlainObject(current)) return undefined;
    current = current[key];
  }
  return current;
}

/** Sets a value at a dotted path, creating objects on the way. */
export function setAt(values: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split(".");
  let current = values;
  for (const key of keys.slice(0, -1)) {
    if (!isPlainObject(current[key])) current[key] = {};
    current = current[key] as Record<string, unknown>;
  }
  current[keys.at(-1)!] = value;
}
