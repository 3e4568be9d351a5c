/**
 * The agent-runtime packages the runtime tests need, in the repository's own
 * cache (.cache/runtimes, gitignored): installed by `npm run runtimes:install`
 * (.ci/run does it once), or here on first use when missing. A test file that
 * cannot have them (no registry) skips, saying why: they are no dependency of
 * agentwire, so `npm ci` never brings them.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "./cli-process.js";

export const RUNTIMES_DIR = join(REPO_ROOT, ".cache", "runtimes");

/** `ok` with the cache directory, or why the packages are not there. */
export function runtimePackages(): { ok: true; dir: string } | { ok: false; why: string } {
  const present = [join("@openai", "codex", "bin", "codex.js"), join("@anthropic-ai", "claude-agent-sdk", "sdk.mjs")].every((file) => existsSync(join(RUNTIMES_DIR, "node_modules", file)));
  if (present) return { ok: true, dir: RUNTIMES_DIR };
  try {
    // Several test files (in two workers) may find the cache empty at once: one installs, the others wait
    // for it (the script skips what is already there), rather than two npm installs writing one folder.
    installLocked(() =>
      execFileSync("bash", [join(REPO_ROOT, ".ci", "install-runtimes.sh")], {
        env: { ...process.env, AGENTWIRE_RUNTIMES_DIR: RUNTIMES_DIR },
        stdio: ["ignore", "pipe", "pipe"],
        timeout: 300_000,
      }),
    );
    return { ok: true, dir: RUNTIMES_DIR };
  } catch (error) {
    const stderr = String((error as { stderr?: Buffer }).stderr ?? "").trim().split("\n").slice(-3).join(" ");
    return { ok: false, why: `npm run runtimes:install failed (${stderr || (error as Error).message}); the runtime tests are skipped` };
  }
}

const INSTALL_LOCK = join(REPO_ROOT, ".cache", "runtimes.lock");
/** A lock older than this was left by a killed run. */
const STALE_LOCK_MS = 10 * 60_000;

function installLocked(install: () => void): void {
  mkdirSync(join(REPO_ROOT, ".cache"), { recursive: true });
  const deadline = Date.now() + 6 * 60_000;
  for (;;) {
    try {
      mkdirSync(INSTALL_LOCK);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const held = statSync(INSTALL_LOCK, { throwIfNoEntry: false });
      if (held && Date.now() - held.mtimeMs > STALE_LOCK_MS) rmSync(INSTALL_LOCK, { recursive: true, force: true });
      else if (Date.now() > deadline) throw new Error(`another run held ${INSTALL_LOCK} for 6 minutes`);
      else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 250);
    }
  }
  try {
    install();
  } finally {
    rmSync(INSTALL_LOCK, { recursive: true, force: true });
  }
}
