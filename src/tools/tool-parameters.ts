/**
 * A tool's parameters held as data until zod is needed. A built-in tool's
 * arguments are checked with its schema as data (protocol/schema-data.ts,
 * written by `npm run gen` into builtin-tool-schemas.ts beside the JSON
 * Schema offered to the model), so a process builds none of the tools'
 * zod schemas, nor loads zod, to start or to run a valid call: its zod
 * schema is imported for the arguments the data cannot decide or refuses,
 * and words their error as before.
 */
import type * as z from "zod";
import type { SchemaNode } from "../../protocol/schema-data.js";
import { BUILTIN_TOOL_ARGUMENTS, BUILTIN_TOOL_SCHEMAS } from "./builtin-tool-schemas.js";

export interface LazyParameters<A> {
  readonly lazy: true;
  /** The arguments' schema as data; undefined: every call is checked by zod (no data was written for it). */
  readonly data: SchemaNode | undefined;
  /** The JSON Schema offered to the model (toolSpec); undefined: the tool gives `inputSchema`. */
  readonly jsonSchema: Record<string, unknown> | undefined;
  /** The zod schema, imported and built on the first call (then the same object). */
  schema(): Promise<z.ZodType<A>>;
}

/** A tool's parameters: a zod schema, or the lazy form above. */
export type ToolParameters<A> = z.ZodType<A> | LazyParameters<A>;

export function isLazyParameters<A>(parameters: ToolParameters<A>): parameters is LazyParameters<A> {
  return (parameters as Partial<LazyParameters<A>>).lazy === true;
}

/** `load` once, however many callers wait for it. */
export function lazyParameters<A>(
  load: () => Promise<z.ZodType<A>>,
  data: SchemaNode | undefined,
  jsonSchema: Record<string, unknown> | undefined,
): LazyParameters<A> {
  let loading: Promise<z.ZodType<A>> | undefined;
  return {
    lazy: true,
    data,
    jsonSchema,
    schema: () => (loading ??= load()),
  };
}

/**
 * A built-in tool's parameters: the data and JSON Schema `npm run gen` wrote
 * for `name`, and `load` for its zod schema (a dynamic import of the module
 * that builds it). gen:check fails while the written ones are stale.
 */
export function builtinParameters<A>(name: string, load: () => Promise<z.ZodType<A>>): LazyParameters<A> {
  return lazyParameters(load, BUILTIN_TOOL_ARGUMENTS[name], BUILTIN_TOOL_SCHEMAS[name]);
}

/**
 * The parameters of a tool declared in JSON Schema (an MCP server's, a
 * client's): checked with zod's converter of `inputSchema`
 * (json-schema-arguments.ts), imported and built at the tool's first call.
 */
export function jsonSchemaParameters(inputSchema: Record<string, unknown>): LazyParameters<Record<string, unknown>> {
  return lazyParameters(async () => (await import("./json-schema-arguments.js")).jsonSchemaArguments(inputSchema), undefined, undefined);
}
