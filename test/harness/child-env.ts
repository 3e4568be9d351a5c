/**
 * The environment for a child process a test or the benchmark starts: this
 * process's, minus anything that would configure agentwire (or the OpenAI
 * SDK, or node itself) from outside, plus `extra`. The user's own
 * agentwire.json (under XDG_CONFIG_HOME) and list of trusted files (under
 * XDG_DATA_HOME) are out of reach too. No vitest here: the benchmark
 * imports it too.
 */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(AGENTWIRE_|OPENAI_)/.test(key) || key === "NODE_OPTIONS") continue;
    env[key] = value;
  }
  return { ...env, XDG_CONFIG_HOME: "/nonexistent/agentwire-test-config", XDG_DATA_HOME: "/nonexistent/agentwire-test-data", ...extra };
}
