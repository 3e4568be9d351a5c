/**
 * What a project agentwire.json may do before the user trusts it: everything
 * but the keys of TRUST_REQUIRED_CONFIG_PATHS (protocol/config.ts), which run
 * commands or send credentials. Those apply once `agentwire trust DIR` has
 * recorded the file as it is (trust-store.ts); until then, and again after
 * the file changes, they are left out and a notice says which and how to
 * apply them.
 */
import { dirname } from "node:path";
import { TRUST_REQUIRED_CONFIG_PATHS } from "../../protocol/config-trust-paths.js";
import type { Notice } from "../../protocol/notices.js";
import { isPlainObject, valueAt } from "./config-layers.js";
import type { TrustVerdict } from "./trust-store.js";

/** The trust-gated paths a file's values set, in the list's order. */
export function trustRequiredPathsIn(values: Record<string, unknown>): string[] {
  return TRUST_REQUIRED_CONFIG_PATHS.filter(({ path }) => valueAt(values, path) !== undefined).map(({ path }) => path);
}

/** A copy of `values` without `paths` (each with everything under it); objects left empty go too. */
export function withoutPaths(values: Record<string, unknown>, paths: readonly string[]): Record<string, unknown> {
  const out = structuredClone(values);
  for (const path of paths) {
    const keys = path.split(".");
    const parents: Record<string, unknown>[] = [out];
    for (const key of keys.slice(0, -1)) {
      const next = parents.at(-1)![key];
      if (!isPlainObject(next)) break;
      parents.push(next);
    }
    if (parents.length !== keys.length) continue;
    delete parents.at(-1)![keys.at(-1)!];
    for (let i = parents.length - 1; i > 0; i--) {
      if (Object.keys(parents[i]!).length === 0) delete parents[i - 1]![keys[i - 1]!];
    }
  }
  return out;
}

/** The command that trusts `file`: `agentwire trust DIR`, DIR quoted for a shell when it needs to be. */
export function trustCommand(file: string): string {
  const dir = dirname(file);
  return `agentwire trust ${/^[\w@%+=:,./-]+$/.test(dir) ? dir : `'${dir.replace(/'/g, "'\\''")}'`}`;
}

/** The notice for a project file whose gated keys were skipped. */
export function untrustedNotice(file: string, skipped: readonly string[], verdict: Exclude<TrustVerdict, "trusted">): Notice {
  const why = verdict === "changed" ? "changed since you trusted it" : "is not trusted";
  return {
    code: "config_untrusted",
    message:
      `${file} ${why}, so agentwire started without what it sets that runs commands or sends credentials: ${skipped.join(", ")}. ` +
      `Read the file; to apply them, run: ${trustCommand(file)}`,
  };
}

/** The notice for a file not read at all. */
export function ignoredNotice(file: string, reason: string): Notice {
  return {
    code: "config_ignored",
    message: `${file} was not read: ${reason}. agentwire reads configuration only from files and directories that are yours and that no one else can write.`,
  };
}
