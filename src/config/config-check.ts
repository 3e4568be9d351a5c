/**
 * Every check of configuration values against agentwire.json's schema goes
 * through here. First the schema as data (config-table.ts, parsed by
 * protocol/schema-data.ts): a valid configuration that holds nothing the data
 * leaves to zod is parsed without building a zod schema, which is what a
 * start pays for otherwise (building protocol/config.ts and the schemas it
 * imports was ~45 ms of a ~200 ms start on a 2-core host). Anything else —
 * an invalid value, whose error zod words, or a key with a refinement of its
 * own (systemPrompt, mcpServers, modes...) — is parsed by the zod schema.
 *
 * That schema is loaded asynchronously (loadConfigSchema), and the checks
 * here are synchronous: a check that needs it before it is loaded throws
 * ConfigSchemaNeeded, and the command line (src/cli.ts) loads it and parses
 * again. A caller that cannot do that loads it first.
 */
import type * as z from "zod";
import type { ParsedConfigFile } from "../../protocol/config.js";
import { CONFIG_NODE } from "./config-table.js";
import { fastParse, INVALID, type SchemaNode, UNKNOWN } from "../../protocol/schema-data.js";

/** Thrown by a check that needs the zod schema before loadConfigSchema (or useConfigSchema) has given it. */
export class ConfigSchemaNeeded extends Error {
  constructor() {
    super("the configuration's schema is not loaded: await loadConfigSchema() and check again");
    this.name = "ConfigSchemaNeeded";
  }
}

/**
 * Options for zod's parse of the configuration: a process parses its
 * configuration a handful of times, so zod's generated fast path for the
 * schema (~6 ms of code generation) would never pay back.
 */
const PARSE_CONFIG = { jitless: true } as const;

let schema: z.ZodObject | undefined;

/** Loads agentwire.json's zod schema (protocol/config.ts), once; the checks below use it from then on. */
export async function loadConfigSchema(): Promise<void> {
  if (schema) return;
  const { AgentwireConfigFile } = await import("../../protocol/config.js");
  schema = AgentwireConfigFile;
}

/** True once the zod schema is loaded. */
export function configSchemaLoaded(): boolean {
  return schema !== undefined;
}

function loadedSchema(): z.ZodObject {
  if (!schema) throw new ConfigSchemaNeeded();
  return schema;
}

export type ConfigParse = { success: true; data: ParsedConfigFile } | { success: false; issues: z.core.$ZodIssue[] };

/** `values` (a file, a layer, the layers merged) parsed by agentwire.json's schema: every default applied, or zod's issues (at least one). */
export function parseConfigValues(values: unknown): ConfigParse {
  const fast = fastParse(CONFIG_NODE, values);
  if (fast !== INVALID && fast !== UNKNOWN) return { success: true, data: fast.value as ParsedConfigFile };
  const parsed = loadedSchema().safeParse(values, PARSE_CONFIG);
  return parsed.success ? { success: true, data: parsed.data as ParsedConfigFile } : { success: false, issues: parsed.error.issues };
}

/**
 * A part of a configuration parsed by its part of the schema: `path` is
 * dotted, `*` standing for any key of a map ("providers.*": one provider's
 * definition). For parts that come by hand as well as from a parsed
 * configuration (a provider's definition, a model's capabilities: tests,
 * embedders), so that parsing applies the schema's defaults. Throws zod's
 * error for an invalid part, as the part's own schema did, once the schema is
 * loaded (ConfigSchemaNeeded before; partParsesWithoutSchema says whether it
 * will be needed).
 */
export function parseConfigPart<T>(path: string, value: unknown): T {
  const fast = fastParse(dataAt(path), value);
  if (fast !== INVALID && fast !== UNKNOWN) return fast.value as T;
  return schemaAt(loadedSchema(), path).parse(value, PARSE_CONFIG) as T;
}

/** parseConfigPart without the throw: the part parsed, or zod's issues. */
export function safeParseConfigPart<T>(path: string, value: unknown): { success: true; data: T } | { success: false; issues: z.core.$ZodIssue[] } {
  const fast = fastParse(dataAt(path), value);
  if (fast !== INVALID && fast !== UNKNOWN) return { success: true, data: fast.value as T };
  const parsed = schemaAt(loadedSchema(), path).safeParse(value, PARSE_CONFIG);
  return parsed.success ? { success: true, data: parsed.data as T } : { success: false, issues: parsed.error.issues };
}

/** Whether parseConfigPart(path, value) (or a part under it) parses without the zod schema. */
export function partParsesWithoutSchema(path: string, value: unknown): boolean {
  const fast = fastParse(dataAt(path), value);
  return fast !== INVALID && fast !== UNKNOWN;
}

const partData = new Map<string, SchemaNode>();

/** The schema's data at `path`, without the default, prefault, optional and nullable around it. */
function dataAt(path: string): SchemaNode {
  let found = partData.get(path);
  if (found) return found;
  let node: SchemaNode = CONFIG_NODE;
  for (const name of path.split(".")) {
    node = unwrappedData(node);
    if (name === "*" && node.type === "record") node = node.value;
    else if (node.type === "object") node = node.properties.find((p) => p.name === name)?.node ?? { type: "opaque" };
    else throw new Error(`no configuration part at ${path}`);
  }
  partData.set(path, (found = unwrappedData(node)));
  return found;
}

function unwrappedData(node: SchemaNode): SchemaNode {
  let inner = node;
  while (inner.type === "default" || inner.type === "prefault" || inner.type === "optional" || inner.type === "nullable") inner = inner.inner;
  return inner;
}

/** The zod schema at `path` (as dataAt), without its wrappers. */
function schemaAt(root: z.ZodType, path: string): z.ZodType {
  let type = root;
  for (const name of path.split(".")) {
    type = unwrapped(type);
    type = (name === "*" ? (type as z.ZodRecord).valueType : (type as z.ZodObject).shape[name]) as z.ZodType;
  }
  return unwrapped(type);
}

/** What is wrong with one element of the list at `path` (`server.allowOrigins`), in zod's words; undefined when nothing is. */
export function listElementProblem(path: string, entry: string): string | undefined {
  const element = (schemaAt(loadedSchema(), path) as z.ZodArray).element as z.ZodType;
  const checked = element.safeParse(entry, PARSE_CONFIG);
  return checked.success ? undefined : checked.error.issues[0]!.message;
}

/** A key's type without its optional, nullable, default and prefault wrappers. */
function unwrapped(type: z.ZodType): z.ZodType {
  let inner = type;
  for (;;) {
    const def = inner._zod.def as { type: string; innerType?: z.ZodType };
    if (!["optional", "nullable", "default", "prefault"].includes(def.type) || !def.innerType) return inner;
    inner = def.innerType;
  }
}
