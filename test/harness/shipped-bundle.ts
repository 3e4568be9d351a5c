/**
 * What ships, built from the source under test: dist/bundle (`npm run
 * bundle`, what `npm start` and the `agentwire` bin run), dist/web (`npm
 * run bundle:web`, the web client the server serves on /) and dist/types
 * (`npm run types`, the declarations of the `exports` entry points).
 *
 * vitest's global setup (test/vitest.config.ts, which npm test passes) calls `setup` once per run, before
 * any test file: it builds both with the npm scripts themselves, so the
 * options are the shipped ones, but only when the source changed since the
 * last build — a digest of the build's inputs is written into each output
 * directory, and `npm run bundle`/`bundle:web` replace the directory, digest
 * and all. No test file builds them, so no test can delete the bundle under
 * another one running, and a whole `npm test` builds at most once. A
 * benchmark (bench/run.ts) holds the same lock while it runs the bundle, so
 * a test run started meanwhile waits for it rather than rebuilding under it. A test
 * that starts the bundle calls `shippedBundle()`, which fails, saying so,
 * when the source changed after the build (vitest --watch).
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { promisify } from "node:util";
import { REPO_ROOT } from "./repo-root.js";

/** The shipped CLI, REPO_ROOT-relative as runCli takes it. */
export const SHIPPED_CLI = "dist/bundle/cli.cjs";

/** Everything esbuild reads to build either (node_modules changes come with package-lock.json). */
const INPUTS = ["src", "protocol", "clients/typescript", "clients/web", "package.json", "package-lock.json", "tsconfig.json", "tsconfig.types.json"];
const OUTPUTS = [
  { dir: "dist/bundle", script: "bundle" },
  { dir: "dist/web", script: "bundle:web" },
  // The declarations package.json `exports` names (tsc, about 15 s): the package test and the docs' TypeScript blocks read them.
  { dir: "dist/types", script: "types" },
] as const;
const DIGEST_FILE = ".source-digest";
/** The lock on what ships, in the checkout at `root` (see acquireShippedBuild). */
const lockOf = (root: string) => join(root, "dist", ".shipped-build.lock");

function filesUnder(path: string): string[] {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { withFileTypes: true })
    .filter((entry) => entry.name !== "node_modules")
    .flatMap((entry) => filesUnder(join(path, entry.name)));
}

/** A digest of every input's path and content (about 20 ms). */
export function sourceDigest(): string {
  const hash = createHash("sha256");
  const files = INPUTS.flatMap((input) => filesUnder(join(REPO_ROOT, input))).sort();
  for (const file of files) hash.update(`${relative(REPO_ROOT, file)}\0`).update(readFileSync(file)).update("\0");
  return hash.digest("hex");
}

function builtFrom(dir: string): string | undefined {
  try {
    return readFileSync(join(REPO_ROOT, dir, DIGEST_FILE), "utf8");
  } catch {
    return undefined;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether the process that took the lock is gone (it was killed mid-build): then the lock is stale. */
function lockHolderGone(lock: string): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(join(lock, "pid"), "utf8"));
  } catch {
    // Taken a moment ago and its pid not written yet, or released meanwhile: judge by age.
    try {
      return Date.now() - statSync(lock).mtimeMs > 10_000;
    } catch {
      return false;
    }
  }
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
}

/**
 * Takes the lock on what ships of the checkout at `root` (REPO_ROOT when run from source; bench/run.ts, run from dist/, names its own): one builder at a time (two vitest runs started together), and no
 * build while a benchmark runs the bundle (bench/run.ts holds it for its whole run: a rebuild replaces
 * dist/bundle's chunks under the servers it starts). Waits while a live process holds it; returns the release.
 */
export async function acquireShippedBuild(root: string = REPO_ROOT): Promise<() => void> {
  const lock = lockOf(root);
  mkdirSync(join(root, "dist"), { recursive: true });
  for (let waited = 0; ; waited++) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, "pid"), String(process.pid));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      if (lockHolderGone(lock)) rmSync(lock, { recursive: true, force: true });
      else if (waited === 0) console.log(`shipped-bundle: waiting for ${lock}, held by another run (a build of what ships, or a benchmark running it)`);
      await sleep(200);
    }
  }
  return () => rmSync(lock, { recursive: true, force: true });
}

async function withLock<T>(work: () => Promise<T>): Promise<T> {
  const release = await acquireShippedBuild();
  try {
    return await work();
  } finally {
    release();
  }
}

/** vitest global setup: build what is stale, with the npm scripts that build what ships. */
export async function setup(): Promise<void> {
  await withLock(async () => {
    const digest = sourceDigest();
    const stale = OUTPUTS.filter(({ dir }) => builtFrom(dir) !== digest);
    if (stale.length === 0) return;
    const started = Date.now();
    await Promise.all(
      stale.map(async ({ dir, script }) => {
        await promisify(execFile)("npm", ["run", script, "--silent"], { cwd: REPO_ROOT });
        writeFileSync(join(REPO_ROOT, dir, DIGEST_FILE), digest);
      }),
    );
    console.log(`shipped-bundle: built ${stale.map(({ dir }) => dir).join(" and ")} from the current source (${Date.now() - started} ms)`);
  });
}

/** The shipped CLI's path for runCli; throws when it is not built from the source as it is now. */
export function shippedBundle(): string {
  const digest = sourceDigest();
  for (const { dir, script } of OUTPUTS) {
    if (builtFrom(dir) !== digest) {
      throw new Error(
        `${dir} is not built from the current source (it changed after vitest's global setup built it, or the setup did not run): ` +
          `run them with npm test (e.g. npm test -- test/bundle/bundle.test.ts), which builds it first, or npm run ${script}`,
      );
    }
  }
  return SHIPPED_CLI;
}
