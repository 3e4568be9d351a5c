/**
 * JSON Schema (draft-07, as json-schema.ts produces it) → TypeScript type text
 * with JSDoc, for the generated client. The client then carries real types an
 * editor can document on hover, instead of aliases of zod-inferred types that
 * would tie it to protocol/ and zod.
 *
 * What TypeScript can say is emitted as types: optional fields (`?`), null
 * (`| null`), const and enum (literal unions), anyOf/oneOf (unions), records
 * (`Record<string, T>`), arrays. What it cannot say (string patterns and
 * formats, length and number bounds, integer-ness, defaults) goes into the
 * field's JSDoc as tags, so it is still shown on hover. A keyword not handled
 * here is refused, so a new zod construct fails `npm run gen` loudly instead
 * of being silently dropped from the client.
 */
import type { JsonSchema } from "./json-schema.js";
import { docComment } from "./jsdoc.js";

/** Keywords this translator understands; anything else is refused. */
const KNOWN = new Set([
  "type", "description", "properties", "required", "additionalProperties", "propertyNames", "items",
  "anyOf", "oneOf", "const", "enum", "default",
  "format", "pattern", "minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
  "minItems", "maxItems",
]);

/** zod writes ±Number.MAX_SAFE_INTEGER as the bounds of every `.int()`: no information for a reader. */
const SAFE_BOUND = Number.MAX_SAFE_INTEGER;

/**
 * Named shared types (Conversation, MessageRecord, …): wherever a schema
 * equals one of them apart from its own description, the type is referenced
 * by name instead of being spelled out again. A named object type that holds
 * every field of a shared object type, each with the identical schema,
 * extends it instead of repeating those fields (`ToolPendingNotification
 * extends GenerationEventBase, ToolCall`).
 */
export class NamedTypes {
  readonly #byShape = new Map<string, string>();
  /** Shared object types with named fields, largest first: the candidates for `extends`. */
  readonly #bases: Array<{ name: string; schema: JsonSchema }> = [];

