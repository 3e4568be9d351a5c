/**
 * JSON Schema (draft-07, as json-schema.ts produces it) → Python type text for
 * the generated Python client: a TypedDict per object type, `Literal[...]`
 * for const and enum, `X | None` for nullable, `NotRequired[...]` for
 * optional keys, docstrings from every `.describe()`.
 *
 * Python has no anonymous object types, so an object nested in a field, an
 * array or a union is hoisted into a TypedDict of its own, named after where
 * it sits (`McpAddParams.server`'s stdio branch → `McpAddParamsServerStdio`);
 * the same shape met again reuses that name. Shared types (Conversation,
 * MessageRecord, …) are recognised by NamedTypes exactly as the TypeScript
 * emitter does, so both clients name the same things. As in ts-types.ts, a
 * keyword not handled here is refused, so a new zod construct fails
 * `npm run gen` instead of being dropped silently.
 */
import type { JsonSchema } from "./json-schema.js";
import { docParagraphs, type NamedTypes } from "./ts-types.js";
import { wrapParagraphs } from "./wrap-paragraphs.js";

const KNOWN = new Set([
  "type", "description", "properties", "required", "additionalProperties", "propertyNames", "items",
  "anyOf", "oneOf", "const", "enum", "default",
  "format", "pattern", "minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
  "minItems", "maxItems",
]);

const PY_KEYWORDS = new Set([
  "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
  "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal",
  "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
]);

const WIDTH = 100;

/**
 * One top-level definition of types.py. `needs` are the names its statement
 * evaluates when the module is imported: base classes, field annotations, the
 * right-hand side of an alias. Annotations are evaluated on purpose (no
 * `from __future__ import annotations`): TypedDict reads NotRequired from
 * evaluated annotations only, so with lazy ones every key would count as
 * required at run time (`__required_keys__`).
 */
export interface PyDefinition {
  name: string;
  lines: string[];
  needs: string[];
}

/**
 * Collects the definitions of types.py: the named ones the emitter asks for
 * and every object type hoisted out of them.
 */
export class PyTypeWriter {
  readonly definitions: PyDefinition[] = [];
  readonly #names = new Set<string>();
  /** Hoisted shapes already written, by canonical JSON: the same shape gets the same name. */
  readonly #hoisted = new Map<string, string>();

  constructor(private readonly named: NamedTypes) {}

  /** A definition written by the caller (its name still claimed once). */
  add(definition: PyDefinition): void {
    this.#claim(definition.name);
    this.definitions.push(definition);
  }

  /** A TypedDict for an object with fields, an alias otherwise; `lead` paragraphs go first in its docstring. */
  define(name: string, schema: JsonSchema, lead: string[] = []): void {
    this.#claim(name);
    const doc = joinParagraphs(lead, docParagraphs(schema).filter((p) => p !== "@integer"));
    const shared = this.named.nameOf(schema);
    if (shared && shared !== name) {
      this.#alias(name, shared, [shared], doc);
      return;
    }
    if (schema.type === "object" && Object.keys(propertiesOf(schema)).length > 0) {
      this.#typedDict(name, schema, doc);
      return;
    }
    const needs: string[] = [];
    const type = this.typeOf(schema, name, needs, true);
    this.#alias(name, type, needs, doc);
  }

