/**
 * The tools' configuration defaults and name patterns: plain data, no zod.
 * The tools read them on the server's start path; config-tools.ts builds the
 * configuration's schemas with them and re-exports them.
 */
export const TOOL_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * What every tool process may see of the server's environment unless the
 * operator adds more (`tools.envAllow`): what programs need to find
 * themselves, the user and the locale. No proxies (their URLs may carry a
 * password), no agent sockets (SSH_AUTH_SOCK would lend the user's keys),
 * no toolchain paths. src/tools/tool-environment.ts applies it.
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

/** An entry of `tools.envAllow`: a variable name, optionally ending in `*` (a prefix), or `*` alone. */
export const TOOL_ENV_ENTRY_PATTERN = /^([A-Za-z_][A-Za-z0-9_]*\*?|\*)$/;

/** True for a valid `tools.envAllow` entry. */
export function isToolEnvEntry(entry: string): boolean {
  return TOOL_ENV_ENTRY_PATTERN.test(entry);
}

/** The shell every command line runs through unless `tools.shell.command` says otherwise: today's, exactly. */
export const DEFAULT_SHELL_COMMAND: readonly string[] = ["bash", "-c"];

/** web_fetch's bounds when `tools.web.fetch` leaves them out (also when the tool is built without a configuration). */
export const WEB_FETCH_DEFAULTS = { maxBytes: 2 * 1024 * 1024, timeoutMs: 30_000, maxOutputBytes: 64 * 1024 } as const;

/** web_search's settings when `tools.web.search` leaves them out. */
export const WEB_SEARCH_DEFAULTS = { maxResults: 8, timeoutMs: 15_000 } as const;
