import { existsSync, realpathSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve, sep } from "node:path";
import { directoryProblem } from "./config-place.js";

export const CONFIG_FILE_NAME = "agentwire.json";

export interface DiscoveryOptions {
  /** Where the project lookup starts (the server's working directory). */
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Home directory, for ~/.config when XDG_CONFIG_HOME is unset, and where the parent walk ends. */
  home?: string;
}

/** A configuration file found: the user's own, or one of the project's (which may need trust, see config-trust.ts). */
export interface FoundConfigFile {
  file: string;
  kind: "user" | "project";
  /** Set when the file is not to be read because of where it is, saying why. */
  ignored?: string;
}

/** The user-level file: $XDG_CONFIG_HOME/agentwire/agentwire.json, else ~/.config/agentwire/agentwire.json. */
export function userConfigPath(options: Pick<DiscoveryOptions, "env" | "home">): string {
  const base = options.env.XDG_CONFIG_HOME || join(options.home ?? homedir(), ".config");
  return join(resolve(base), "agentwire", CONFIG_FILE_NAME);
}

/**
 * Every configuration file that applies, lowest precedence first: the user
 * file, then agentwire.json in each parent of `cwd` from the farthest down
 * to `cwd` itself. A file reached twice (the user's config dir inside the
 * project tree, a symlinked directory) counts once, at its higher place, and
 * is the user's file if it is that.
 *
 * The walk up from `cwd` ends at the home directory (nothing above it is
 * read: a parent of everyone's home is nobody's project), and before the
 * first directory that is not the user's own or that its group or others
 * may write: whoever can write there chooses what is read (/tmp is the
 * usual case; a working directory outside home stops there or at the first
 * directory shared with others, and never reaches `/`). An agentwire.json
 * in that directory is listed as ignored, with the reason.
 */
export function findConfigFiles(options: DiscoveryOptions): FoundConfigFile[] {
  const home = realpathOr(resolve(options.home ?? homedir()));
  const project: FoundConfigFile[] = [];
  for (let dir = realpathOr(resolve(options.cwd)); ; dir = dirname(dir)) {
    if (isAbove(dir, home)) break;
    const candidate = join(dir, CONFIG_FILE_NAME);
    const problem = directoryProblem(dir);
    if (problem) {
      if (existsSync(candidate)) project.push({ file: candidate, kind: "project", ignored: `its directory ${dir} is ${problem}` });
      break;
    }
    if (existsSync(candidate)) project.push({ file: candidate, kind: "project" });
    if (dir === home || dirname(dir) === dir) break;
  }
  const userFile = userConfigPath(options);
  const user: FoundConfigFile[] = [];
  if (existsSync(userFile)) {
    const problem = directoryProblem(dirname(userFile));
    user.push({ file: userFile, kind: "user", ...(problem ? { ignored: `its directory ${dirname(userFile)} is ${problem}` } : {}) });
  }
  const ordered = [...user, ...project.reverse()];
  const userReal = user.length > 0 ? realpathOr(userFile) : undefined;
  const seen = new Map<string, number>();
  ordered.forEach((found, index) => seen.set(realpathOr(found.file), index));
  return ordered
    .filter((found, index) => seen.get(realpathOr(found.file)) === index)
    .map((found) => (found.kind === "project" && realpathOr(found.file) === userReal ? { ...found, kind: "user" as const } : found));
}

/** True when `dir` is a strict ancestor of `home` (`/` or `/home` for `/home/me`). */
function isAbove(dir: string, home: string): boolean {
  return dir !== home && home.startsWith(dir.endsWith(sep) ? dir : `${dir}${sep}`);
}

export function realpathOr(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return file;
  }
}
