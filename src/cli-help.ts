/**
 * Help text the commands share (src/cli-program.ts lays out each command's
 * help with commander). The options that set a configuration key and the
 * environment variables come from the config schema (each key's flag,
 * variable, default and the first sentence of its description), so the help
 * says what the schema says; the configuration-file notes are written here.
 */
import { type ConfigKey, configKeys, flagName } from "./config/config-keys.js";

/**
 * The first sentence of a description, without its full stop: up to a stop
 * outside brackets that ends the text or is followed by a space and a
 * capital ("e.g. http://…" goes on).
 */
export function firstSentence(text: string): string {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "(" || c === "[" || c === "{") depth++;
    else if (c === ")" || c === "]" || c === "}") depth = Math.max(0, depth - 1);
    else if (c === "." && depth === 0 && (i + 1 === text.length || /^\s+[A-Z]/.test(text.slice(i + 1)))) return text.slice(0, i);
  }
  return text.replace(/\.$/, "");
}

/** A description's first sentence as a help line: lower-cased like the rest of the help, unless its first word is a name ("OpenAI-compatible"). */
function summary(description: string): string {
  const text = firstSentence(description);
  return /^[A-Z][a-z]*\b(?![-'])/.test(text) ? `${text[0]!.toLowerCase()}${text.slice(1)}` : text;
}

/** A default as the help shows it: strings bare, nothing for an empty list or map. */
function defaultWords(key: ConfigKey): string | undefined {
  if (key.defaultText !== undefined) return key.defaultText;
  if (!("default" in key)) return undefined;
  const value = key.default;
  if (Array.isArray(value) && value.length === 0) return undefined;
  if (typeof value === "object" && value !== null && Object.keys(value).length === 0) return undefined;
  const shown = typeof value === "string" ? value : JSON.stringify(value);
  return key.defaultNote ? `${shown} ${key.defaultNote}` : shown;
}

/** An option's help line for a configuration key: the schema's first sentence, its choices and its default. */
export function optionDescription(key: ConfigKey): string {
  const notes: string[] = [];
  if (key.value.kind === "enum") notes.push(key.value.options.join(" | "));
  if (key.value.kind === "list") notes.push("repeatable, or comma-separated");
  const fallback = defaultWords(key);
  if (fallback !== undefined) notes.push(`default ${fallback}`);
  return `${summary(key.description)}${notes.length > 0 ? ` (${notes.join("; ")})` : ""}`;
}

/** Where the help wraps, as commander's (src/cli-program.ts). */
export const HELP_WIDTH = 80;

/** `text` in lines of at most `width` characters (a longer word stands alone). */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line !== "" && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line === "" ? word : `${line} ${word}`;
    }
  }
  return [...lines, line];
}

/** `  LABEL  text`, the label column as wide as the widest label, the text wrapped beside it, for the sections commander does not lay out. */
function table(rows: [string, string][]): string {
  const width = Math.max(...rows.map(([label]) => label.length));
  const indent = " ".repeat(width + 4);
  return rows
    .map(([label, text]) => {
      const [first, ...rest] = wrap(text, HELP_WIDTH - width - 4);
      return [`  ${label.padEnd(width)}  ${first}`, ...rest.map((l) => `${indent}${l}`)].join("\n");
    })
    .join("\n");
}

/** Every variable that sets a configuration key, from the schema. */
export function environmentHelp(): string {
  const rows = configKeys()
    .filter((k) => k.env)
    .map((key): [string, string] => {
      const flag = flagName(key);
      const notes = [`${key.path}${key.value.kind === "list" ? ", comma-separated" : ""}`, ...(flag ? [`${flag} wins`] : [])];
      return [key.env!, `${summary(key.description)} (${notes.join("; ")})`];
    });
  return `Environment:\n${table(rows)}`;
}

/** The client commands' variables (and a command's own, such as chat's EDITOR). */
export function clientEnvironmentHelp(own: [string, string][] = []): string {
  return `Environment:
${table([["AGENTWIRE_URL", "a running server, as --url"], ["AGENTWIRE_TOKEN", "its token, as --token-file"], ...own])}
  Without --url, a server is started inside the command on a free loopback
  port, configured as serve would be: configuration files, environment, the
  flags under "Embedded server" and every other serve flag that sets a
  configuration key (agentwire help serve lists them).`;
}

export const CONFIG_FILES_HELP = `Configuration files:
  agentwire.json (JSON with comments) in the working directory and each parent,
  and $XDG_CONFIG_HOME/agentwire/agentwire.json (default ~/.config/agentwire/).
  Precedence, lowest first: defaults < user file < parent files < nearest file
  < --config FILE < environment < flags. Objects merge by key; a list set by a
  later layer replaces the earlier one. Schema: agentwire config --schema
  prints its path; every key: docs/reference/config.md.
  A bad file stops the server, naming the file, the key and the problem.
  The walk up from the working directory stops at your home directory and
  before any directory that is not yours or that others can write (such as
  /tmp); a file there is not read. A project file (any but the user file and
  --config FILE) applies its keys that run commands or send credentials (MCP
  servers, custom tools, endpoints, API keys and key names, approval settings;
  the README lists them all) only once you have run agentwire trust on it;
  until then the server starts without them and says which. Trust is kept in
  $XDG_DATA_HOME/agentwire/ (default ~/.local/share/). agentwire config shows
  how each file was taken.`;

/** Examples under a command's help: `$ agentwire …` lines, each with what it does (commander adds the last newline). */
export function examples(rows: [string, string][]): string {
  return `\nExamples:\n${rows.map(([command, what]) => `  $ agentwire ${command}\n      ${what}`).join("\n")}`;
}
