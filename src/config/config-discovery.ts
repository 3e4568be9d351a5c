import { existsSync, realpathSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";

export const CONFIG_FILE_NAME = "agentwire.json";

export interface DiscoveryOptions {
  /** Where the project lookup starts (the server's working directory). */
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Home directory, for ~/.config when XDG_CONFIG_HOME is unset. */
  home?: string;
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
 * project tree, a symlinked directory) counts once, at its higher place.
 */
export function findConfigFiles(options: DiscoveryOptions): string[] {
  const project: string[] = [];
  for (let dir = resolve(options.cwd); ; dir = dirname(dir)) {
    const candidate = join(dir, CONFIG_FILE_NAME);
    if (existsSync(candidate)) project.push(candidate);
    if (dirname(dir) === dir) break;
  }
  const user = userConfigPath(options);
  const ordered = [...(existsSync(user) ? [user] : []), ...project.reverse()];
  const seen = new Map<string, number>();
  ordered.forEach((file, index) => seen.set(realpathOr(file), index));
  return ordered.filter((file, index) => seen.get(realpathOr(file)) === index);
}

function realpathOr(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return file;
  }
}
