/**
 * The keys of agentwire.json as one list, read off the schema
 * (protocol/config.ts): each key's path, type, default, description, flag
 * and environment variable. Everything that lists keys — the command-line
 * flags, the environment layer, `agentwire config`, `--help` and the
 * reference page — walks this list, so a key added to the schema reaches
 * them all.
 */
import * as z from "zod";
import type { ConfigKeyMeta } from "../../protocol/config-meta.js";
import { AgentwireConfigFile } from "../../protocol/config.js";

/** What a flag or an environment variable takes, from the key's type. */
export type ConfigValueKind =
  | { kind: "integer"; min?: number; max?: number }
  | { kind: "string" }
  | { kind: "enum"; options: readonly string[] }
  /** Repeatable flag, comma-separated value; each element checked by `element`. */
  | { kind: "list"; element: z.ZodType }
  | { kind: "other" };

export interface ConfigKey extends ConfigKeyMeta {
  /** Dotted path in agentwire.json: `limits.maxBatch`. */
  path: string;
  /** The key's type without its wrappers (optional, default, prefault). */
  type: z.ZodType;
  description: string;
  /** What parsing fills in when nothing sets the key (`.default()`); absent when nothing is. */
  default?: unknown;
  /**
   * An object of settings, whose keys are keys of their own (`server`,
   * `tools.web`); false for a key that holds a value, an object one included
   * (`conversations.settings`, `tools.web.fetch`, a map such as `providers`).
   */
  section: boolean;
  value: ConfigValueKind;
}

/** The flag's name without its argument: `--max-payload` of "--max-payload BYTES". */
export function flagName(key: Pick<ConfigKey, "flag">): string | undefined {
  return key.flag?.split(" ")[0];
}

/** Every key of `schema` (default: agentwire.json's), sections first then their keys, in the schema's order. */
export function configKeys(schema: z.ZodObject = AgentwireConfigFile): ConfigKey[] {
  // agentwire.json's list is walked once: building the command line alone asks for it once per command (~2 ms a walk at start).
  if (schema === AgentwireConfigFile) return [...(fileKeys ??= walked(schema))];
  return walked(schema);
}

let fileKeys: readonly ConfigKey[] | undefined;

function walked(schema: z.ZodObject): ConfigKey[] {
  const out: ConfigKey[] = [];
  walk(schema, "", out);
  return out;
}

function walk(object: z.ZodObject, prefix: string, out: ConfigKey[]): void {
  for (const [name, field] of Object.entries(object.shape as Record<string, z.ZodType>)) {
    const key = describeKey(`${prefix}${name}`, field);
    out.push(key);
    if (key.section) walk(key.type as z.ZodObject, `${key.path}.`, out);
  }
}

function describeKey(path: string, field: z.ZodType): ConfigKey {
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
  return {
    path,
    type,
    description: typeof meta.description === "string" ? meta.description : "",
    ...(typeof meta.flag === "string" ? { flag: meta.flag as ConfigKeyMeta["flag"] } : {}),
    ...(typeof meta.env === "string" ? { env: meta.env } : {}),
    ...(typeof meta.defaultText === "string" ? { defaultText: meta.defaultText } : {}),
    ...(typeof meta.defaultNote === "string" ? { defaultNote: meta.defaultNote } : {}),
    ...(fallback ? { default: fallback.value } : {}),
    section: prefaulted && type instanceof z.ZodObject,
    value: valueKind(type),
  };
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
  if (type instanceof z.ZodArray) return { kind: "list", element: type.element as z.ZodType };
  return { kind: "other" };
}

/** The keys a flag sets, by flag name (`--port`). */
export function flaggedKeys(keys: readonly ConfigKey[] = configKeys()): Map<string, ConfigKey> {
  return new Map(keys.filter((k) => k.flag).map((k) => [flagName(k)!, k]));
}

/** The keys an environment variable sets, by variable name. */
export function environmentKeys(keys: readonly ConfigKey[] = configKeys()): Map<string, ConfigKey> {
  return new Map(keys.filter((k) => k.env).map((k) => [k.env!, k]));
}

/** The elements of a comma-separated value (`"A, B_*"` → `["A", "B_*"]`), blanks dropped. */
function splitList(text: string): string[] {
  return text
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
}

/**
 * A key's value from the text of flags or of an environment variable (a
 * list: each text comma-separated, repeated entries once), checked as far
 * as text can be: an integer within the key's bounds, one of an enum's
 * values, each list element by the element's schema. The whole layer is
 * checked against the schema afterwards; `problem` words what is wrong for
 * a message that names the flag or variable first.
 */
export function valueFromText(key: Pick<ConfigKey, "value">, texts: readonly string[]): { value: unknown } | { problem: string } {
  const last = texts.at(-1) ?? "";
  switch (key.value.kind) {
    case "integer": {
      const { min, max } = key.value;
      const n = Number(last);
      if (!Number.isInteger(n) || (min !== undefined && n < min)) return { problem: `must be an integer${min !== undefined ? ` ≥ ${min}` : ""}, got "${last}"` };
      if (max !== undefined && n > max) return { problem: `must be at most ${max}, got ${n}` };
      return { value: n };
    }
    case "enum": {
      const { options } = key.value;
      if (!options.includes(last)) return { problem: `must be ${options.slice(0, -1).join(", ")} or ${options.at(-1)}, got "${last}"` };
      return { value: last };
    }
    case "list": {
      const entries = [...new Set(texts.flatMap(splitList))];
      for (const entry of entries) {
        const checked = key.value.element.safeParse(entry);
        if (!checked.success) return { problem: `${checked.error.issues[0]!.message}, got "${entry}"` };
      }
      return { value: entries };
    }
    default:
      return { value: last };
  }
}