  constructor(types: Record<string, JsonSchema>) {
    for (const [name, schema] of Object.entries(types)) {
      const key = shapeKey(schema);
      if (this.#byShape.has(key)) throw new Error(`codegen: shared types ${this.#byShape.get(key)} and ${name} have the same shape`);
      this.#byShape.set(key, name);
      const extensible = typeof schema.additionalProperties !== "object"; // an index signature would bind the extending type too
      if (schema.type === "object" && Object.keys(propertiesOf(schema)).length > 0 && extensible) this.#bases.push({ name, schema });
    }
    this.#bases.sort((a, b) => Object.keys(propertiesOf(b.schema)).length - Object.keys(propertiesOf(a.schema)).length);
  }

  /** The name of a shared type with this shape, for object and union schemas only (never a bare string). */
  nameOf(schema: JsonSchema): string | undefined {
    const structured = "properties" in schema || "oneOf" in schema || "anyOf" in schema;
    return structured ? this.#byShape.get(shapeKey(schema)) : undefined;
  }

  /**
   * The shared object types the object type `self` can extend: each one's
   * fields all stand in `schema` with the identical schema (description
   * included, since the field's JSDoc then comes from the base) and the same
   * optionality. Largest first; a base whose fields another chosen one
   * already covers is left out, so the bases never share a field.
   */
  basesOf(schema: JsonSchema, self: string): Array<{ name: string; fields: string[] }> {
    const properties = propertiesOf(schema);
    const required = new Set((schema.required ?? []) as string[]);
    const covered = new Set<string>();
    const chosen: Array<{ name: string; fields: string[] }> = [];
    for (const base of this.#bases) {
      if (base.name === self) continue;
      const baseProperties = propertiesOf(base.schema);
      const baseRequired = new Set((base.schema.required ?? []) as string[]);
      const keys = Object.keys(baseProperties);
      if (keys.length >= Object.keys(properties).length) continue; // as large: the same shape, or not contained
      const contained = keys.every(
        (key) =>
          key in properties &&
          !covered.has(key) &&
          canonical(properties[key]) === canonical(baseProperties[key]) &&
          required.has(key) === baseRequired.has(key),
      );
      if (!contained) continue;
      chosen.push({ name: base.name, fields: keys });
      for (const key of keys) covered.add(key);
    }
    return chosen;
  }
}

/**
 * `export interface Name { … }` for an object with fields, `export type Name =
 * …;` otherwise, under a JSDoc of `lead` paragraphs and the schema's description.
 */
export function emitNamedType(name: string, schema: JsonSchema, named: NamedTypes, lead: string[] = []): string[] {
  const doc = docComment(joinParagraphs(lead, docParagraphs(schema)), "");
  const shared = named.nameOf(schema);
  if (shared && shared !== name) return [...doc, `export type ${name} = ${shared};`];
  const properties = schema.properties as Record<string, JsonSchema> | undefined;
  if (schema.type === "object" && properties && Object.keys(properties).length > 0) {
    const bases = named.basesOf(schema, name);
    if (bases.length === 0) return [...doc, `export interface ${name} ${objectBody(schema, named, "", name)}`];
    // Only the fields the bases do not carry are written here; their JSDoc comes from the base.
    const inherited = new Set(bases.flatMap((base) => base.fields));
    const own = Object.fromEntries(Object.entries(properties).filter(([key]) => !inherited.has(key)));
    const required = ((schema.required ?? []) as string[]).filter((key) => key in own);
    const body = Object.keys(own).length > 0 ? objectBody({ ...schema, properties: own, required }, named, "", name) : "{}";
    return [...doc, `export interface ${name} extends ${bases.map((base) => base.name).join(", ")} ${body}`];
  }
  return [...doc, `export type ${name} = ${typeExpr(schema, named, "", name, true)};`];
}

/**
 * The TypeScript type of `schema`. Multi-line results (object literals) are
 * indented for a first line that starts at `indent`. `root` is true only for
 * the schema a named type is being emitted for, so it is not replaced by its
 * own name.
 */
export function typeExpr(schema: JsonSchema, named: NamedTypes, indent: string, where: string, root = false): string {
  const unknownKeys = Object.keys(schema).filter((key) => !KNOWN.has(key));
  if (unknownKeys.length > 0) {
    throw new Error(`codegen: ${where} uses ${unknownKeys.join(", ")}, which the client type emitter cannot express yet`);
  }
  const name = root ? undefined : named.nameOf(schema);
  if (name) return name;
  if ("const" in schema) return literal(schema.const, where);
  if (Array.isArray(schema.enum)) return union(schema.enum.map((value) => literal(value, where)));
  const branches = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (branches) {
    // JSON Schema would intersect a sibling `type` with the branches; zod never writes one, so refuse it.
    if ("type" in schema) throw new Error(`codegen: ${where} has both type and anyOf/oneOf`);
    return union(branches.map((branch, i) => typeExpr(branch, named, indent, `${where}|${i}`)));
  }
  if (Array.isArray(schema.type)) {
    return union((schema.type as string[]).map((type) => typeExpr({ ...schema, type }, named, indent, where, root)));
  }
  switch (schema.type) {
    case undefined:
      return "unknown"; // `{}`: any JSON value
    case "string":
    case "boolean":
    case "null":
      return schema.type;
    case "number":
    case "integer":
      return "number";
    case "array": {
      if (schema.items === undefined) return "unknown[]";
      if (Array.isArray(schema.items)) throw new Error(`codegen: ${where} is a tuple (items as a list), not supported yet`);
      const item = typeExpr(schema.items as JsonSchema, named, indent, `${where}[]`);
      return /^[\w.]+$/.test(item) ? `${item}[]` : `Array<${item}>`;
    }
    case "object":
      return objectBody(schema, named, indent, where);
    default:
      throw new Error(`codegen: ${where} has type ${String(schema.type)}, which the client type emitter does not know`);
  }
}

/** `{ field: T; … }` with each field documented, or a Record when the object has no named fields. */
function objectBody(schema: JsonSchema, named: NamedTypes, indent: string, where: string): string {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required ?? []) as string[]);
  const extra = schema.additionalProperties as JsonSchema | boolean | undefined;
  const keys = schema.propertyNames as JsonSchema | undefined;
  if (keys !== undefined && keys.type !== "string") throw new Error(`codegen: ${where} constrains propertyNames beyond string`);
  // Absent additionalProperties (zod input of a non-strict object) means "extra keys allowed":
  // TypeScript object types are open already, so only a schema for extra values is spelled out.
  const extraType =
    typeof extra === "object" ? typeExpr(extra, named, `${indent}  `, `${where}[key]`) : extra === false ? "never" : "unknown";
  if (Object.keys(properties).length === 0) return `Record<string, ${extraType}>`;
  const inner = `${indent}  `;
  const lines = ["{"];
  for (const [key, property] of Object.entries(properties)) {
    lines.push(...docComment(docParagraphs(property), inner));
    const optional = required.has(key) ? "" : "?";
    lines.push(`${inner}${propertyKey(key)}${optional}: ${typeExpr(property, named, inner, `${where}.${key}`)};`);
  }
  // With named fields as well, the index signature must admit their types too: unknown is the honest bound.
  if (typeof extra === "object") lines.push(`${inner}[key: string]: unknown;`);
  lines.push(`${indent}}`);
  return lines.join("\n");
}

