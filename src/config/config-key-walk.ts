/**
 * The keys of a configuration schema, read off its zod schema: what
 * `npm run gen` writes into config-table.ts for agentwire.json (the list
 * config-keys.ts serves at run time without building the schema), and what a
 * test walks for a schema of its own.
 */
import * as z from "zod";
import { schemaNode } from "../../protocol/schema-data-build.js";
import type { ConfigKey, ConfigValueKind } from "./config-key.js";

/** Every key of `schema`, sections first then their keys, in the schema's order. */
export function walkConfigKeys(schema: z.ZodObject): ConfigKey[] {
  const out: ConfigKey[] = [];
  walk(schema, "", out);
  return out;
}

function walk(object: z.ZodObject, prefix: string, out: ConfigKey[]): void {
  for (const [name, field] of Object.entries(object.shape as Record<string, z.ZodType>)) {
    const { key, type } = describeKey(`${prefix}${name}`, field);
    out.push(key);
    if (key.section) walk(type as z.ZodObject, `${key.path}.`, out);
  }
}

function describeKey(path: string, field: z.ZodType): { key: ConfigKey; type: z.ZodType } {
  // Meta and descriptions sit on whichever wrapper they were given to: gather them inside out, the outer winning.
  const layers: z.ZodType[] = [];
  let type = field;
  let fallback: { value: unknown } | undefined;
  let prefaulted = false;
  for (;;) {
    layers.push(type);
    if (type instanceof z.ZodDefault) {
      fallback = { value: type.def.defaultValue };
      type = type.def.innerType as z.ZodType;
    } else if (type instanceof z.ZodPrefault) {
      prefaulted = true;
      type = type.def.innerType as z.ZodType;
    } else if (type instanceof z.ZodOptional || type instanceof z.ZodNullable) {
      type = type.def.innerType as z.ZodType;
    } else {
      break;
    }
  }
  const meta: Record<string, unknown> = {};
  for (const layer of layers.reverse()) Object.assign(meta, z.globalRegistry.get(layer));
  const key: ConfigKey = {
    path,
    description: typeof meta.description === "string" ? meta.description : "",
    ...(typeof meta.flag === "string" ? { flag: meta.flag as ConfigKey["flag"] } : {}),
    ...(typeof meta.env === "string" ? { env: meta.env } : {}),
    ...(typeof meta.defaultText === "string" ? { defaultText: meta.defaultText } : {}),
    ...(typeof meta.defaultNote === "string" ? { defaultNote: meta.defaultNote } : {}),
    ...(fallback ? { default: fallback.value } : {}),
    section: prefaulted && type instanceof z.ZodObject,
    value: valueKind(type),
  };
  return { key, type };
}

function valueKind(type: z.ZodType): ConfigValueKind {
  if (type instanceof z.ZodNumber && type.isInt) {
    const min = type.minValue ?? undefined;
    const max = type.maxValue ?? undefined;
    return {
      kind: "integer",
      ...(min !== undefined && min > Number.MIN_SAFE_INTEGER ? { min } : {}),
      ...(max !== undefined && max < Number.MAX_SAFE_INTEGER ? { max } : {}),
    };
  }
  if (type instanceof z.ZodString) return { kind: "string" };
  if (type instanceof z.ZodEnum) return { kind: "enum", options: type.options.map(String) };
  if (type instanceof z.ZodArray) return { kind: "list", element: schemaNode(type.element as z.ZodType) };
  return { kind: "other" };
}
