/**
 * agentwire.json's schema as plain data for the start path, written by
 * `npm run gen` (gen:check fails when protocol/config.ts changed and these
 * were not regenerated):
 * - src/config/config-table.ts: every key (path, description, default, flag,
 *   environment variable) and the schema as a SchemaNode, which
 *   protocol/schema-data.ts parses without zod;
 * - protocol/config-defaults.ts: every key at its default (the schema's
 *   parse of `{}`), for the parts that fall back on a default.
 */
import { AgentwireConfigFile } from "../../protocol/config.js";
import { walkConfigKeys } from "../config/config-key-walk.js";
import { schemaNode } from "../../protocol/schema-data-build.js";
import { parsedJson, TS_BANNER } from "./json-schema.js";

export const CONFIG_TABLE_PATH = "src/config/config-table.ts";
export const CONFIG_DEFAULTS_PATH = "protocol/config-defaults.ts";

export function emitConfigTable(): string {
  return (
    `${TS_BANNER}\n` +
    "/**\n" +
    " * Written by src/codegen/config-table.ts: agentwire.json's keys (config-keys.ts\n" +
    " * serves them) and its schema as data (protocol/schema-data.ts parses with it),\n" +
    " * so that listing the keys and parsing a valid configuration build no zod schema.\n" +
    " */\n" +
    'import type { ConfigKey } from "./config-key.js";\n' +
    'import type { SchemaNode } from "../../protocol/schema-data.js";\n\n' +
    `export const CONFIG_KEYS: readonly ConfigKey[] = ${parsedJson(walkConfigKeys(AgentwireConfigFile))};\n\n` +
    `export const CONFIG_NODE: SchemaNode = ${parsedJson(schemaNode(AgentwireConfigFile))};\n`
  );
}

export function emitConfigDefaults(): string {
  return (
    `${TS_BANNER}\n` +
    "/**\n" +
    " * Written by src/codegen/config-table.ts: every key of agentwire.json at its\n" +
    " * default, read off the schema (its parse of `{}`), for a part built without a\n" +
    " * configuration (a test, a bench, an embedder) to fall back on the same value the\n" +
    " * server would start with. Plain data: reading it builds no zod schema. Frozen:\n" +
    " * shared, never changed.\n" +
    " */\n" +
    'import type { ParsedConfigFile } from "./config.js";\n\n' +
    `export const CONFIG_DEFAULTS: ParsedConfigFile = deepFreeze(${parsedJson(AgentwireConfigFile.parse({}))});\n\n` +
    "function deepFreeze<T>(value: T): T {\n" +
    '  if (typeof value === "object" && value !== null) {\n' +
    "    for (const inner of Object.values(value)) deepFreeze(inner);\n" +
    "    Object.freeze(value);\n" +
    "  }\n" +
    "  return value;\n" +
    "}\n"
  );
}
