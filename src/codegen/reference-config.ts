/**
 * docs/reference/config.md: every key of agentwire.json with its type,
 * default, command-line flag, environment variable and description. Keys,
 * types and descriptions come from the JSON Schema of the config file
 * (config-schema.ts, from protocol/config*.ts); flags from the CLI's own
 * table (CONFIG_KEY_FLAGS) and variables from the resolver's
 * (CONFIG_ENV_VARS), so the page says what the code does. A default is the
 * schema's `default` when the key declares one, else what its description
 * states (prose-defaults.ts).
 */
import { CONFIG_KEY_FLAGS } from "../cli-options.js";
import { CONFIG_ENV_VARS } from "../config/resolve-config.js";
import { buildConfigSchema } from "./config-schema.js";
import type { JsonSchema } from "./json-schema.js";
import { cell, code, pageTop, prose, Slugger, table } from "./markdown.js";
import { proseDefault } from "./prose-defaults.js";
import { descriptionCell, type FieldRow, fieldRows, typeText } from "./schema-fields.js";

export const CONFIG_REFERENCE_PATH = "docs/reference/config.md";

export interface ConfigKeyRow extends FieldRow {
  /** The default as markdown, "" when the key has none. */
  default: string;
  /** Where the default was read: the schema's `default`, or the description's words. */
  defaultFrom?: "schema" | "prose";
  flags: string[];
  env: string[];
}

export interface ConfigGroup {
  /** The top-level key, or undefined for the keys that hold a value themselves (model, defaultProvider…). */
  key?: string;
  description: string;
  rows: ConfigKeyRow[];
}

/** Path → every name that sets it, in the table's order. */
function invert(table: Readonly<Record<string, string>>, where: string, paths: ReadonlySet<string>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [name, path] of Object.entries(table)) {
    if (!paths.has(path)) throw new Error(`codegen: ${where} ${name} sets ${path}, which agentwire.json does not have`);
    out.set(path, [...(out.get(path) ?? []), name]);
  }
  return out;
}

function withDefault(row: FieldRow): Pick<ConfigKeyRow, "default" | "defaultFrom"> {
  if ("default" in row.schema) return { default: code(JSON.stringify(row.schema.default)), defaultFrom: "schema" };
  const stated = proseDefault(row.description);
  if (!stated) return { default: "" };
  return { default: stated.kind === "value" ? code(stated.text) : cell(stated.text), defaultFrom: "prose" };
}

/** The keys of agentwire.json by top-level group: first the keys that are values, then one group per section (server, limits, …). */
export function configGroups(schema: JsonSchema = buildConfigSchema()): ConfigGroup[] {
  const rows = fieldRows(schema);
  const paths = new Set(rows.map((r) => r.path));
  const flags = invert(Object.fromEntries(Object.entries(CONFIG_KEY_FLAGS).map(([f, p]) => [`--${f}`, p])), "flag", paths);
  const env = invert(CONFIG_ENV_VARS, "environment variable", paths);
  const keyRows: ConfigKeyRow[] = rows.map((row) => ({
    ...row,
    ...withDefault(row),
    flags: flags.get(row.path) ?? [],
    env: env.get(row.path) ?? [],
  }));

  const topLevel: ConfigGroup = { description: "Keys at the top of the file.", rows: [] };
  const sections: ConfigGroup[] = [];
  for (const row of keyRows.filter((r) => !r.path.includes("."))) {
    const inside = keyRows.filter((r) => r.path.startsWith(`${row.path}.`));
    if (inside.length === 0) topLevel.rows.push(row);
    else sections.push({ key: row.path, description: row.description, rows: inside });
  }
  return [...(topLevel.rows.length > 0 ? [topLevel] : []), ...sections];
}

export function renderConfigReference(): string {
  const schema = buildConfigSchema();
  const groups = configGroups(schema);
  const slugger = new Slugger();
  slugger.slug("Configuration reference");
  slugger.slug("Contents");
  const headings = groups.map((g) => (g.key === undefined ? "Top level" : `\`${g.key}\``));
  const anchors = headings.map((h) => slugger.slug(h));

  const out: string[] = [
    ...pageTop(
      "Configuration reference",
      "`protocol/config*.ts` (keys, types, descriptions), the CLI's flag table (`src/cli-options.ts`) and the environment " +
        "variables it reads (`src/config/resolve-config.ts`).",
    ),
    "",
    `${prose(String(schema.description ?? ""))} Editors complete and check the file from its JSON Schema, ` +
      "[`protocol/config.schema.json`](../../protocol/config.schema.json). `agentwire config` prints the effective " +
      "configuration and where each value came from.",
    "",
    "**Default** is what applies when nothing sets the key (blank: unset). **Flag** (of `agentwire serve` and " +
      "`agentwire config`) and **Environment** set the same key; flags win over the environment, which wins over files. " +
      "In a path, `<provider>`-style parts stand for a name you choose and `[]` for each element of a list.",
    "",
    "## Contents",
    "",
    ...groups.map((g, i) => `- [${headings[i]}](#${anchors[i]}) — ${g.rows.length} key${g.rows.length === 1 ? "" : "s"}`),
  ];
  groups.forEach((group, i) => {
    out.push("", `## ${headings[i]}`, "", prose(group.description), "");
    out.push(
      table(
        ["Key", "Type", "Default", "Flag", "Environment", "Description"],
        group.rows.map((row) => [
          code(row.path),
          `${typeText(row.schema)}${row.required ? ", required" : ""}`,
          row.default,
          row.flags.map(code).join(", "),
          row.env.map(code).join(", "),
          descriptionCell(row),
        ]),
      ),
    );
  });
  return `${out.join("\n")}\n`;
}