  /**
   * The Python type of `schema` at `where` (a PascalCase name prefix for
   * anything hoisted). Names it uses are added to `needs`.
   */
  typeOf(schema: JsonSchema, where: string, needs: string[], root = false): string {
    const unknownKeys = Object.keys(schema).filter((key) => !KNOWN.has(key));
    if (unknownKeys.length > 0) {
      throw new Error(`codegen (python): ${where} uses ${unknownKeys.join(", ")}, which the Python type emitter cannot express yet`);
    }
    const shared = root ? undefined : this.named.nameOf(schema);
    if (shared) return use(shared, needs);
    if ("const" in schema) return `Literal[${literal(schema.const, where)}]`;
    if (Array.isArray(schema.enum)) return `Literal[${schema.enum.map((v) => literal(v, where)).join(", ")}]`;
    const branches = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
    if (branches) {
      if ("type" in schema) throw new Error(`codegen (python): ${where} has both type and anyOf/oneOf`);
      const objects = branches.filter((b) => b.type === "object" && Object.keys(propertiesOf(b)).length > 0).length;
      return union(
        branches.map((branch, i) => {
          // Several object branches: each is named by its discriminator (`type: "file"` → …File), or its position.
          const tag = objects > 1 ? pascal(discriminator(branch) ?? `variant${i + 1}`) : "";
          return this.typeOf(branch, `${where}${tag}`, needs);
        }),
      );
    }
    if (Array.isArray(schema.type)) {
      return union((schema.type as string[]).map((type) => this.typeOf({ ...schema, type }, where, needs, root)));
    }
    switch (schema.type) {
      case undefined:
        return "Any";
      case "string":
        return "str";
      case "boolean":
        return "bool";
      case "null":
        return "None";
      case "integer":
        return "int";
      case "number":
        return "float";
      case "array": {
        if (schema.items === undefined) return "list[Any]";
        if (Array.isArray(schema.items)) throw new Error(`codegen (python): ${where} is a tuple (items as a list), not supported yet`);
        return `list[${this.typeOf(schema.items as JsonSchema, `${where}Item`, needs)}]`;
      }
      case "object": {
        const keys = schema.propertyNames as JsonSchema | undefined;
        if (keys !== undefined && keys.type !== "string") throw new Error(`codegen (python): ${where} constrains propertyNames beyond string`);
        if (Object.keys(propertiesOf(schema)).length === 0) {
          const extra = schema.additionalProperties;
          const value = typeof extra === "object" ? this.typeOf(extra as JsonSchema, `${where}Value`, needs) : "Any";
          return `dict[str, ${value}]`;
        }
        return use(this.#hoist(schema, where), needs);
      }
      default:
        throw new Error(`codegen (python): ${where} has type ${String(schema.type)}, which the Python type emitter does not know`);
    }
  }

  /** An inline object type as a TypedDict of its own; the same shape met again reuses the first name. */
  #hoist(schema: JsonSchema, where: string): string {
    const key = canonical({ ...schema, description: undefined });
    const known = this.#hoisted.get(key);
    if (known) return known;
    this.#hoisted.set(key, where);
    this.#claim(where);
    this.#typedDict(where, schema, []);
    return where;
  }

  #claim(name: string): void {
    if (this.#names.has(name)) throw new Error(`codegen (python): type name ${name} is used twice`);
    this.#names.add(name);
  }

  #alias(name: string, type: string, needs: string[], doc: string[]): void {
    const lines = [`${name}: TypeAlias = ${type}`, ...docstring(doc, "")];
    this.definitions.push({ name, lines, needs });
  }

  /** `class Name(Bases, TypedDict):` with one annotated key per field, each followed by its docstring. */
  #typedDict(name: string, schema: JsonSchema, doc: string[]): void {
    const properties = propertiesOf(schema);
    const bases = this.named.basesOf(schema, name);
    // Fields a base carries are inherited with their docs, as in the TypeScript client.
    const inherited = new Set(bases.flatMap((base) => base.fields));
    const required = new Set((schema.required ?? []) as string[]);
    const needs = bases.map((base) => base.name);
    const baseNames = [...needs];
    const body: string[] = [];
    for (const [key, property] of Object.entries(properties)) {
      if (inherited.has(key)) continue;
      if (!/^[A-Za-z_]\w*$/.test(key) || PY_KEYWORDS.has(key)) {
        throw new Error(`codegen (python): ${name}.${key} is not a Python identifier; TypedDict's class syntax cannot hold it`);
      }
      const type = this.typeOf(property, `${name}${pascal(key)}`, needs);
      body.push(`    ${key}: ${required.has(key) ? type : `NotRequired[${type}]`}`);
      body.push(...docstring(docParagraphs(property).filter((p) => p !== "@integer"), "    "));
    }
    const header = `class ${name}(${[...baseNames, "TypedDict"].join(", ")}):`;
    const docLines = docstring(doc, "    ");
    const lines = [header, ...docLines];
    if (docLines.length > 0 && body.length > 0) lines.push("");
    lines.push(...body);
    if (docLines.length === 0 && body.length === 0) lines.push("    pass");
    this.definitions.push({ name, lines, needs });
  }
}

/**
 * The definitions ordered so that whatever a statement evaluates at import
 * (a base class, an alias's right-hand side) is defined before it; otherwise
 * in the order they were written.
 */
