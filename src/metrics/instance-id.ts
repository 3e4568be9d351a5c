import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "../logging/logger.js";
import { LowdbFile } from "../store/lowdb-file.js";
import { makeDirectory } from "../store/make-directory.js";

export const INSTANCE_FILE = "instance.json";
const ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

/**
 * This server's id, stable per data dir: generated on the first start and
 * kept in `<dataDir>/instance.json`, so metrics, logs and server.status of
 * one installation carry the same id across restarts, and two servers on
 * two data dirs never share one. Called after the store holds the data dir
 * (one process per data dir), so two writers cannot race.
 *
 * A file that cannot be read or written does not stop the server: the id is
 * then fresh for this process, and the log says why.
 */
export async function loadInstanceId(dataDir: string, log: Logger): Promise<string> {
  const path = join(dataDir, INSTANCE_FILE);
  try {
    const data: unknown = JSON.parse(await readFile(path, "utf8"));
    const id = (data as { instanceId?: unknown } | null)?.instanceId;
    if (typeof id === "string" && ID_PATTERN.test(id)) return id;
    log.warn(`${path} holds no valid instanceId; writing a new one`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") log.warn(`${path} cannot be read (${(error as Error).message}); writing a new one`);
  }
  const id = `i_${randomUUID()}`;
  try {
    await makeDirectory(dataDir);
    await new LowdbFile<{ instanceId: string; createdAt: string }>(path).write({ instanceId: id, createdAt: new Date().toISOString() });
  } catch (error) {
    // One line: an unusable data dir (e.g. under /proc with a PostgreSQL store) is the operator's to fix, not a crash.
    log.warn(`the instance id could not be stored in ${path} (${(error as Error).message}); it will change with the next start`);
  }
  return id;
}
