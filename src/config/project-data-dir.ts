/**
 * The data dir older agentwire versions kept in the working directory,
 * `./.agentwire`. The default is now the user's own directory
 * (user-dirs.ts); a project's store is never moved or read behind the
 * user's back. When the working directory holds one that is not the data
 * dir in use, a notice says so once, and how to use it.
 */
import { existsSync, realpathSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Notice } from "../../protocol/notices.js";

export const PROJECT_DATA_DIR = ".agentwire";

/** A notice when `cwd/.agentwire` holds conversations and `dataDir` (as the store will resolve it) is elsewhere. */
export function projectDataDirNotice(cwd: string, dataDir: string): Notice | undefined {
  const project = join(cwd, PROJECT_DATA_DIR);
  // A workspace's .agentwire may hold only skills (.agentwire/skills/): a store has its index or its conversations folder.
  if (!existsSync(join(project, "index.json")) && !existsSync(join(project, "conversations"))) return undefined;
  if (sameDirectory(project, resolve(cwd, dataDir))) return undefined;
  return {
    code: "data_dir_not_used",
    message:
      `${project} holds conversations from an older agentwire, which kept them in the working directory; ` +
      `they are not shown (the data dir is ${resolve(cwd, dataDir)}). Use them with --data-dir ${PROJECT_DATA_DIR} ` +
      `(or "server": {"dataDir": "${PROJECT_DATA_DIR}"} in agentwire.json); nothing was moved.`,
  };
}

function sameDirectory(a: string, b: string): boolean {
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return resolve(p);
    }
  };
  return real(a) === real(b);
}
