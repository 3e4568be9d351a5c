/**
 * Front matter: the lines between a leading `---` and the next `---`, as
 * SKILL.md and command templates (`.agentwire/commands/<name>.md`) carry it.
 * Only the keys a caller asks for are read, by hand — a YAML library for a
 * few keys would be a dependency for nothing. What is understood:
 * `key: value`, values in single or double quotes, and a value continued on
 * indented lines (also after `>` or `|`), joined with spaces. Other keys are
 * ignored.
 */

export type FrontMatter = { ok: true; name: string; description: string } | { ok: false; problem: string };

/** The wanted keys' values (absent keys absent) and the text after the front matter; `present` false when the text has none. */
export type ParsedFrontMatter =
  | { ok: true; present: boolean; values: Map<string, string>; body: string }
  | { ok: false; problem: string };

const SKILL_KEYS = new Set(["name", "description"]);

export function parseSkillFrontMatter(text: string): FrontMatter {
  const parsed = parseFrontMatter(text, SKILL_KEYS);
  if (!parsed.ok) return parsed;
  if (!parsed.present) return { ok: false, problem: "SKILL.md does not start with front matter (a --- line)" };
  const name = parsed.values.get("name") ?? "";
  const description = parsed.values.get("description") ?? "";
  if (!name) return { ok: false, problem: "the front matter has no name" };
  if (!description) return { ok: false, problem: "the front matter has no description" };
  return { ok: true, name, description };
}

/** Reads the `wanted` keys of a leading front matter block; a text without one is `present: false` with the whole text as body. */
export function parseFrontMatter(text: string, wanted: ReadonlySet<string>): ParsedFrontMatter {
  const unbommed = text.replace(/^\uFEFF/, "");
  const lines = unbommed.split(/\r?\n/);
  if (lines[0]?.trim() !== "---") return { ok: true, present: false, values: new Map(), body: unbommed };
  const end = lines.findIndex((line, i) => i > 0 && line.trim() === "---");
  if (end < 0) return { ok: false, problem: "the front matter is not closed (no second --- line)" };

  const raw = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const line of lines.slice(1, end)) {
    if (/^\s/.test(line)) {
      // Continuation of the previous key's value (folded YAML-style).
      if (current && line.trim() !== "") current.push(line.trim());
      continue;
    }
    current = undefined;
    const match = /^([A-Za-z0-9_-]+)\s*:(.*)$/.exec(line);
    if (!match || !wanted.has(match[1])) continue;
    const first = match[2].trim();
    current = [];
    if (first !== "" && !/^[>|][+-]?$/.test(first)) current.push(first);
    raw.set(match[1], current);
  }
  const values = new Map<string, string>();
  for (const [key, parts] of raw) values.set(key, unquote(parts.join(" ").trim()));
  const eol = /\r\n/.test(unbommed) ? "\r\n" : "\n";
  return { ok: true, present: true, values, body: lines.slice(end + 1).join(eol) };
}

function unquote(value: string): string {
  if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) {
    return value.slice(1, -1).replace(/\\(["\\])/g, "$1");
  }
  if (value.length >= 2 && value.startsWith("'") && value.endsWith("'")) return value.slice(1, -1).replace(/''/g, "'");
  return value;
}
