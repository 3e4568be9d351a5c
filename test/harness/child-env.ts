/**
 * The environment for a child process a test or the benchmark starts: this
 * process's, minus anything that would configure agentwire (or the OpenAI
 * SDK, or node itself) from outside, plus `extra`. No vitest here: the
 * benchmark imports it too.
 */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(AGENTWIRE_|OPENAI_)/.test(key) || key === "NODE_OPTIONS") continue;
    env[key] = value;
  }
  return { ...env, ...extra };
}
