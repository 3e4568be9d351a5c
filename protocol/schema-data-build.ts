/**
 * A zod schema as a SchemaNode (schema-data.ts): what `npm run gen` writes
 * for agentwire.json's schema (src/config/config-table.ts) and the requests'
 * params (params-data.ts). Each zod kind and check the parse knows becomes
 * data, a named rule (schema-rule-check.ts) by its name; anything else (an
 * anonymous refinement, a transform, a coercion, a kind not listed here)
 * becomes an opaque node, which sends a value that reaches it to zod.
 */
import * as z from "zod";
import type { SchemaCheck, SchemaNode, SchemaProperty } from "./schema-data.js";
import { ruleOfCheck } from "./schema-rule-check.js";
import type { SchemaRuleName } from "./schema-rules.js";

type Internals = z.core.$ZodType["_zod"];
type AnyDef = Record<string, unknown> & { type: string; checks?: { _zod: { def: Record<string, unknown> & { check: string } } }[] };

export function schemaNode(schema: z.core.$ZodType): SchemaNode {
  const def = schema._zod.def as unknown as AnyDef;
  // Named rules come off the checks and wrap the rest (which must then not change the value: a url check trims it).
  const rules = (def.checks ?? []).map((check) => ruleOfCheck(check)).filter((name): name is SchemaRuleName => name !== undefined);
  if (rules.length === 0) return plainNode(schema, def);
  const rest = (def.checks ?? []).filter((check) => ruleOfCheck(check) === undefined);
  if (rest.some((check) => check._zod.def.check === "string_format" && check._zod.def.format === "url")) return { type: "opaque" };
  const inner = plainNode(schema, { ...def, checks: rest });
  return inner.type === "opaque" ? inner : { type: "rules", inner, rules };
}

function plainNode(schema: z.core.$ZodType, def: AnyDef): SchemaNode {
  const zod = schema._zod as Internals;
  if (def.coerce) return { type: "opaque" };
  const checks = () => convertChecks(def.checks ?? []);
  switch (def.type) {
    case "object": {
      const catchall = (def.catchall as z.core.$ZodType | undefined)?._zod.def.type;
      if (catchall !== undefined && catchall !== "never") return { type: "opaque" };
      if ((def.checks ?? []).length > 0) return { type: "opaque" };
      const shape = def.shape as Record<string, z.core.$ZodType>;
      const properties: SchemaProperty[] = Object.entries(shape).map(([name, field]) => {
        const { optin, optout } = field._zod as { optin?: "optional" | "defaulted"; optout?: "optional" };
        return { name, node: schemaNode(field), ...(optin ? { optin } : {}), ...(optout ? { optout } : {}) };
      });
      return { type: "object", strict: catchall === "never", properties };
    }
    case "string":
    case "number": {
      const converted = checks();
      return converted ? { type: def.type, checks: converted } : { type: "opaque" };
    }
    case "boolean":
      return (def.checks ?? []).length > 0 ? { type: "opaque" } : { type: "boolean" };
    case "enum":
    case "literal": {
      const values = [...((zod as { values?: Set<unknown> }).values ?? [])];
      if ((def.checks ?? []).length > 0 || !values.every(isJsonScalar)) return { type: "opaque" };
      return def.type === "enum"
        ? { type: "enum", values: values as (string | number)[] }
        : { type: "literal", values: values as (string | number | boolean | null)[] };
    }
    case "array": {
      const converted = checks();
      return converted ? { type: "array", element: schemaNode(def.element as z.core.$ZodType), checks: converted } : { type: "opaque" };
    }
    case "record": {
      const key = def.keyType as z.core.$ZodType;
      // An enumerable key schema makes zod's record exhaustive (every value required): not modelled.
      if ((def.checks ?? []).length > 0 || (key._zod as { values?: unknown }).values || def.mode === "loose") return { type: "opaque" };
      return { type: "record", key: schemaNode(key), value: schemaNode(def.valueType as z.core.$ZodType) };
    }
    case "union":
      if ((def.checks ?? []).length > 0) return { type: "opaque" };
      if (def.discriminator !== undefined) return taggedNode(def);
      return { type: "union", options: (def.options as z.core.$ZodType[]).map(schemaNode) };
    case "optional": {
      const inner = def.innerType as z.core.$ZodType;
      if ((def.checks ?? []).length > 0) return { type: "opaque" };
      return { type: "optional", inner: schemaNode(inner), defaultedInner: inner._zod.optin === "defaulted" };
    }
    case "nullable":
      if ((def.checks ?? []).length > 0) return { type: "opaque" };
      return { type: "nullable", inner: schemaNode(def.innerType as z.core.$ZodType) };
    case "default":
    case "prefault": {
      if ((def.checks ?? []).length > 0) return { type: "opaque" };
      const value = def.defaultValue;
      if (!isJson(value)) return { type: "opaque" };
      const inner = schemaNode(def.innerType as z.core.$ZodType);
      if (def.type === "prefault") return { type: "prefault", inner, value };
      const parsed = z.safeParse(def.innerType as z.core.$ZodType, value);
      const valueParsesToItself = parsed.success && JSON.stringify(parsed.data) === JSON.stringify(value);
      return { type: "default", inner, value, valueParsesToItself };
    }
    case "unknown":
      return (def.checks ?? []).length > 0 ? { type: "opaque" } : { type: "unknown" };
    default:
      return { type: "opaque" };
  }
}

