/**
 * The front matter of a SKILL.md: the lines between a leading `---` and the
 * next `---`. Only `name` and `description` are read, by hand — a YAML
 * library for two keys would be a dependency for nothing. What is
 * understood: `key: value`, values in single or double quotes, and a value
 * continued on indented lines (also after `>` or `|`), joined with spaces.
 * Other keys are ignored.
 */

export type FrontMatter = { ok: true; name: string; description: string } | { ok: false; problem: string };

const WANTED = new Set(["name", "description"]);

export function parseSkillFrontMatter(text: string): FrontMatter {
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  if (lines[0]?.trim() !== "---") return { ok: false, problem: "SKILL.md does not start with front matter (a --- line)" };
  const end = lines.findIndex((line, i) => i > 0 && line.trim() === "---");
  if (end < 0) return { ok: false, problem: "the front matter is not closed (no second --- line)" };

  const values = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const line of lines.slice(1, end)) {
    if (/^\s/.test(line)) {
      // Continuation of the previous key's value (folded YAML-style).
      if (current && line.trim() !== "") current.push(line.trim());
      continue;
    }
    current = undefined;
    const match = /^([A-Za-z0-9_-]+)\s*:(.*)$/.exec(line);
    if (!match || !WANTED.has(match[1])) continue;
    const first = match[2].trim();
    current = [];
    if (first !== "" && !/^[>|][+-]?$/.test(first)) current.push(first);
    values.set(match[1], current);
  }

  const read = (key: string) => unquote((values.get(key) ?? []).join(" ").trim());
  const name = read("name");
  const description = read("description");
  if (!name) return { ok: false, problem: "the front matter has no name" };
  if (!description) return { ok: false, problem: "the front matter has no description" };
  return { ok: true, name, description };
}

function unquote(value: string): string {
  if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) {
    return value.slice(1, -1).replace(/\\(["\\])/g, "$1");
  }
  if (value.length >= 2 && value.startsWith("'") && value.endsWith("'")) return value.slice(1, -1).replace(/''/g, "'");
  return value;
}
