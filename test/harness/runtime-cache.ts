/**
 * The agent-runtime packages the runtime tests need, in the repository's own
 * cache (.cache/runtimes, gitignored): installed by `npm run runtimes:install`
 * (.ci/run does it once), or here on first use when missing. A test file that
 * cannot have them (no registry) skips, saying why: they are no dependency of
 * agentwire, so `npm ci` never brings them.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "./cli-process.js";

export const RUNTIMES_DIR = join(REPO_ROOT, ".cache", "runtimes");

/** `ok` with the cache directory, or why the packages are not there. */
export function runtimePackages(): { ok: true; dir: string } | { ok: false; why: string } {
  const present = [join("@openai", "codex", "bin", "codex.js"), join("@anthropic-ai", "claude-agent-sdk", "sdk.mjs")].every((file) => existsSync(join(RUNTIMES_DIR, "node_modules", file)));
  if (present) return { ok: true, dir: RUNTIMES_DIR };
  try {
    execFileSync("bash", [join(REPO_ROOT, ".ci", "install-runtimes.sh")], {
      env: { ...process.env, AGENTWIRE_RUNTIMES_DIR: RUNTIMES_DIR },
      stdio: ["ignore", "pipe", "pipe"],
      timeout: 300_000,
    });
    return { ok: true, dir: RUNTIMES_DIR };
  } catch (error) {
    const stderr = String((error as { stderr?: Buffer }).stderr ?? "").trim().split("\n").slice(-3).join(" ");
    return { ok: false, why: `npm run runtimes:install failed (${stderr || (error as Error).message}); the runtime tests are skipped` };
  }
}
