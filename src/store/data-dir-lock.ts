import { randomBytes } from "node:crypto";
import { link, readFile, rename, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { DataDirLockedError, type ServerAdvert } from "./conversation-store.js";
import { removeFile } from "./remove-file.js";

/**
 * One process per data dir: `<dataDir>/LOCK` holds the owner's pid. The file
 * is created with exclusive create, so of two starting servers exactly one
 * wins. A LOCK whose pid is no longer alive (the owner was killed with -9)
 * is stale and taken over.
 *
 * Beside it, `<dataDir>/SERVER` says where the owner listens once it does
 * (advertise), so the client commands connect to the running server instead
 * of being locked out (dataDirHolder). It holds the owner's pid (an advert
 * left by a dead owner is ignored), its address and whether it needs a
 * token — never the token itself.
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

  /**
   * Writes SERVER (atomically: a reader sees the old advert or the new one,
   * never half of one) saying where this process serves the data dir; null
   * withdraws it (the server is stopping).
   */
  async advertise(advert: ServerAdvert | null): Promise<void> {
    if (!heldHere.has(this.file)) return;
    const file = join(this.dataDir, SERVER_FILE);
    if (advert === null) return removeOurAdvert(file);
    const content: AdvertFile = { pid: process.pid, ...advert };
    const temp = `${file}.${process.pid}-${randomBytes(4).toString("hex")}.tmp`;
    await writeFile(temp, `${JSON.stringify(content)}\n`, { mode: 0o644 });
    await rename(temp, file).catch(async (error: unknown) => {
      await removeFile(temp);
      throw error;
    });
  }

  /** Removes LOCK if it still holds our pid (never someone else's lock), and our SERVER advert with it. */
  async release(): Promise<void> {
    if (!heldHere.has(this.file)) return;
    await removeOurAdvert(join(this.dataDir, SERVER_FILE));
    if (!heldHere.delete(this.file)) return;
    const content = await readFile(this.file, "utf8").catch(() => null);
    if (content !== null && parsePid(content) === process.pid) await removeFile(this.file);
  }
}

export const SERVER_FILE = "SERVER";

type AdvertFile = ServerAdvert & { pid: number };

/** Who holds a data dir, as a client command sees it. */
export type DataDirHolder =
  /** Nobody (no LOCK, or one its dead owner left): a command may start its own server. */
  | { kind: "free" }
  /** A live process holds it and has not (yet) said where it listens. */
  | { kind: "starting"; pid: number }
  /** A server that others may connect to. */
  | { kind: "serving"; pid: number; url: string; tokenRequired: boolean }
  /** Another command's own server: it stops with that command. */
  | { kind: "private"; pid: number };

/** Reads LOCK and SERVER of `dataDir` (never writes or removes anything). */
export async function dataDirHolder(dataDir: string): Promise<DataDirHolder> {
  const dir = resolve(dataDir);
  const lockFile = join(dir, "LOCK");
  const content = await readHolder(lockFile);
  const pid = content === null ? null : parsePid(content);
  if (pid === null || !isHolderAlive(pid, lockFile)) return { kind: "free" };
  const advert = await readAdvert(join(dir, SERVER_FILE));
  // An advert from an earlier owner (killed before it could withdraw it) says nothing about this one.
  if (advert?.pid !== pid) return { kind: "starting", pid };
  if (!advert.shared) return { kind: "private", pid };
  return { kind: "serving", pid, url: advert.url, tokenRequired: advert.tokenRequired };
}

async function readAdvert(file: string): Promise<AdvertFile | undefined> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(file, "utf8"));
  } catch {
    return undefined; // absent, or not ours to understand: as if not written yet
  }
  const a = parsed as Partial<{ pid: unknown; shared: unknown; url: unknown; tokenRequired: unknown }>;
  if (typeof a !== "object" || a === null || typeof a.pid !== "number") return undefined;
  if (a.shared === false) return { pid: a.pid, shared: false };
  if (a.shared !== true || typeof a.url !== "string" || !/^wss?:\/\//.test(a.url)) return undefined;
  return { pid: a.pid, shared: true, url: a.url, tokenRequired: a.tokenRequired === true };
}

async function removeOurAdvert(file: string): Promise<void> {
  const advert = await readAdvert(file);
  if (advert?.pid === process.pid) await removeFile(file);
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
  await removeFile(aside);
}
