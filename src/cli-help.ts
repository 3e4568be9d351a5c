/**
 * `agentwire --help`. The options that set a configuration key and the
 * environment variables come from the config schema (each key's flag,
 * variable, default and the first sentence of its description), so the help
 * says what the schema says; the commands, the client options and the
 * configuration-file notes are written here.
 */
import { type ConfigKey, configKeys, flagName } from "./config/config-keys.js";
import { SERVER_VERSION } from "./server-version.js";

const WIDTH = 80;
/** Where descriptions start: two spaces, the flag column, two spaces. */
const INDENT = 25;

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

/** `text` wrapped to WIDTH, every line but the first indented by INDENT. */
function wrap(text: string): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line !== "" && INDENT + line.length + 1 + word.length > WIDTH) {
      lines.push(line);
      line = word;
    } else {
      line = line === "" ? word : `${line} ${word}`;
    }
  }
  lines.push(line);
  return lines;
}

/** One entry: `label` in the first column, `text` wrapped beside it (below it when the label is too wide). */
export function helpEntry(label: string, text: string): string {
  const [first, ...rest] = wrap(text);
  const pad = " ".repeat(INDENT);
  const head = label.length <= INDENT - 4 ? `  ${label.padEnd(INDENT - 2)}${first}` : `  ${label}\n${pad}${first}`;
  return [head, ...rest.map((l) => `${pad}${l}`)].join("\n");
}

function optionLine(key: ConfigKey): string {
  const notes: string[] = [];
  if (key.value.kind === "enum") notes.push(key.value.options.join(" | "));
  if (key.value.kind === "list") notes.push("repeatable, or comma-separated");
  const fallback = defaultWords(key);
  if (fallback !== undefined) notes.push(`default ${fallback}`);
  return helpEntry(key.flag!, `${summary(key.description)}${notes.length > 0 ? ` (${notes.join("; ")})` : ""}`);
}

function environmentLine(key: ConfigKey): string {
  const flag = flagName(key);
  const notes = [`${key.path}${key.value.kind === "list" ? ", comma-separated" : ""}`, ...(flag ? [`${flag} wins`] : [])];
  return helpEntry(key.env!, `${summary(key.description)} (${notes.join("; ")})`);
}

function buildHelp(): string {
  const keys = configKeys();
  const options = keys.filter((k) => k.flag).map(optionLine);
  const environment = keys.filter((k) => k.env).map(environmentLine);
  return `agentwire ${SERVER_VERSION} — agent protocol server (JSON-RPC 2.0 over one WebSocket)

Usage:
  agentwire serve [options]     start the server
  agentwire config [options]    print the effective configuration and where each
                                value came from (secrets masked); --json for JSON
  agentwire chat [PROMPT] [chat options]
                                talk to an agent from the terminal or a script
  agentwire conversations list | show ID | rm ID | export ID [--format json|markdown]
                                list, print, delete or export stored conversations
  agentwire trust [DIR]         trust DIR's agentwire.json (default: the working
                                directory's) as it is now, so that what it sets that
                                runs commands or sends credentials applies (see
                                Configuration files); a later change asks again
  agentwire trust --list | --revoke [DIR]
                                list the trusted files, or stop trusting one
  agentwire --help | --version

Options (each can also be set in agentwire.json; see Configuration files):
${options.join("\n")}
  --token-file FILE      require the token in FILE (read once, whitespace
                         trimmed); prefer it to --token, which every local user
                         can read (ps) until the server has started
  --config FILE          read FILE after the configuration files found (below)
  -h, --help             show this help
  -v, --version          print the version

Chat and conversations options:
  --url URL              a running server (ws://HOST:PORT; else AGENTWIRE_URL). Without
                         one: the server running here that holds the data dir, else one
                         started inside the command on a free loopback port, configured
                         as serve would be (--data-dir, --config, configuration files,
                         environment).
  --token-file FILE      the server's token, read from FILE (else AGENTWIRE_TOKEN;
                         --token TOKEN works too, but shows it to ps)
  --data-dir DIR, --store STORE, --config FILE, --log-level LEVEL (default error)
                         for the embedded server, as for serve
  --json                 chat: every notification and result as one JSON object per
                         line on stdout; conversations: JSON output
  --conversation ID      continue this conversation (default: a new one, whose
                         workspace is the current directory)
  --model MODEL          model for this conversation / step
  --attach PATH[:START-END]
                         attach a workspace file, or lines START to END of it
                         (repeatable)
  -y, --yes              run every tool call without asking
  --auto N               run the first N tool calls of each step without asking,
                         then ask (or skip, without a terminal)
  --deny                 skip every tool call
  --format json|markdown conversations export: the output format (default json)
  --limit N              conversations list: at most N (default all)
  PROMPT comes from the arguments, else from stdin when it is not a terminal. On a
  terminal, chat streams the answer, asks about each tool call ([y]es, [n]o = skip,
  [e]dit the arguments in $EDITOR, [a]uto N), and then reads the next message
  (Ctrl-D ends). Ctrl-C interrupts the generation; a second Ctrl-C exits. Without
  a terminal and without --yes/--auto/--deny, tool calls are skipped.
  Exit status: 0 the generation completed, 1 an error (model, connection,
  request), 2 bad usage, 130 interrupted.

Environment:
${environment.join("\n")}
  AGENTWIRE_URL          chat, conversations: same as --url
  EDITOR, VISUAL         chat: the editor for [e]dit (default vi)
  NO_COLOR               chat: no colours (also off when the output is not a terminal)

Configuration files:
  agentwire.json (JSON with comments) in the working directory and each parent,
  and $XDG_CONFIG_HOME/agentwire/agentwire.json (default ~/.config/agentwire/).
  Precedence, lowest first: defaults < user file < parent files < nearest file
  < --config FILE < environment < flags. Objects merge by key; a list set by a
  later layer replaces the earlier one. Schema: protocol/config.schema.json;
  every key: docs/reference/config.md.
  A bad file stops the server, naming the file, the key and the problem.
  The walk up from the working directory stops at your home directory and
  before any directory that is not yours or that others can write (such as
  /tmp); a file there is not read. A project file (any but the user file and
  --config FILE) applies its keys that run commands or send credentials (MCP
  servers, custom tools, endpoints, API keys and key names, approval settings;
  the README lists them all) only once you have run agentwire trust on it;
  until then the server starts without them and says which. Trust is kept in
  $XDG_DATA_HOME/agentwire/ (default ~/.local/share/). agentwire config shows
  how each file was taken.
`;
}

export const HELP = buildHelp();