/** A discriminated union as zod picks its option: a map from the discriminator's values to options, copied from zod's own (discriminatorMap). */
function taggedNode(def: AnyDef): SchemaNode {
  if (def.unionFallback) return { type: "opaque" };
  const key = def.discriminator as string;
  const options = def.options as z.core.$ZodType[];
  const chosen = new Map<unknown, number | null>();
  for (const [i, option] of options.entries()) {
    const values = (option._zod as { propValues?: Record<string, Set<unknown>> }).propValues?.[key];
    if (!values || values.size === 0) return { type: "opaque" };
    for (const value of values) {
      if (value !== undefined && !isJsonScalar(value)) return { type: "opaque" };
      // A value two options hold: zod throws for a defined one, and keeps an absent one matching neither.
      if (chosen.has(value)) {
        if (value !== undefined) return { type: "opaque" };
        chosen.set(value, null);
      } else {
        chosen.set(value, i);
      }
    }
  }
  const cases = options.map((option, i) => {
    const values = [...chosen].filter(([value, at]) => at === i && value !== undefined).map(([value]) => value as string | number | boolean | null);
    return { values, ...(chosen.get(undefined) === i ? { orAbsent: true } : {}), node: schemaNode(option) };
  });
  return { type: "tagged", key, cases };
}

/** zod's checks as data, in order; undefined when one of them is not one the parse knows. */
function convertChecks(checks: NonNullable<AnyDef["checks"]>): SchemaCheck[] | undefined {
  const out: SchemaCheck[] = [];
  for (const { _zod } of checks) {
    const def = _zod.def;
    if (def.when !== undefined && !["min_length", "max_length"].includes(def.check)) return undefined;
    switch (def.check) {
      case "min_length":
        out.push({ check: "min_length", n: def.minimum as number });
        break;
      case "max_length":
        out.push({ check: "max_length", n: def.maximum as number });
        break;
      case "greater_than":
      case "less_than":
        if (typeof def.value !== "number") return undefined;
        out.push({ check: def.check, n: def.value, inclusive: def.inclusive === true });
        break;
      case "number_format":
        if (def.format !== "safeint") return undefined;
        out.push({ check: "safeint" });
        break;
      case "string_format":
        if (def.format === "regex") {
          const pattern = def.pattern as RegExp;
          out.push({ check: "regex", source: pattern.source, flags: pattern.flags });
        } else if (def.format === "url" && !("hostname" in def) && !("protocol" in def) && !("normalize" in def)) {
          out.push({ check: "url" });
        } else {
          return undefined;
        }
        break;
      default:
        return undefined;
    }
  }
  return out;
}

function isJsonScalar(value: unknown): boolean {
  return value === null || ["string", "boolean"].includes(typeof value) || (typeof value === "number" && Number.isFinite(value));
}

/** A value that JSON keeps as it is (what config-table.ts can hold). */
function isJson(value: unknown): boolean {
  try {
    return value !== undefined && JSON.stringify(JSON.parse(JSON.stringify(value))) === JSON.stringify(value) && sameShape(value, JSON.parse(JSON.stringify(value)));
  } catch {
    return false;
  }
}

function sameShape(a: unknown, b: unknown): boolean {
  if (typeof a !== "object" || a === null) return Object.is(a, b);
  if (typeof b !== "object" || b === null || Array.isArray(a) !== Array.isArray(b)) return false;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => sameShape((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}
