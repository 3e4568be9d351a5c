/**
 * Which configuration keys need the user's trust in a project file, and
 * which hold secrets. Plain data, no zod: the configuration's discovery reads
 * it on every start. Re-exported by protocol/config.ts.
 */
/** What a trust-gated key does that makes it need the user's say-so. */
export type TrustReason = "runs commands" | "sends credentials";

/**
 * Keys (dot-separated paths; each covers everything under it) that a project
 * agentwire.json — one found in the working directory or a parent, not the
 * user file and not `--config FILE` — may set only once the user has trusted
 * that file as it is (`agentwire trust DIR`). A cloned repository must not be
 * able to start a program, make tool calls run unasked, or send the user's
 * keys (or conversations) to an address it chooses. An untrusted file's
 * other keys apply; these are skipped with a config_untrusted notice.
 *
 * The one list: discovery, `agentwire config`, `agentwire trust` and the
 * notices all read it.
 */
export const TRUST_REQUIRED_CONFIG_PATHS: readonly { path: string; reason: TrustReason; what: string }[] = [
  { path: "mcpServers", reason: "runs commands", what: "starts MCP server programs (and sends headers to MCP URLs)" },
  { path: "tools.custom", reason: "runs commands", what: "offers shell commands to the model as tools" },
  { path: "tools.shell", reason: "runs commands", what: "chooses the program every shell command line runs through" },
  { path: "conversations.settings.approval", reason: "runs commands", what: "can let tool calls run without asking" },
  { path: "conversations.settings.toolPolicy", reason: "runs commands", what: "can let tools run without asking" },
  { path: "conversations.settings.approvalRules", reason: "runs commands", what: "can let tool calls run without asking" },
  { path: "conversations.settings.mode", reason: "runs commands", what: "can start conversations in a mode whose tool calls run without asking (auto)" },
  { path: "modes", reason: "runs commands", what: "can define modes whose tool calls run without asking" },
  { path: "server.host", reason: "runs commands", what: "can open the agent (and its shell) to other machines" },
  { path: "server.token", reason: "runs commands", what: "sets the token that lets a client in (a token the file's author knows)" },
  { path: "server.allowOrigins", reason: "runs commands", what: "lets web pages of other origins drive the agent" },
  { path: "tools.web.allowPrivateNetwork", reason: "runs commands", what: "lets web_fetch reach this machine's and the local network's services" },
  { path: "server.redis", reason: "runs commands", what: "takes forwarded requests and events from a Redis server" },
  { path: "server.store", reason: "sends credentials", what: "sends conversations (and PGPASSWORD) to a database server" },
  { path: "llm.baseUrl", reason: "sends credentials", what: "sends the API key (OPENAI_API_KEY) and conversations to this endpoint" },
  { path: "llm.apiKey", reason: "sends credentials", what: "sends conversations to another account's key" },
  { path: "llm.apiKeyEnv", reason: "sends credentials", what: "sends the environment variable it names as an API key" },
  { path: "runtimes", reason: "runs commands", what: "starts agent runtimes (Codex) that run commands of their own" },
  { path: "providers", reason: "sends credentials", what: "sends API keys, headers and conversations to the endpoints it declares" },
  { path: "defaultProvider", reason: "sends credentials", what: "chooses which endpoint gets the requests" },
  { path: "tools.envAllow", reason: "sends credentials", what: "lets tools (and so the model) read environment variables" },
  { path: "tools.web.search", reason: "sends credentials", what: "sends a search API key to a search endpoint" },
];

/** Paths (dot-separated) whose values are secrets: `agentwire config` masks them. */
/** `*` stands for one key: an MCP server's env and header names show, their values do not. */
export const SECRET_CONFIG_PATHS: readonly string[] = [
  "server.token",
  "llm.apiKey",
  "tools.web.search.apiKey",
  "mcpServers.*.env.*",
  "mcpServers.*.headers.*",
  "providers.*.apiKey",
  "providers.*.headers.*",
];

/** Paths whose values are URLs that may carry a password: `agentwire config` shows them with the password masked. */
export const SECRET_URL_CONFIG_PATHS: readonly string[] = ["server.store", "server.redis"];
