/**
 * The environment a tool process gets. The server's own environment holds
 * its secrets (OPENAI_API_KEY, AGENTWIRE_TOKEN, whatever else the operator
 * exported), and a model can print any variable a tool inherits (`env`), so
 * tools get an allow-list, never the server's environment minus a deny-list:
 * a secret nobody thought of stays out by default.
 *
 * The list is the harmless defaults (DEFAULT_TOOL_ENV_ALLOW, declared beside
 * the `tools.envAllow` key in protocol/config-tools.ts) plus the operator's
 * extra entries (`tools.envAllow`: `--tool-env`, `AGENTWIRE_TOOL_ENV`). An
 * entry is an exact name (`JAVA_HOME`) or a prefix ending in `*` (`NPM_CONFIG_*`;
 * `*` alone means every name). The two kinds differ on purpose:
 *
 * - An exact name always passes — the operator named it, even a secret.
 * - A wildcard never passes a variable that looks like a credential (see
 *   CREDENTIAL_NAMES and CREDENTIAL_VALUES below: names such as *_KEY, *TOKEN*,
 *   *SECRET*, *PASSW*, *_PAT, *WEBHOOK*, JWT, CREDS, *AUTH*, SESSION, DSN;
 *   values such as a URL with a password or a token in its query, a JWT, a
 *   private key, a well-known token prefix), nor any name of the server's own
 *   configuration (AGENTWIRE_*, OPENAI_*). `--tool-env '*'` therefore still
 *   keeps OPENAI_API_KEY, AGENTWIRE_TOKEN, GH_PAT or SLACK_WEBHOOK_URL out;
 *   name them to pass them.
 */
import { DEFAULT_TOOL_ENV_ALLOW, isToolEnvEntry } from "../../protocol/tool-defaults.js";

const SERVER_OWN = /^(AGENTWIRE_|OPENAI_)/i;

/**
 * Names that hold credentials, by family. Matched case-insensitively against
 * the whole name; `(?<![A-Z0-9])` / `(?![A-Z0-9])` mark the ends of a word
 * (`_`, start or end of the name), for short words that are also parts of
 * ordinary ones (PAT in PATH, KEY in KEYBOARD, PWD as the working directory).
 */
const CREDENTIAL_NAMES: readonly RegExp[] = [
  /TOKEN|SECRET|PASSW|PASSPHRASE|PASSCODE|CRED|COOKIE|SESSION|PRIVATE|WEBHOOK|JWT|BEARER|HMAC|SIGNING|DSN|CONN(ECTION)?_?STR/i,
  // API_KEY, APIKEY, SSH_KEY, AWS_ACCESS_KEY_ID, KEYFILE, KEYSTORE, KEYRING — not KEYBOARD, KEYMAP.
  /KEY(S|FILE|STORE|RING|CHAIN|PAIR|ID)?(?![A-Z0-9])/i,
  // Personal access tokens (GH_PAT, GITLAB_PAT), a password word (SMTP_PASS, MYSQL_PWD, DB_PW), a salt,
  // one-time codes — but not PATH, PASSENGER, PWD or OLDPWD.
  /(?<![A-Z0-9])(PAT|PASS|PW|SALT|OTP|TOTP|MFA)(?![A-Z0-9])/i,
  /.[_-]PWD(?![A-Z0-9])/i,
  // AUTH, OAUTH, AUTHORIZATION, XAUTHORITY, SSH_AUTH_SOCK — not GIT_AUTHOR_NAME.
  /AUTH(?!ORS?(?![A-Z0-9]))/i,
  // A database URL carries its password more often than not; one without is harmless to add by name.
  /DATABASE_?URL|DB_?URL|REDIS_?URL|MONGO(DB)?_?URI|AMQP_?URL/i,
];

/** Values that are credentials whatever their name. */
const CREDENTIAL_VALUES: readonly RegExp[] = [
  // A URL with a password: postgres://user:pw@host, http://user:pw@proxy.
  /[a-z][a-z0-9+.-]*:\/\/[^\s/@:]*:[^\s/@]*@/i,
  // A URL with a secret in its query: ?token=, &access_token=, ?sig=, ?api_key=, ?password=.
  /[?&][a-z_-]*(token|key|secret|sig|signature|password|passwd|pwd|auth|credential)[a-z_-]*=/i,
  // A JWT (header.payload.signature, each base64url of JSON: "eyJ").
  /eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\./,
  // PEM private keys.
  /-----BEGIN [A-Z ]*PRIVATE KEY-----/,
  // Well-known token shapes: GitHub, GitLab, Slack (and its webhooks), OpenAI-style, AWS access keys, npm.
  /\b(gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{20,}|xox[abposr]-[A-Za-z0-9-]{10,}|sk-[A-Za-z0-9_-]{20,}|(AKIA|ASIA)[0-9A-Z]{16}|npm_[A-Za-z0-9]{36})\b/,
  /hooks\.slack\.com\/services\//i,
  /^(Bearer|Basic) [A-Za-z0-9._~+/=-]{8,}$/i,
];

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
export function mayHoldSecret(name: string, value: string): boolean {
  return SERVER_OWN.test(name) || CREDENTIAL_NAMES.some((pattern) => pattern.test(name)) || CREDENTIAL_VALUES.some((pattern) => pattern.test(value));
}
