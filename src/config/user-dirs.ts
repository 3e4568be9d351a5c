/**
 * The user's own directories (XDG base directories): where agentwire keeps
 * what belongs to the user rather than to a project — the data dir
 * (conversations) and the list of trusted configuration files.
 */
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";

/** $XDG_DATA_HOME, else ~/.local/share (an XDG_DATA_HOME that is not absolute is ignored, as the spec says). */
export function userDataHome(env: NodeJS.ProcessEnv, home?: string): string {
  return env.XDG_DATA_HOME && isAbsolute(env.XDG_DATA_HOME) ? env.XDG_DATA_HOME : join(home ?? homedir(), ".local", "share");
}

/** server.dataDir when no layer sets it: $XDG_DATA_HOME/agentwire (protocol/config.ts DATA_DIR_DEFAULT_TEXT says so in words). */
export function defaultDataDir(env: NodeJS.ProcessEnv, home?: string): string {
  return join(userDataHome(env, home), "agentwire");
}
