/**
 * A JSON Schema object as rows of fields, for the reference pages: the
 * protocol's params, results and notifications, and agentwire.json. Walks
 * the JSON Schema that codegen already derives from zod (never zod's
 * internals), so whatever a schema file adds shows up here.
 *
 * Nested objects are flattened into dotted paths (`settings.maxIterations`),
 * array items into `[]` (`records[].role`), map values into a placeholder
 * named for the map (`providers.<provider>.baseUrl`). A subschema equal to a
 * named type is linked instead of expanded, so a Conversation is described
 * once, not in every result that carries one.
 */
import type { JsonSchema } from "./json-schema.js";
import { cell, code } from "./markdown.js";

export interface FieldRow {
  /** Path from the payload: `settings.toolPolicy`, `records[].role`, `mcpServers.<server>.url`. */
  path: string;
  schema: JsonSchema;
  /** Whether its object requires it (when that object is present at all). */
  required: boolean;
  /** The field's own description, as written in the schema; "" when it has none. */
  description: string;
  /** The union branches it belongs to, e.g. "stdio" for an MCP server run as a process. */
  variant?: string;
}

/** A named type that payloads link to: its schema (compared without its top-level description) and its anchor. */
export interface NamedType {
  name: string;
  anchor: string;
}

export type NamedTypes = Map<string, NamedType>;

/** The key a schema is recognised by in NamedTypes: its JSON without the top-level description, which a use site may override. */
export function namedKey(schema: JsonSchema): string {
  const { description: _ignored, ...rest } = schema;
  return JSON.stringify(rest);
}

const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const asSchema = (value: unknown): JsonSchema | undefined =>
  value !== null && typeof value === "object" && !Array.isArray(value) ? (value as JsonSchema) : undefined;
