/**
 * Whether a directory or file may hold configuration this user runs with —
 * the rule git applies with safe.directory: it must be the user's own, and
 * neither its group nor others may write it. Anyone who can write there could
 * otherwise choose what the user's server runs.
 */
import { type Stats, statSync } from "node:fs";

/** The user running this process; undefined where there are no uids (Windows), where the check does not apply. */
export function currentUid(): number | undefined {
  return typeof process.getuid === "function" ? process.getuid() : undefined;
}

/** Why `stat`'s directory or file may not hold configuration ("owned by uid 65534, not by you"), or undefined when it may. */
export function placeProblem(stat: Pick<Stats, "uid" | "mode">, uid = currentUid()): string | undefined {
  if (uid === undefined) return undefined;
  if (stat.uid !== uid) return `owned by another user (uid ${stat.uid}), not by you (uid ${uid})`;
  if (stat.mode & 0o002) return "writable by others";
  if (stat.mode & 0o020) return "writable by its group";
  return undefined;
}

/** placeProblem of a directory by its path; a directory that cannot be looked at is a problem too. */
export function directoryProblem(dir: string): string | undefined {
  let stat: Stats;
  try {
    stat = statSync(dir);
  } catch (error) {
    return `cannot be looked at (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
  }
  return placeProblem(stat);
}
