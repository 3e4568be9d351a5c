/**
 * A zod schema as plain data (SchemaNode, written by `npm run gen` with
 * schema-data-build.ts) and a parse over it that needs no zod. Two tables use
 * it: agentwire.json's schema (src/config/config-table.ts), so that a start
 * whose configuration is valid builds none of the configuration's zod schemas,
 * and every request's params (params-data.ts), so that a valid request is
 * checked without building the method schemas (src/rpc/dispatcher.ts).
 *
 * It answers only what it is sure of. `{ value }`: zod's parse would succeed
 * with exactly this output (same keys, same order, defaults filled in the same
 * way). INVALID: zod's parse would fail, for a reason this parse checks the
 * same way (a wrong type, a bound, a pattern, an unknown key). UNKNOWN: the
 * node holds something the generator did not turn into data (an anonymous
 * refinement, a transform, a discriminated union). Both INVALID and
 * UNKNOWN send the caller to zod, which words the error: this parse never
 * writes an error message of its own. A refinement written as a named rule
 * (schema-rules.ts) is data too: the same function runs in both.
 *
 * The semantics follow zod 4's core (node_modules/zod/v4/core/schemas.js:
 * $ZodObject and handlePropertyResult, $ZodRecord, $ZodUnion, $ZodDefault,
 * $ZodPrefault, $ZodOptional, $ZodURL...); test/config/config-schema-data.test.ts
 * and test/rpc/params-data.test.ts hold the two to the same answers over
 * realistic values, every key on both sides of its bounds and thousands of
 * seeded mutations.
 */

import { SCHEMA_RULES, type SchemaRuleName } from "./schema-rules.js";

/** One check of a string or a number, in the order the schema runs them. */
export type SchemaCheck =
  | { check: "min_length"; n: number }
  | { check: "max_length"; n: number }
  | { check: "regex"; source: string; flags: string }
  /** z.string().url() without hostname, protocol or normalize: URL.canParse of the trimmed text, whose output is the trimmed text without tabs and newlines. */
  | { check: "url" }
  /** Number.isSafeInteger (zod's .int()). */
  | { check: "safeint" }
  | { check: "greater_than"; n: number; inclusive: boolean }
  | { check: "less_than"; n: number; inclusive: boolean };

/** zod's optin / optout of an object's property: whether it may be absent, and what absence gives. */
export interface SchemaProperty {
  name: string;
  node: SchemaNode;
  optin?: "optional" | "defaulted";
  optout?: "optional";
}

export type SchemaNode =
  /** strict: an unknown key fails (z.strictObject); otherwise unknown keys are left out of the output (z.object). */
  | { type: "object"; strict: boolean; properties: SchemaProperty[] }
  | { type: "string"; checks: SchemaCheck[] }
  | { type: "number"; checks: SchemaCheck[] }
  | { type: "boolean" }
  | { type: "enum"; values: (string | number)[] }
  | { type: "literal"; values: (string | number | boolean | null)[] }
  | { type: "array"; element: SchemaNode; checks: SchemaCheck[] }
  /** A record whose keys are strings checked by `key` (a key schema with a fixed set of values is left opaque: zod makes those exhaustive). */
  | { type: "record"; key: SchemaNode; value: SchemaNode }
  | { type: "union"; options: SchemaNode[] }
  /**
   * A discriminated union: the option is the one whose values of `key` hold
   * the input's (orAbsent: the option taken when the key is absent); no
   * option is a refusal, as in zod (whose map of values this copies).
   */
  | { type: "tagged"; key: string; cases: { values: (string | number | boolean | null)[]; orAbsent?: boolean; node: SchemaNode }[] }
  /** defaultedInner: the inner node substitutes for absence (an optional default), which this parse leaves to zod. */
  | { type: "optional"; inner: SchemaNode; defaultedInner: boolean }
  | { type: "nullable"; inner: SchemaNode }
  /**
   * `.default(value)`: absence gives the value, not checked (zod does not
   * check it either). valueParsesToItself: the generator checked that zod's
   * parse of the value itself gives the same value, so the value written out
   * (the defaults layer writes every default) is valid even where the inner
   * node is opaque (the built-in system prompt, the shell command).
   */
  | { type: "default"; inner: SchemaNode; value: unknown; valueParsesToItself: boolean }
  /** `.prefault(value)`: absence gives the value, parsed by the inner node. */
  | { type: "prefault"; inner: SchemaNode; value: unknown }
  | { type: "unknown" }
  /** The inner node's value checked by named rules (schema-rules.ts), in order: zod's `.check(ruleCheck(name))`. */
  | { type: "rules"; inner: SchemaNode; rules: SchemaRuleName[] }
  /** Anything else: a refinement, a transform, a schema kind this parse does not know. */
  | { type: "opaque" };

