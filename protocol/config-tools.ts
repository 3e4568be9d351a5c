/**
 * Configuration of the tools: the built-in file tools (`tools.files`),
 * commands declared as tools (`tools.custom`) and the web tools
 * (`tools.web`). Part of agentwire.json (protocol/config.ts).
 */
import * as z from "zod";
import { ruleCheck } from "./schema-rule-check.js";
// Types .meta({ defaultText }) (see config-meta.ts).
import type {} from "./config-meta.js";
import { ToolKind } from "./tool-kind.js";
import { DEFAULT_SHELL_COMMAND, DEFAULT_TOOL_ENV_ALLOW, TOOL_ENV_ENTRY_PATTERN, TOOL_NAME_PATTERN, WEB_FETCH_DEFAULTS, WEB_SEARCH_DEFAULTS } from "./tool-defaults.js";

export { DEFAULT_SHELL_COMMAND, DEFAULT_TOOL_ENV_ALLOW, isToolEnvEntry, TOOL_ENV_ENTRY_PATTERN, TOOL_NAME_PATTERN, WEB_FETCH_DEFAULTS, WEB_SEARCH_DEFAULTS } from "./tool-defaults.js";

export const ToolEnvEntry = z
  .string()
  .regex(TOOL_ENV_ENTRY_PATTERN, "takes environment variable names or NAME* prefixes")
  .describe("A variable name (JAVA_HOME), or a prefix ending in * (NPM_CONFIG_*; * alone: every name).");

export const FileToolsConfig = z
  .strictObject({
    allowHardLinks: z
      .boolean()
      .default(false)
      .describe(
        "Let the file tools (and file attachments) read and replace regular files that have more than one hard link. " +
          "A hard link inside the workspace may be another name of a file outside it, which no path check can see, so by default such files are refused " +
          "(search_files skips them and says so). Turn on for trees built of hard links, such as pnpm's node_modules.",
      ),
  })
  .describe("The built-in file tools (read_file, list_files, search_files, write_file, edit_file), which never reach outside the workspace.");

export const ShellToolConfig = z
  .strictObject({
    command: z
      .array(z.string().min(1, "must not be empty").max(4096).check(ruleCheck("no NUL byte")))
      .min(1, "needs at least the program, e.g. [\"bash\", \"-c\"]")
      .max(16)
      .default([...DEFAULT_SHELL_COMMAND])
      .describe(
        "The program and its arguments that run a command line, which is passed as the last argument: e.g. [\"bash\", \"-lc\"] (a login shell, reading the profile), [\"zsh\", \"-c\"], [\"sh\", \"-c\"]. " +
          "Used by the shell tool and by every custom tool (tools.custom). The program is looked up on the tools' PATH; at most 16 parts.",
      ),
  })
  .describe("How the shell tool and custom tools run their command lines.");

export const CustomToolDefinition = z
  .strictObject({
    name: z
      .string()
      .regex(TOOL_NAME_PATTERN)
      .describe("Tool name as the model calls it: letters, digits, _ and -, at most 64."),
    description: z.string().min(1).describe("What the tool does, as told to the model."),
    parameters: z
      .record(z.string(), z.unknown())
      .optional()
      .describe(
        'JSON Schema of the arguments: an object schema ({"type": "object", "properties": {...}, "required": [...]}), offered to the model as it is and used to check its calls ' +
          "(types, required, enum, bounds, nested objects and arrays). Unknown arguments are refused unless it sets additionalProperties. " +
          "A schema that cannot be used stops the server at start naming the tool.",
      )
      .meta({ defaultText: 'no arguments ({"type": "object", "properties": {}})' }),
    command: z
      .string()
      .min(1)
      .describe(
        "The command line run for each call (through tools.shell.command, bash -c by default), in the workspace, like the shell tool (same output cap, time limit and kill on interrupt). " +
          "Arguments arrive as data, never spliced into this text: each top-level argument as the environment variable ARG_<NAME> " +
          '(upper-cased, characters other than letters, digits and _ as _; strings as they are, other values as JSON), and all of them as JSON in AGENTWIRE_ARGS. Quote them: "$ARG_PATH".',
      ),
    timeoutMs: z
      .number()
      .int()
      .min(100)
      .optional()
      .describe("Time limit of one call; the conversation's toolTimeoutMs caps it (the smaller one applies).")
      .meta({ defaultText: "the conversation's toolTimeoutMs" }),
    readOnly: z.boolean().optional().describe("The command changes nothing (readOnlyHint): the auto-read-only approval policy runs it without asking."),
    destructive: z.boolean().optional().describe("The command may destroy data (destructiveHint)."),
    kind: ToolKind.optional()
      .describe(
        "What kind of thing the command does, for clients to render its calls (tools.list, tool_pending, tool_executing): read, edit, delete, move, search, execute, think, fetch or other. Display only: it decides no approval.",
      )
      .meta({ defaultText: '"execute"' }),
  })
  .describe("A shell command offered to the model as a tool.");