export function importOrder(definitions: PyDefinition[]): PyDefinition[] {
  const byName = new Map(definitions.map((d) => [d.name, d]));
  const done = new Set<string>();
  const visiting = new Set<string>();
  const out: PyDefinition[] = [];
  const visit = (definition: PyDefinition) => {
    if (done.has(definition.name)) return;
    if (visiting.has(definition.name)) throw new Error(`codegen (python): ${definition.name} depends on itself at import time`);
    visiting.add(definition.name);
    for (const need of definition.needs) {
      const dependency = byName.get(need);
      if (dependency) visit(dependency);
    }
    visiting.delete(definition.name);
    done.add(definition.name);
    out.push(definition);
  };
  for (const definition of definitions) visit(definition);
  return out;
}

/**
 * A docstring at `indent`: paragraphs wrapped to WIDTH, "" between them kept
 * as a blank line, ``` blocks verbatim. A short single line stays on one line.
 */
export function docstring(paragraphs: readonly string[], indent: string): string[] {
  // A backslash would start an escape and `"""` would end the string: both are escaped.
  const lines = wrapParagraphs(paragraphs, WIDTH - indent.length, (text) => text.replaceAll("\\", "\\\\").replaceAll('"""', '\\"\\"\\"'));
  if (lines.length === 0) return [];
  // A docstring ending in `"` would close early (`""""`): a space keeps them apart.
  const last = (text: string) => (text.endsWith('"') ? `${text} ` : text);
  if (lines.length === 1 && indent.length + lines[0].length + 6 <= WIDTH) return [`${indent}"""${last(lines[0])}"""`];
  return [`${indent}"""${lines[0]}`, ...lines.slice(1).map((l) => (l ? `${indent}${l}` : "")), `${indent}"""`];
}

/** `conversation_id`, `tool-call` or `toolCall` → `ToolCall`: a PascalCase name part. */
export function pascal(text: string): string {
  return text
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((part) => part[0].toUpperCase() + part.slice(1))
    .join("");
}

/** `toolCall` or `tool-call` → `tool_call`: a Python member name. */
export function snake(text: string): string {
  return text
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/[^A-Za-z0-9_]+/g, "_")
    .toLowerCase();
}

export function isPythonKeyword(name: string): boolean {
  return PY_KEYWORDS.has(name);
}

/**
 * The value of a branch's `type` (or `kind`) field — its const, or the first
 * of its enum (`["http", "streamable-http"]` → http): how a tagged union names
 * its branches.
 */
function discriminator(branch: JsonSchema): string | undefined {
  const properties = propertiesOf(branch);
  for (const key of ["type", "kind"]) {
    const field = properties[key];
    const value = field?.const ?? (Array.isArray(field?.enum) ? field.enum[0] : undefined);
    if (typeof value === "string") return value;
  }
  return undefined;
}

function use(name: string, needs: string[]): string {
  needs.push(name);
  return name;
}

function literal(value: unknown, where: string): string {
  if (value === null) return "None";
  if (typeof value === "boolean") return value ? "True" : "False";
  if (typeof value === "string" || typeof value === "number") return JSON.stringify(value);
  throw new Error(`codegen (python): ${where} has a const/enum value that is not a string, number, boolean or null`);
}

/** Members joined with " | ", duplicates dropped; `Literal[None]` is spelled `None`. */
function union(members: string[]): string {
  return [...new Set(members.map((m) => (m === "Literal[None]" ? "None" : m)))].join(" | ");
}

function joinParagraphs(first: string[], second: string[]): string[] {
  return first.length > 0 && second.length > 0 ? [...first, "", ...second] : [...first, ...second];
}

function propertiesOf(schema: JsonSchema): Record<string, JsonSchema> {
  return (schema.properties ?? {}) as Record<string, JsonSchema>;
}

/** JSON with sorted keys (undefined dropped): equal for schemas that say the same in any key order. */
function canonical(schema: JsonSchema): string {
  return JSON.stringify(schema, (_key, value: unknown) =>
    value && typeof value === "object" && !Array.isArray(value)
      ? Object.fromEntries(Object.keys(value).sort().map((k) => [k, (value as Record<string, unknown>)[k]]))
      : value,
  );
}