export const INVALID = 1;
export const UNKNOWN = 2;
export type FastResult = { value: unknown } | typeof INVALID | typeof UNKNOWN;

/** The configuration `value` parsed by `node`, or INVALID / UNKNOWN (see the module comment). */
export function fastParse(node: SchemaNode, value: unknown): FastResult {
  switch (node.type) {
    case "object":
      return parseObject(node, value);
    case "string":
      return typeof value === "string" ? runChecks(node.checks, value) : INVALID;
    case "number":
      return typeof value === "number" && Number.isFinite(value) ? runChecks(node.checks, value) : INVALID;
    case "boolean":
      return typeof value === "boolean" ? { value } : INVALID;
    case "enum":
    case "literal":
      return (node.values as unknown[]).includes(value) ? { value } : INVALID;
    case "array": {
      if (!Array.isArray(value)) return INVALID;
      const out: unknown[] = new Array(value.length);
      let unknown = false;
      for (let i = 0; i < value.length; i++) {
        const element = fastParse(node.element, value[i]);
        if (element === INVALID) return INVALID;
        if (element === UNKNOWN) unknown = true;
        else out[i] = element.value;
      }
      if (unknown) return UNKNOWN;
      return runChecks(node.checks, out);
    }
    case "record":
      return parseRecord(node, value);
    case "union": {
      // zod takes the first option that succeeds; an option this parse cannot judge may be that one.
      for (const option of node.options) {
        const result = fastParse(option, value);
        if (result !== INVALID) return result;
      }
      return INVALID;
    }
    case "tagged": {
      if (typeof value !== "object" || value === null || Array.isArray(value)) return INVALID;
      if (!isPlainObject(value)) return UNKNOWN;
      const tag = (value as Record<string, unknown>)[node.key];
      const chosen = node.cases.find((c) => (tag === undefined ? c.orAbsent === true : (c.values as unknown[]).includes(tag)));
      return chosen ? fastParse(chosen.node, value) : INVALID;
    }
    case "optional":
      if (value === undefined) return node.defaultedInner ? UNKNOWN : { value: undefined };
      return fastParse(node.inner, value);
    case "nullable":
      return value === null ? { value: null } : fastParse(node.inner, value);
    case "default": {
      if (value === undefined) return { value: copy(node.value) };
      const result = fastParse(node.inner, value);
      if (result === UNKNOWN && node.valueParsesToItself && JSON.stringify(value) === JSON.stringify(node.value)) return { value: copy(node.value) };
      return typeof result === "object" && result.value === undefined ? { value: copy(node.value) } : result;
    }
    case "prefault":
      return fastParse(node.inner, value === undefined ? copy(node.value) : value);
    case "unknown":
      return { value };
    case "rules": {
      const result = fastParse(node.inner, value);
      if (typeof result !== "object") return result;
      for (const name of node.rules) if (SCHEMA_RULES[name](result.value as never).length > 0) return INVALID;
      return result;
    }
    case "opaque":
      return UNKNOWN;
  }
}

