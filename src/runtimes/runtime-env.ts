/** The environment a runtime's agent process starts from. */

/** The variables an agent process inherits from the server; everything else (keys above all) stays out unless the runtime adds it by name. */
const INHERITED_ENV = ["PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "TMPDIR", "TERM", "SHELL", "SSL_CERT_FILE", "SSL_CERT_DIR"];

export function inheritedEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of INHERITED_ENV) if (env[name] !== undefined) kept[name] = env[name]!;
  return kept;
}
