/**
 * One key of agentwire.json as plain data: its path, description, default,
 * flag and environment variable, and what a flag or variable of it takes.
 * config-table.ts holds agentwire.json's keys in this form (generated from
 * the zod schema by config-key-walk.ts), so nothing on the start path builds
 * the schema to list them.
 */
import type { ConfigKeyMeta } from "../../protocol/config-meta.js";
import type { SchemaNode } from "../../protocol/schema-data.js";

/** What a flag or an environment variable takes, from the key's type. */
export type ConfigValueKind =
  | { kind: "integer"; min?: number; max?: number }
  | { kind: "string" }
  | { kind: "enum"; options: readonly string[] }
  /** Repeatable flag, comma-separated value; each element checked by `element`. */
  | { kind: "list"; element: SchemaNode }
  | { kind: "other" };

export interface ConfigKey extends ConfigKeyMeta {
  /** Dotted path in agentwire.json: `limits.maxBatch`. */
  path: string;
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
