/**
 * The keys of agentwire.json as one list: each key's path, default,
 * description, flag and environment variable (config-key.ts). Everything
 * that lists keys — the command-line flags, the environment layer,
 * `agentwire config`, `--help` and the reference page — walks this list, so a
 * key added to the schema (protocol/config.ts) reaches them all. The list is
 * read off the schema by `npm run gen` into config-table.ts: listing the
 * keys builds no zod schema.
 */
import { type ConfigKey } from "./config-key.js";
import { listElementProblem } from "./config-check.js";
import { CONFIG_KEYS } from "./config-table.js";
import { fastParse, INVALID, UNKNOWN } from "../../protocol/schema-data.js";

export type { ConfigKey, ConfigValueKind } from "./config-key.js";

/** The flag's name without its argument: `--max-payload` of "--max-payload BYTES". */
export function flagName(key: Pick<ConfigKey, "flag">): string | undefined {
  return key.flag?.split(" ")[0];
}

/** Every key of agentwire.json, sections first then their keys, in the schema's order (a copy: the caller may sort it). */
export function configKeys(): ConfigKey[] {
  return [...CONFIG_KEYS];
}

/** The keys a flag sets, by flag name (`--port`). */
export function flaggedKeys(keys: readonly ConfigKey[] = CONFIG_KEYS): Map<string, ConfigKey> {
  return new Map(keys.filter((k) => k.flag).map((k) => [flagName(k)!, k]));
}

/** The keys an environment variable sets, by variable name. */
export function environmentKeys(keys: readonly ConfigKey[] = CONFIG_KEYS): Map<string, ConfigKey> {
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
export function valueFromText(key: Pick<ConfigKey, "value" | "path">, texts: readonly string[]): { value: unknown } | { problem: string } {
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
        const checked = fastParse(key.value.element, entry);
        if (checked !== INVALID && checked !== UNKNOWN && checked.value === entry) continue;
        // Worded by zod's schema of the element (loaded for it: config-check.ts).
        const problem = listElementProblem(key.path, entry);
        if (problem !== undefined) return { problem: `${problem}, got "${entry}"` };
      }
      return { value: entries };
    }
    default:
      return { value: last };
  }
}
