/**
 * protocol/params-data.ts: every request's params schema as data
 * (protocol/schema-data.ts), written by `npm run gen` from the inventory, so
 * that the dispatcher checks a valid request without building the method
 * schemas (src/rpc/dispatcher.ts); gen:check fails when a params schema
 * changed and the file was not regenerated.
 */
import { requests, type RequestEntry } from "../../protocol/inventory.js";
import { schemaNode } from "../../protocol/schema-data-build.js";
import { parsedJson, TS_BANNER } from "./json-schema.js";

export const PARAMS_DATA_PATH = "protocol/params-data.ts";

export function emitParamsData(): string {
  const nodes = Object.fromEntries(Object.entries(requests as Record<string, RequestEntry>).map(([method, entry]) => [method, schemaNode(entry.params)]));
  return (
    `${TS_BANNER}\n` +
    "/**\n" +
    " * Written by src/codegen/params-data.ts: each request's params schema as data,\n" +
    " * which protocol/schema-data.ts parses without zod. The dispatcher loads it on\n" +
    " * the first request, and inventory.ts (the zod schemas) only for params this\n" +
    " * cannot decide: an invalid request, whose error zod words, or a field it\n" +
    " * leaves to zod.\n" +
    " */\n" +
    'import type { RequestMethod } from "./inventory.js";\n' +
    'import type { SchemaNode } from "./schema-data.js";\n\n' +
    `export const PARAMS_DATA: Readonly<Record<RequestMethod, SchemaNode>> = ${parsedJson(nodes)};\n`
  );
}