export const WebFetchConfig = z
  .strictObject({
    enabled: z.boolean().describe("Offer web_fetch to the model."),
    maxBytes: z.number().int().min(1024).default(WEB_FETCH_DEFAULTS.maxBytes).describe("Largest response body read, in bytes."),
    timeoutMs: z
      .number()
      .int()
      .min(100)
      .default(WEB_FETCH_DEFAULTS.timeoutMs)
      .describe("Time limit of one fetch, redirects included (the conversation's toolTimeoutMs caps it)."),
    maxOutputBytes: z
      .number()
      .int()
      .min(1024)
      .default(WEB_FETCH_DEFAULTS.maxOutputBytes)
      .describe("Most text returned to the model, in bytes (the start is kept, with a note saying how much was cut)."),
  })
  .describe("web_fetch: GET an http(s) URL and return its readable text (HTML as markdown).");

export const WebSearchConfig = z
  .strictObject({
    enabled: z.boolean().describe("Offer web_search to the model."),
    backend: z.enum(["searxng", "brave"]).describe("searxng: a SearXNG instance's JSON API (self-hosted); brave: the Brave Search API."),
    url: z
      .string()
      .url()
      .optional()
      .describe("Endpoint: the SearXNG instance's base URL (required for searxng); for brave, default https://api.search.brave.com/res/v1/web/search."),
    apiKey: z.string().min(1).optional().describe("API key (brave; sent as X-Subscription-Token). Secret: prefer apiKeyEnv. The brave backend refuses to start without a key."),
    apiKeyEnv: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
      .optional()
      .describe("Name of the environment variable holding the API key, read at start (apiKey wins when both are set)."),
    maxResults: z.number().int().min(1).max(50).default(WEB_SEARCH_DEFAULTS.maxResults).describe("Results returned per search."),
    timeoutMs: z
      .number()
      .int()
      .min(100)
      .default(WEB_SEARCH_DEFAULTS.timeoutMs)
      .describe("Time limit of one search (the conversation's toolTimeoutMs caps it)."),
  })
  .describe("web_search: title / url / snippet results from a search backend.");

export const AllowPrivateNetwork = z
  .union([z.boolean(), z.array(z.string().min(1))])
  .default(false)
  .describe(
    "Lets web_fetch reach addresses that are not public: loopback (127.0.0.0/8, ::1, localhost), private (10/8, 172.16/12, 192.168/16, fc00::/7), " +
      "link-local (169.254/16 with cloud metadata, fe80::/10), carrier-grade NAT (100.64/10), unspecified (0.0.0.0, ::), multicast, broadcast and reserved ranges. " +
      "false: they are refused, checked on the address each request and each redirect actually connects to (so DNS cannot lead around it). " +
      'true allows them all; a list allows only what it names: an address ("127.0.0.1", "::1"), a CIDR range ("10.0.0.0/8", "fd00::/8") ' +
      'or a host name as URLs spell it ("localhost", "wiki.internal": every address it resolves to), the address or name optionally with :PORT ' +
      '("127.0.0.1:8080", "[::1]:8080", "localhost:11434") to allow that port only. ' +
      "While any is allowed, web_fetch is not read-only: under the auto-read-only approval policy it asks before each fetch (toolPolicy can say always). " +
      "web_search is not affected: its backend URL is your own setting.",
  );

export const WebToolsConfig = z
  .strictObject({ fetch: WebFetchConfig.optional(), search: WebSearchConfig.optional(), allowPrivateNetwork: AllowPrivateNetwork })
  .describe("The web tools; both are off unless enabled here.");

/** As the configuration file and tests write them (defaults may be left out). */
export type FileToolsConfig = z.input<typeof FileToolsConfig>;
export type CustomToolDefinition = z.infer<typeof CustomToolDefinition>;
export type ShellToolConfig = z.input<typeof ShellToolConfig>;
export type WebFetchConfig = z.input<typeof WebFetchConfig>;
export type WebSearchConfig = z.input<typeof WebSearchConfig>;
export type WebToolsConfig = z.input<typeof WebToolsConfig>;
