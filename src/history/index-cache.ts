/**
 * The history index kept between runs: one JSON file in server.dataDir
 * holding what each session file gave, keyed by its path, mtime and size.
 * At the first history.* call a file whose mtime and size match is taken
 * from here, not read again, so a heavy user's first call stats every file
 * and reads only those that changed since the server last ran. The file is
 * only a cache: unreadable, foreign or of another version, it is ignored
 * and written again.
 */
import { mkdir, readFile, rename, stat, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { HistorySession } from "../../protocol/history.js";
import type { Logger } from "../logging/logger.js";

/** A session as indexed, with the mtime and size of the file it was read from, and the file's problem if any. */
export type CachedSession = HistorySession & { mtimeMs: number; size: number; problem?: string };

/** Bumped when what a parser produces changes: an older cache would list sessions as the old parser saw them. */
const VERSION = 2;
/** A cache larger than this is not read (maxSessions entries of a few hundred bytes are far below it). */
const MAX_CACHE_BYTES = 256 * 1024 * 1024;

export class IndexCache {
  constructor(
    private readonly file: string,
    private readonly log: Logger,
  ) {}

  async load(): Promise<Map<string, CachedSession>> {
    const entries = new Map<string, CachedSession>();
    const info = await stat(this.file).catch(() => undefined);
    if (!info?.isFile() || info.size > MAX_CACHE_BYTES) return entries;
    try {
      const data = JSON.parse(await readFile(this.file, "utf8")) as { version?: unknown; sessions?: unknown };
      if (data.version !== VERSION || !Array.isArray(data.sessions)) return entries;
      for (const raw of data.sessions as Record<string, unknown>[]) {
        // Each entry is checked: a hand-edited or half-written entry is read again from its file instead.
        const session = HistorySession.safeParse(raw);
        if (!session.success || typeof raw.mtimeMs !== "number" || typeof raw.size !== "number") continue;
        const problem = typeof raw.problem === "string" ? { problem: raw.problem } : {};
        entries.set(session.data.path, { ...session.data, mtimeMs: raw.mtimeMs, size: raw.size, ...problem });
      }
    } catch (error) {
      this.log.warn(`history: ignoring the index cache ${this.file}`, error);
    }
    return entries;
  }

  /** Written to a temporary file and renamed: a crash mid-write leaves the previous cache whole. */
  async save(sessions: readonly CachedSession[]): Promise<void> {
    const temporary = `${this.file}.${process.pid}.tmp`;
    try {
      await mkdir(dirname(this.file), { recursive: true });
      await writeFile(temporary, JSON.stringify({ version: VERSION, sessions }));
      await rename(temporary, this.file);
    } catch (error) {
      this.log.warn(`history: cannot write the index cache ${this.file}`, error);
    }
  }
}
