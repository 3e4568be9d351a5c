/**
 * Where an optional runtime package is found. The runtimes' packages ship a
 * native agent of about 400 MB each, so they are no dependency of agentwire:
 * neither `npm ci` nor the published package installs them. They are looked
 * for, when a conversation first uses the runtime, in:
 *
 *  1. the runtime's `packageDir` (config), else the runtimes cache:
 *     AGENTWIRE_RUNTIMES_DIR, else $XDG_CACHE_HOME/agentwire/runtimes
 *     (~/.cache/agentwire/runtimes) — what `npm run runtimes:install` and the
 *     command in the error fill;
 *  2. wherever agentwire itself resolves packages from (a global or project
 *     install beside it).
 *
 * Only the package's directory is looked up (createRequire works the same from source
 * and from the esbuild bundle, where a bare `import()` of a package that is
 * not there fails at bundle time or differently at run time).
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { homedir } from "node:os";
import { join } from "node:path";
import { RuntimeUnavailableError } from "./runtime.js";

/** The package a runtime needs, at the version its protocol was written against. */
export interface RuntimePackage {
  name: string;
  version: string;
}

/** The directory runtime packages are installed into by default. */
export function runtimesCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.AGENTWIRE_RUNTIMES_DIR) return env.AGENTWIRE_RUNTIMES_DIR;
  const cache = env.XDG_CACHE_HOME || join(homedir(), ".cache");
  return join(cache, "agentwire", "runtimes");
}

/** The exact command that installs the package where the lookup finds it. */
export function installCommand(pkg: RuntimePackage, dir: string): string {
  return `npm install --prefix ${shellQuote(dir)} ${pkg.name}@${pkg.version}`;
}

/** The package's directory; throws RuntimeUnavailableError naming the package and the install command when it is nowhere. */
export function findRuntimePackage(pkg: RuntimePackage, packageDir: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const dir = packageDir ?? runtimesCacheDir(env);
  const bases = [join(dir, "node_modules", "_"), import.meta.url];
  for (const base of bases) {
    // Node's lookup directories, not require.resolve: a package whose `exports` leaves out ./package.json (the Claude Agent SDK's) cannot be resolved by that path.
    for (const modules of createRequire(base).resolve.paths(pkg.name) ?? []) {
      const found = join(modules, pkg.name);
      if (existsSync(join(found, "package.json"))) return found;
    }
  }
  const where = existsSync(dir) ? `it is not in ${dir}` : `${dir} does not exist`;
  throw new RuntimeUnavailableError(
    `the runtime needs the package ${pkg.name}, which is not installed (${where}, and agentwire cannot resolve it). ` +
      `It is optional (about 400 MB): install it with \`${installCommand(pkg, dir)}\`, or \`npm run runtimes:install\` in a checkout of agentwire`,
  );
}

function shellQuote(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, "'\\''")}'`;
}