/** The description, then one tag per constraint TypeScript cannot express. */
export function docParagraphs(schema: JsonSchema): string[] {
  // For `T | null` (zod's nullable), the description and constraints may sit on the T branch.
  const branches = ((schema.anyOf ?? schema.oneOf ?? []) as JsonSchema[]).filter((b) => b.type !== "null");
  const source = branches.length === 1 ? { ...branches[0], ...schema } : schema;
  const description = typeof source.description === "string" ? [source.description] : [];
  return joinParagraphs(description, constraintTags(source));
}

function constraintTags(source: JsonSchema): string[] {
  const tags: string[] = [];
  const types = [source.type].flat();
  if (types.includes("integer")) tags.push("@integer");
  if (typeof source.format === "string") tags.push(`@format ${source.format}`);
  // zod spells every format out as a pattern too (a 300-character one for date-time): the format says it.
  if (typeof source.pattern === "string" && source.format === undefined) tags.push(`@pattern ${source.pattern}`);
  for (const key of ["minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minItems", "maxItems"]) {
    const value = source[key];
    if (typeof value === "number" && Math.abs(value) !== SAFE_BOUND) tags.push(`@${key} ${value}`);
  }
  if ("default" in source) tags.push(`@default ${JSON.stringify(source.default)}`);
  return tags;
}

function joinParagraphs(first: string[], second: string[]): string[] {
  return first.length > 0 && second.length > 0 ? [...first, "", ...second] : [...first, ...second];
}

function literal(value: unknown, where: string): string {
  if (value === null || ["string", "number", "boolean"].includes(typeof value)) return JSON.stringify(value);
  throw new Error(`codegen: ${where} has a const/enum value that is not a string, number, boolean or null`);
}

/** Members joined with " | ", duplicates dropped (anyOf [integer, number] is one `number`). */
function union(members: string[]): string {
  return [...new Set(members)].join(" | ");
}

/** A property name as TypeScript wants it: bare when it is an identifier, quoted otherwise. */
export function propertyKey(key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? key : JSON.stringify(key);
}

function propertiesOf(schema: JsonSchema): Record<string, JsonSchema> {
  return (schema.properties ?? {}) as Record<string, JsonSchema>;
}

/** A schema's identity for sharing: its JSON with sorted keys, minus its own description. */
function shapeKey(schema: JsonSchema): string {
  const { description: _ignored, ...shape } = schema;
  return canonical(shape);
}

/** JSON with sorted keys: equal for schemas that say the same, whatever order their keys were written in. */
function canonical(schema: JsonSchema): string {
  return JSON.stringify(schema, (_key, value: unknown) =>
    value && typeof value === "object" && !Array.isArray(value)
      ? Object.fromEntries(Object.keys(value).sort().map((k) => [k, (value as Record<string, unknown>)[k]]))
      : value,
  );
}
