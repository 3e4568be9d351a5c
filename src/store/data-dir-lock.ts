import { randomBytes } from "node:crypto";
import { link, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { DataDirLockedError } from "./conversation-store.js";

/**
 * One process per data dir: `<dataDir>/LOCK` holds the owner's pid. The file
 * is created with exclusive create, so of two starting servers exactly one
 * wins. A LOCK whose pid is no longer alive (the owner was killed with -9)
 * is stale and taken over.
 */
export class DataDirLock {
  private constructor(
    readonly dataDir: string,
    readonly file: string,
  ) {}

  static async acquire(dataDir: string): Promise<DataDirLock> {
    const dir = resolve(dataDir);
    const file = join(dir, "LOCK");
    for (let attempt = 0; attempt < 5; attempt++) {
      if (await tryCreate(file)) {
        heldHere.add(file);
        return new DataDirLock(dir, file);
      }
      const content = await readHolder(file);
      if (content === null) continue; // vanished meanwhile: try again
      const pid = parsePid(content);
      if (pid !== null && isHolderAlive(pid, file)) {
        throw new DataDirLockedError(
          `data dir ${dir} is in use by another agentwire process (pid ${pid}); stop it or use --data-dir`,
        );
      }
      await removeStale(file, content);
    }
    throw new DataDirLockedError(`data dir ${dir}: could not take ${file} (another process keeps replacing it)`);
  }

  /** Removes LOCK if it still holds our pid (never someone else's lock). */
  async release(): Promise<void> {
    if (!heldHere.delete(this.file)) return;
    const content = await readFile(this.file, "utf8").catch(() => null);
    if (content !== null && parsePid(content) === process.pid) await rm(this.file, { force: true });
  }
}

/** Lock files held by this process, so a second store here is refused too. */
const heldHere = new Set<string>();

async function tryCreate(file: string): Promise<boolean> {
  try {
    await writeFile(file, `${process.pid}\n`, { flag: "wx" });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
}

/** The LOCK's text; null when it does not exist. Waits out a lock being written. */
async function readHolder(file: string): Promise<string | null> {
  for (let i = 0; ; i++) {
    let content: string;
    try {
      content = await readFile(file, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw error;
    }
    // Exclusive create and writing the pid are two steps: an empty file may
    // be a lock an instant old. Give its owner a moment before judging it.
    if (parsePid(content) !== null || i >= 3) return content;
    await sleep(50);
  }
}

function parsePid(content: string): number | null {
  const text = content.trim();
  if (!/^\d{1,10}$/.test(text)) return null;
  const pid = Number(text);
  return pid > 0 ? pid : null;
}

function isHolderAlive(pid: number, file: string): boolean {
  // Our own pid in a lock we do not hold is a previous run of a container
  // that reuses pids (e.g. pid 1 after a restart): stale.
  if (pid === process.pid) return heldHere.has(file);
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Removes a stale LOCK without a race: move it aside, check that what moved
 * is the stale text we judged (not a fresh lock another process has just
 * created), and put it back if it is not.
 */
async function removeStale(file: string, staleContent: string): Promise<void> {
  const aside = `${file}.stale-${process.pid}-${randomBytes(4).toString("hex")}`;
  try {
    await rename(file, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  const moved = await readFile(aside, "utf8").catch(() => null);
  if (moved !== staleContent) await link(aside, file).catch(() => undefined);
  await rm(aside, { force: true });
}