const properties = (schema: JsonSchema) => asSchema(schema.properties) as Record<string, JsonSchema> | undefined;
const branches = (schema: JsonSchema) => ((schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined) ?? [];
/** A map's values (zod's z.record): additionalProperties with a schema of its own. */
const mapValues = (schema: JsonSchema) => (properties(schema) === undefined ? asSchema(schema.additionalProperties) : undefined);

/** The fields of an object schema, every level down; [] for a schema that is not an object with properties. */
export function fieldRows(schema: JsonSchema, named: NamedTypes = new Map()): FieldRow[] {
  const rows: FieldRow[] = [];
  walkObject(schema, "", undefined, named, rows, 0);
  return mergeVariants(rows);
}

function walkObject(schema: JsonSchema, prefix: string, variant: string | undefined, named: NamedTypes, rows: FieldRow[], depth: number) {
  const props = properties(schema);
  if (props === undefined) return;
  if (depth > 12) throw new Error(`codegen: schema nested deeper than 12 levels at ${prefix}`);
  const required = new Set((schema.required ?? []) as string[]);
  for (const [name, field] of Object.entries(props)) {
    const path = `${prefix}${name}`;
    rows.push({ path, schema: field, required: required.has(name), description: descriptionOf(field), ...(variant ? { variant } : {}) });
    walkInto(field, path, name, variant, named, rows, depth + 1);
  }
}

/** The fields inside one field: its object's, its items', its map values', or each object branch of its union. */
function walkInto(schema: JsonSchema, path: string, key: string, variant: string | undefined, named: NamedTypes, rows: FieldRow[], depth: number) {
  if (named.has(namedKey(schema))) return;
  if (properties(schema)) return walkObject(schema, `${path}.`, variant, named, rows, depth);
  const items = asSchema(schema.items);
  if (items) return walkInto(items, `${path}[]`, key, variant, named, rows, depth);
  const values = mapValues(schema);
  if (values) return walkInto(values, `${path}.<${placeholder(key)}>`, key, variant, named, rows, depth);
  const objects = branches(schema).filter((b) => properties(b) && !named.has(namedKey(b)));
  // One object branch (an object or null) needs no label; several are told apart by their discriminator.
  objects.forEach((branch, i) => {
    const label = objects.length === 1 ? undefined : (variantLabel(branch) ?? `variant ${i + 1}`);
    const inner = label === undefined ? variant : variant ? `${variant}, ${label}` : label;
    walkObject(branch, `${path}.`, inner, named, rows, depth);
  });
}

/** `providers` → `provider`, `mcpServers` → `server`, `toolPolicy` → `policy`: the name of one key of the map. */
function placeholder(key: string): string {
  const last = key.match(/[A-Z]?[a-z0-9]+$/)?.[0] ?? key;
  return last.toLowerCase().replace(/s$/, "") || "key";
}

/** A union branch is named by its `type` discriminator when it has one: "stdio", "http / streamable-http", "message". */
function variantLabel(branch: JsonSchema): string | undefined {
  const discriminator = properties(branch)?.type;
  if (discriminator === undefined) return undefined;
  if ("const" in discriminator) return String(discriminator.const);
  if (Array.isArray(discriminator.enum)) return discriminator.enum.map(String).join(" / ");
  return undefined;
}

/** A field that two branches share unchanged (an MCP server's timeoutMs) is one row naming both. */
function mergeVariants(rows: FieldRow[]): FieldRow[] {
  const out: FieldRow[] = [];
  const byPath = new Map<string, FieldRow>();
  for (const row of rows) {
    const earlier = byPath.get(row.path);
    if (earlier && row.variant && earlier.variant && JSON.stringify(earlier.schema) === JSON.stringify(row.schema) && earlier.required === row.required) {
      earlier.variant = `${earlier.variant}, ${row.variant}`;
      continue;
    }
    byPath.set(row.path, row);
    out.push(row);
  }
  return out;
}

function descriptionOf(schema: JsonSchema): string {
  return typeof schema.description === "string" ? schema.description : "";
}

/**
 * A schema's type as markdown for a table cell: `string`, `integer ≥ 1`,
 * `"ask" | "auto"`, `string[]`, `map of boolean`, a link to a named type.
 */
export function typeText(schema: JsonSchema, named: NamedTypes = new Map()): string {
  const link = named.get(namedKey(schema));
  if (link) return `[${link.name}](#${link.anchor})`;
  if ("const" in schema) return code(JSON.stringify(schema.const));
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => code(JSON.stringify(v))).join(" \\| ");
  const union = branches(schema);
  if (union.length > 0) return union.map((b) => branchText(b, named)).join(" \\| ");
  const type = schema.type;
  if (Array.isArray(type)) return type.map((t) => typeText({ ...schema, type: t }, named)).join(" \\| ");
  switch (type) {
    case "string":
      return stringText(schema);
    case "integer":
    case "number":
      return `${type}${bounds(schema)}`;
    case "array": {
      const items = asSchema(schema.items);
      if (!items) return "array";
      const inner = typeText(items, named);
      return inner.includes(" \\| ") ? `(${inner})[]` : `${inner}[]`;
    }
    case "object": {
      const values = mapValues(schema);
      if (values && Object.keys(values).length > 0) return `map of ${typeText(values, named)}`;
      return "object";
    }
    case "boolean":
    case "null":
      return type;
    default:
      return "any";
  }
}

/** A union branch: an object is told apart by its discriminator, `object (stdio)`. */
function branchText(branch: JsonSchema, named: NamedTypes): string {
  const label = properties(branch) && !named.has(namedKey(branch)) ? variantLabel(branch) : undefined;
  return label === undefined ? typeText(branch, named) : `object (${label})`;
}

function stringText(schema: JsonSchema): string {
  const format = schema.format === "uri" ? "URL" : typeof schema.format === "string" ? schema.format : undefined;
  return format ? `string (${format})` : "string";
}

/** `integer ≥ 1`, `integer 0–65535`; zod's safe-integer limits say nothing and are left out. */
function bounds(schema: JsonSchema): string {
  const min = typeof schema.minimum === "number" && schema.minimum > -MAX_SAFE ? schema.minimum : undefined;
  const max = typeof schema.maximum === "number" && schema.maximum < MAX_SAFE ? schema.maximum : undefined;
  if (min !== undefined && max !== undefined) return ` ${min}–${max}`;
  if (min !== undefined) return ` ≥ ${min}`;
  if (max !== undefined) return ` ≤ ${max}`;
  return "";
}

/** A row's description cell: the union branch it belongs to first, then its own text. */
export function descriptionCell(row: FieldRow): string {
  const variant = row.variant ? `*(${cell(row.variant)})* ` : "";
  return `${variant}${cell(row.description)}`;
}