function parseObject(node: Extract<SchemaNode, { type: "object" }>, value: unknown): FastResult {
  if (!isPlainObject(value)) return typeof value === "object" && value !== null && !Array.isArray(value) ? UNKNOWN : INVALID;
  const input = value as Record<string, unknown>;
  let unknown = false;
  if (node.strict) {
    for (const key in input) {
      if (!node.properties.some((p) => p.name === key)) return INVALID;
    }
  } else if (Object.hasOwn(input, "__proto__")) {
    return UNKNOWN;
  }
  const out: Record<string, unknown> = {};
  for (const property of node.properties) {
    const present = Object.hasOwn(input, property.name);
    // zod's handlePropertyResult: an absent optional key contributes nothing, whatever its schema makes of undefined.
    if (!present && property.optout === "optional" && property.optin === "optional") continue;
    const result = fastParse(property.node, input[property.name]);
    if (result === INVALID) {
      // An absent key whose schema may be absent: zod drops the failure (and the key).
      if (!present && property.optin !== undefined && property.optout === "optional") continue;
      return INVALID;
    }
    if (result === UNKNOWN) {
      unknown = true;
      continue;
    }
    if (!present && property.optin === undefined) return INVALID;
    if (result.value === undefined) {
      if (present || (property.optin === "defaulted" && property.optout !== "optional")) out[property.name] = undefined;
    } else {
      out[property.name] = result.value;
    }
  }
  return unknown ? UNKNOWN : { value: out };
}

function parseRecord(node: Extract<SchemaNode, { type: "record" }>, value: unknown): FastResult {
  if (!isPlainObject(value)) return typeof value === "object" && value !== null && !Array.isArray(value) ? UNKNOWN : INVALID;
  const input = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  let unknown = false;
  for (const key of Object.keys(input)) {
    // zod skips a __proto__ key without a word; left to it.
    if (key === "__proto__") return UNKNOWN;
    const checkedKey = fastParse(node.key, key);
    if (checkedKey === INVALID) {
      // zod retries a key that looks like a number as a number: a string key schema fails that too, but leave it to zod.
      if (/^-?\d+(?:\.\d+)?$/.test(key)) return UNKNOWN;
      return INVALID;
    }
    if (checkedKey === UNKNOWN || checkedKey.value !== key) {
      unknown = true;
      continue;
    }
    const result = fastParse(node.value, input[key]);
    if (result === INVALID) return INVALID;
    if (result === UNKNOWN) unknown = true;
    else out[key] = result.value;
  }
  return unknown ? UNKNOWN : { value: out };
}

function runChecks(checks: readonly SchemaCheck[], start: string | number | unknown[]): FastResult {
  let value = start;
  for (const check of checks) {
    switch (check.check) {
      case "min_length":
        if ((value as string | unknown[]).length < check.n) return INVALID;
        break;
      case "max_length":
        if ((value as string | unknown[]).length > check.n) return INVALID;
        break;
      case "regex": {
        if (typeof value !== "string") return UNKNOWN;
        if (!regex(check).test(value)) return INVALID;
        break;
      }
      case "url": {
        if (typeof value !== "string") return UNKNOWN;
        const trimmed = value.trim();
        if (!URL.canParse(trimmed)) return INVALID;
        value = trimmed.replace(/[\t\n\r]/g, "");
        break;
      }
      case "safeint":
        if (!Number.isSafeInteger(value)) return INVALID;
        break;
      case "greater_than":
        if (typeof value !== "number") return UNKNOWN;
        if (check.inclusive ? !(value >= check.n) : !(value > check.n)) return INVALID;
        break;
      case "less_than":
        if (typeof value !== "number") return UNKNOWN;
        if (check.inclusive ? !(value <= check.n) : !(value < check.n)) return INVALID;
        break;
    }
  }
  return { value };
}

const compiled = new WeakMap<object, RegExp>();
/** Each pattern compiled once; lastIndex reset as zod does (a g or y flag would carry it over). */
function regex(check: Extract<SchemaCheck, { check: "regex" }>): RegExp {
  let re = compiled.get(check);
  if (!re) compiled.set(check, (re = new RegExp(check.source, check.flags)));
  re.lastIndex = 0;
  return re;
}

function isPlainObject(value: unknown): boolean {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** A default's own copy: the caller may change what it gets (zod hands out a shallow copy). */
function copy(value: unknown): unknown {
  return typeof value === "object" && value !== null ? structuredClone(value) : value;
}
