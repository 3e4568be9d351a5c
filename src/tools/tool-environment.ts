/**
 * The environment a tool process gets. The server's own environment holds
 * its secrets (OPENAI_API_KEY, AGENTWIRE_TOKEN, whatever else the operator
 * exported), and a model can print any variable a tool inherits (`env`), so
 * tools get an allow-list, never the server's environment minus a deny-list:
 * a secret nobody thought of stays out by default.
 *
 * The list is the harmless defaults below plus the operator's extra entries
 * (`--tool-env`, `AGENTWIRE_TOOL_ENV`, `ServerConfig.toolEnvAllow`). An entry
 * is an exact name (`JAVA_HOME`) or a prefix ending in `*` (`NPM_CONFIG_*`;
 * `*` alone means every name). The two kinds differ on purpose:
 *
 * - An exact name always passes — the operator named it, even a secret.
 * - A wildcard never passes a variable that looks like a credential: a name
 *   containing KEY, TOKEN, SECRET, PASS, AUTH, CREDENTIAL, COOKIE, SESSION,
 *   PRIVATE, DSN or CONNECTION_STRING, any name of the server's own
 *   configuration (AGENTWIRE_*, OPENAI_*), or a value holding a URL with a
 *   password (`postgres://user:pw@host`). `--tool-env '*'` therefore still
 *   keeps OPENAI_API_KEY and AGENTWIRE_TOKEN out; name them to pass them.
 */

/**
 * Passed unless the operator says otherwise: what programs need to find
 * themselves, the user and the locale. No proxies (their URLs may carry a
 * password), no agent sockets (SSH_AUTH_SOCK would lend the user's keys),
 * no toolchain paths (add them with --tool-env). bash sets PWD, SHLVL and
 * `_` itself.
 */
export const DEFAULT_TOOL_ENV_ALLOW: readonly string[] = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "LANG",
  "LANGUAGE",
  "LC_*",
  "TERM",
  "TZ",
  "TMPDIR",
];

const ENTRY = /^([A-Za-z_][A-Za-z0-9_]*\*?|\*)$/;
const SERVER_OWN = /^(AGENTWIRE_|OPENAI_)/i;
const SECRET_NAME = /KEY|TOKEN|SECRET|PASS|AUTH|CREDENTIAL|COOKIE|SESSION|PRIVATE|DSN|CONNECTION_STRING/i;
const URL_WITH_PASSWORD = /[a-z][a-z0-9+.-]*:\/\/[^\s/@:]*:[^\s/@]*@/i;

/** True for a valid allow-list entry: a variable name, optionally ending in `*`, or `*` alone. */
export function isToolEnvEntry(entry: string): boolean {
  return ENTRY.test(entry);
}

/** The entries of a comma-separated list (`"A, B_*"` → `["A", "B_*"]`), blanks dropped. */
export function splitToolEnvList(text: string): string[] {
  return text
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
}

/**
 * The variables of `parent` that a tool may see: the defaults plus `extraAllow`.
 * Throws on an entry that is not a name or a prefix (callers validate user input first).
 */
export function toolEnvironment(parent: NodeJS.ProcessEnv, extraAllow: readonly string[] = []): Record<string, string> {
  const exact = new Set<string>();
  const prefixes: string[] = [];
  for (const entry of [...DEFAULT_TOOL_ENV_ALLOW, ...extraAllow]) {
    if (!isToolEnvEntry(entry)) throw new Error(`not an environment variable name or NAME* prefix: ${JSON.stringify(entry)}`);
    if (entry.endsWith("*")) prefixes.push(entry.slice(0, -1));
    else exact.add(entry);
  }
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(parent)) {
    if (value === undefined) continue;
    const allowed = exact.has(name) || (prefixes.some((prefix) => name.startsWith(prefix)) && !mayHoldSecret(name, value));
    if (allowed) env[name] = value;
  }
  return env;
}

/** Deliberately broad: a false alarm costs the operator one exact name, a miss leaks a credential. */
function mayHoldSecret(name: string, value: string): boolean {
  return SERVER_OWN.test(name) || SECRET_NAME.test(name) || URL_WITH_PASSWORD.test(value);
}
