/** `agentwire config`: the effective configuration, each value with where it came from, secrets masked. */
import { SECRET_CONFIG_PATHS, SECRET_URL_CONFIG_PATHS } from "../../protocol/config-trust-paths.js";
import { configKeys } from "./config-keys.js";
import { isPlainObject, valueAt } from "./config-layers.js";
import { trustCommand } from "./config-trust.js";
import type { ConfigFileState, ResolvedConfig } from "./resolve-config.js";
import { redactPassword } from "./url-password.js";

export const MASK = "•••••• (secret)";

const SECRET_PATTERNS = SECRET_CONFIG_PATHS.map((p) => new RegExp(`^${p.replace(/\./g, "\\.").replace(/\*/g, "[^.]+")}$`));

function isSecret(path: string): boolean {
  return SECRET_PATTERNS.some((re) => re.test(path));
}

/** A copy of `value` (found at `path`) with every secret inside it replaced by MASK. */
export function maskSecrets(value: unknown, path: string): unknown {
  if (isSecret(path)) return MASK;
  // A store URL stays readable (which server, which database); only its password goes.
  if (SECRET_URL_CONFIG_PATHS.includes(path) && typeof value === "string" && value !== "lowdb") return redactPassword(value);
  if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, maskSecrets(v, path ? `${path}.${k}` : k)]));
  return value;
}

interface ReportLine {
  path: string;
  value: unknown;
  source: string;
}

/**
 * One line per value that was set, in the schema's order of keys; a key
 * nothing set shows its default, or "(not set)". A key that holds a value
 * (a section's keys are lines of their own) shows every value set under it:
 * each provider's, each MCP server's.
 */
export function reportLines(resolved: ResolvedConfig): ReportLine[] {
  const { merged } = resolved;
  const lines: ReportLine[] = [];
  const shown = new Set<string>();
  const setPaths = [...merged.sources.keys()];
  // `$schema` only tells an editor where the schema is: listed (below) when a file sets it.
  const order = configKeys()
    .filter((key) => !key.section && !key.path.startsWith("$"))
    .map((key) => key.path);
  for (const root of order) {
    const under = setPaths.filter((p) => p === root || p.startsWith(`${root}.`)).filter((p) => !shown.has(p));
    for (const path of under) {
      shown.add(path);
      lines.push({ path, value: maskSecrets(merged.leaves.get(path), path), source: merged.sources.get(path)! });
    }
    if (under.length === 0) lines.push({ path: root, value: valueAt(merged.values, root), source: "default" });
  }
  // Anything else a file set ($schema).
  for (const path of setPaths) {
    if (!shown.has(path)) lines.push({ path, value: maskSecrets(merged.leaves.get(path), path), source: merged.sources.get(path)! });
  }
  return lines;
}

/** One line on how a file was taken: applied whole, partly (and what was left out), or not read. */
export function describeFileState(state: ConfigFileState): string {
  switch (state.status) {
    case "user":
      return "your user file: applied";
    case "explicit":
      return "named by --config: applied";
    case "no trust needed":
      return "applied (sets nothing that runs commands or sends credentials, so it needs no trust)";
    case "trusted":
      return "trusted (unchanged since agentwire trust): applied";
    case "untrusted":
    case "changed":
      return (
        `${state.status === "changed" ? "CHANGED since you trusted it" : "NOT TRUSTED"}: applied without ${state.skipped.join(", ")}` +
        ` (they run commands or send credentials); to apply them: ${trustCommand(state.file)}`
      );
    case "ignored":
      return `IGNORED, not read: ${state.reason}`;
  }
}

export function formatReport(resolved: ResolvedConfig): string {
  const out: string[] = ["Configuration files (lowest precedence first; then environment, then flags):"];
  if (resolved.fileStates.length === 0) out.push("  (none found)");
  for (const state of resolved.fileStates) out.push(`  ${state.file}`, `      ${describeFileState(state)}`);
  out.push("");
  const lines = reportLines(resolved).map((l) => ({
    path: l.path,
    value: l.value === undefined ? "(not set)" : JSON.stringify(l.value),
    source: l.source,
  }));
  const pathWidth = Math.max(...lines.map((l) => l.path.length));
  const valueWidth = Math.min(48, Math.max(...lines.map((l) => l.value.length)));
  for (const l of lines) out.push(`${l.path.padEnd(pathWidth)}  ${l.value.padEnd(valueWidth)}  ${l.source}`);
  return `${out.join("\n")}\n`;
}

export function reportJson(resolved: ResolvedConfig): string {
  return `${JSON.stringify(
    {
      files: resolved.files,
      fileStates: resolved.fileStates,
      values: maskSecrets(resolved.merged.values, ""),
      sources: Object.fromEntries(resolved.merged.sources),
    },
    null,
    2,
  )}\n`;
}
