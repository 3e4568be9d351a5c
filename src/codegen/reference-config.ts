/**
 * docs/reference/config.md: every key of agentwire.json with its type,
 * default, command-line flag, environment variable and description, all
 * read from the JSON Schema of the config file (config-schema.ts, from
 * protocol/config*.ts): the default from the key's `.default()` (or its
 * `defaultText` in words), the flag and the variable from its `.meta()` —
 * the same declarations the CLI and the resolver read, so the page says
 * what the code does.
 */
import { buildConfigSchema } from "./config-schema.js";
import type { JsonSchema } from "./json-schema.js";
import { cell, code, pageTop, prose, Slugger, table } from "./markdown.js";
import { descriptionCell, type FieldRow, fieldRows, typeText } from "./schema-fields.js";

export const CONFIG_REFERENCE_PATH = "docs/reference/config.md";

export interface ConfigKeyRow extends FieldRow {
  /** The default as markdown, "" when the key has none. */
  default: string;
  /** The flag with its argument (`--port PORT`), or undefined. */
  flag?: string;
  env?: string;
}

export interface ConfigGroup {
  /** The top-level key, or undefined for the keys that hold a value themselves (model, defaultProvider…). */
  key?: string;
  description: string;
  rows: ConfigKeyRow[];
}

const text = (schema: JsonSchema, key: string) => (typeof schema[key] === "string" ? (schema[key] as string) : undefined);

/** The default cell: words when the key gives them, else the value (with its note); blank for a section, whose keys show theirs. */
function defaultCell(schema: JsonSchema): string {
  const words = text(schema, "defaultText");
  if (words !== undefined) return cell(words);
  if (!("default" in schema)) return "";
  const isSection = schema.properties !== undefined && JSON.stringify(schema.default) === "{}";
  if (isSection) return "";
  const note = text(schema, "defaultNote");
  return `${code(JSON.stringify(schema.default))}${note ? ` ${cell(note)}` : ""}`;
}

/** The keys of agentwire.json by top-level group: first the keys that are values, then one group per section (server, limits, …). */
export function configGroups(schema: JsonSchema = buildConfigSchema()): ConfigGroup[] {
  const keyRows: ConfigKeyRow[] = fieldRows(schema).map((row) => ({
    ...row,
    default: defaultCell(row.schema),
    ...(text(row.schema, "flag") ? { flag: text(row.schema, "flag") } : {}),
    ...(text(row.schema, "env") ? { env: text(row.schema, "env") } : {}),
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
      "`protocol/config*.ts`: each key's type, default, description, and in its `.meta()` the flag and the environment variable that set it.",
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
          row.flag ? code(row.flag) : "",
          row.env ? code(row.env) : "",
          descriptionCell(row),
        ]),
      ),
    );
  });
  return `${out.join("\n")}\n`;
}
