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
import { fastParse, INVALID, UNKNOWN } from "../../protocol/schema-data.js";

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

/** What is wrong with one element of the list at `path` (`server.allowOrigins`), in zod's words; undefined when nothing is. */
export function listElementProblem(path: string, entry: string): string | undefined {
  let type: z.ZodType = loadedSchema();
  for (const name of path.split(".")) type = (unwrapped(type) as z.ZodObject).shape[name] as z.ZodType;
  const element = (unwrapped(type) as z.ZodArray).element as z.ZodType;
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
