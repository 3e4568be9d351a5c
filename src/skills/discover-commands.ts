/**
 * Prompt templates ("slash commands"): `<name>.md` files in the workspace's
 * `.agentwire/commands/` and in the user's `$XDG_CONFIG_HOME/agentwire/commands/`
 * (or `~/.config/agentwire/commands/`), as Claude Code and OpenCode keep
 * them. A workspace command wins over a user command of the same name, as
 * skills do: the project knows its own conventions best.
 *
 * Read fresh on every call (commands.list, each message.append { command }),
 * like skills: a template edited while the server runs is used at once. The
 * same bounds and confinement as skills (readConfinedFile): files per
 * directory, bytes per file, name length; a file that breaks a rule is
 * reported in `problems`, never fatal.
 */
import { realpath } from "node:fs/promises";
import { join } from "node:path";
import { MAX_COMMAND_BYTES, MAX_COMMAND_FILES, type Command, type CommandsListResult } from "../../protocol/index.js";
import { COMMAND_NAME_PATTERN } from "../../protocol/limits/records.js";
import { agentwireDirectories, directoryEntries, readConfinedFile, type SkillLookup, type SkillSource } from "./discover-skills.js";
import { parseFrontMatter } from "./skill-front-matter.js";

const COMMAND_NAME = new RegExp(COMMAND_NAME_PATTERN);
const KEYS = new Set(["description", "argument-hint", "mode", "model"]);
/** Front matter values are shown in menus: keep each one short. */
const MAX_FIELD_CHARS = 1024;

/** A usable command with its template (the text after the front matter). */
export interface LoadedCommand extends Command {
  template: string;
}

export interface DiscoveredCommands extends CommandsListResult {
  commands: LoadedCommand[];
}

/** The two commands directories, workspace first. */
export function commandDirectories(lookup: SkillLookup): { source: SkillSource; dir: string }[] {
  return agentwireDirectories(lookup, "commands");
}

export async function discoverCommands(lookup: SkillLookup): Promise<DiscoveredCommands> {
  const commands = new Map<string, LoadedCommand>();
  const problems: CommandsListResult["problems"] = [];
  const workspaceReal = await realpath(lookup.workspace).catch(() => lookup.workspace);
  for await (const { source, dir, entries } of directoryEntries(commandDirectories(lookup), problems, lookup.signal)) {
    const files = entries
      .filter((e) => !e.name.startsWith(".") && e.name.endsWith(".md") && (e.isFile() || e.isSymbolicLink()))
      .map((e) => e.name)
      .sort();
    if (files.length > MAX_COMMAND_FILES) {
      problems.push({ path: dir, message: `holds ${files.length} .md files; only the first ${MAX_COMMAND_FILES} (by name) are read` });
    }
    for (const file of files.slice(0, MAX_COMMAND_FILES)) {
      lookup.signal?.throwIfAborted();
      const path = join(dir, file);
      const name = file.slice(0, -".md".length);
      if (!COMMAND_NAME.test(name)) {
        problems.push({ path, message: `the name "${name.slice(0, 80)}" is not 1–64 letters, digits, "-" or "_" (starting with a letter or digit)` });
        continue;
      }
      const read = await readConfinedFile(path, {
        insideOf: source === "workspace" ? workspaceReal : undefined,
        maxBytes: MAX_COMMAND_BYTES,
        label: file,
        signal: lookup.signal,
      });
      if (!read.ok) {
        problems.push({ path, message: read.problem ?? "is not a file" });
        continue;
      }
      const parsed = parseFrontMatter(read.text, KEYS);
      if (!parsed.ok) {
        problems.push({ path, message: parsed.problem });
        continue;
      }
      const long = [...parsed.values].find(([, value]) => value.length > MAX_FIELD_CHARS);
      if (long) {
        problems.push({ path, message: `${long[0]} is ${long[1].length} characters, over the ${MAX_FIELD_CHARS}-character limit` });
        continue;
      }
      const template = parsed.body.replace(/^(\r?\n)+/, "");
      if (template.trim() === "") {
        problems.push({ path, message: "the template is empty (nothing after the front matter)" });
        continue;
      }
      // The workspace directory is read first: its command keeps the name.
      if (commands.has(name)) continue;
      const value = (key: string) => parsed.values.get(key) || undefined;
      commands.set(name, {
        name,
        description: value("description") ?? "",
        ...optional("argumentHint", value("argument-hint")),
        ...optional("mode", value("mode")),
        ...optional("model", value("model")),
        path,
        source,
        template,
      });
    }
  }
  return { commands: [...commands.values()].sort((a, b) => a.name.localeCompare(b.name)), problems };
}

function optional<K extends string>(key: K, value: string | undefined): Partial<Record<K, string>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, string>);
}
