/**
 * Real failing disks for the store's failure tests: a small tmpfs of its own
 * that a test can make read-only or fill up (ENOSPC), then give back.
 *
 * Mounting needs root with CAP_SYS_ADMIN. Elsewhere, read-only falls back to
 * `chmod -R a-w` (which stops a non-root process; root ignores modes), and a
 * full disk cannot be had: `diskSupport` says what works and why not, so
 * tests can skip with that reason rather than pass without running.
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, open, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface DiskSupport {
  /** A tmpfs can be mounted: read-only and full disk both work. */
  mount: boolean;
  /** Read-only works (by remount, or by chmod for a non-root user). */
  readOnly: boolean;
  /** A disk can be filled (ENOSPC). */
  full: boolean;
  /** Why something does not work here, for the skip message. */
  reason: string | null;
}

async function probe(): Promise<DiskSupport> {
  const dir = await mkdtemp(join(tmpdir(), "agentwire-disk-probe-"));
  try {
    try {
      await run("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", dir]);
      await run("umount", [dir]);
      return { mount: true, readOnly: true, full: true, reason: null };
    } catch (error) {
      const mountProblem = `mounting a tmpfs is not permitted here (${firstLine(error)})`;
      await mkdir(join(dir, "ro"));
      await run("chmod", ["a-w", join(dir, "ro")]);
      const chmodWorks = await writeFile(join(dir, "ro", "x"), "x").then(
        () => false,
        () => true,
      );
      await run("chmod", ["u+w", join(dir, "ro")]);
      return {
        mount: false,
        readOnly: chmodWorks,
        full: false,
        reason: chmodWorks
          ? `${mountProblem}; full-disk (ENOSPC) tests need a tmpfs`
          : `${mountProblem}, and chmod a-w does not stop this user (root?): no read-only or full disk`,
      };
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export const diskSupport: DiskSupport = await probe();

export class TestDisk {
  #filler: string;

  private constructor(
    /** The mount point; put the data dir under it. */
    readonly dir: string,
    readonly mounted: boolean,
  ) {
    this.#filler = join(dir, "filler");
  }

  /** A fresh empty disk (a tmpfs of `sizeBytes` when mounting works, else a plain temp dir). */
  static async create(sizeBytes = 8 << 20): Promise<TestDisk> {
    const dir = await mkdtemp(join(tmpdir(), "agentwire-disk-"));
    if (!diskSupport.mount) return new TestDisk(dir, false);
    await run("mount", ["-t", "tmpfs", "-o", `size=${sizeBytes},mode=0755`, "tmpfs", dir]);
    return new TestDisk(dir, true);
  }

  async readOnly(): Promise<void> {
    if (this.mounted) await run("mount", ["-o", "remount,ro", this.dir]);
    else await run("chmod", ["-R", "a-w", this.dir]);
  }

  async writable(): Promise<void> {
    if (this.mounted) await run("mount", ["-o", "remount,rw", this.dir]);
    else await run("chmod", ["-R", "u+w", this.dir]);
  }

  /** Fills the disk until a write fails with ENOSPC: from now on new file content cannot be written. */
  async fill(): Promise<void> {
    if (!this.mounted) throw new Error("a plain directory cannot be filled");
    const file = await open(this.#filler, "a");
    try {
      for (const size of [1 << 20, 64 << 10, 4 << 10, 1]) {
        const chunk = Buffer.alloc(size, 120);
        for (;;) {
          try {
            const { bytesWritten } = await file.write(chunk);
            if (bytesWritten < size) break;
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code === "ENOSPC") break;
            throw error;
          }
        }
      }
    } finally {
      await file.close();
    }
  }

  /** Frees what `fill` took. */
  async free(): Promise<void> {
    await rm(this.#filler, { force: true });
  }

  async dispose(): Promise<void> {
    if (this.mounted) {
      await run("mount", ["-o", "remount,rw", this.dir]).catch(() => undefined);
      await run("umount", [this.dir]).catch(() => run("umount", ["-l", this.dir]));
    } else {
      await run("chmod", ["-R", "u+w", this.dir]).catch(() => undefined);
    }
    await rm(this.dir, { recursive: true, force: true });
  }
}

function firstLine(error: unknown): string {
  const text = (error as { stderr?: string }).stderr || (error as Error).message || String(error);
  return text.trim().split("\n")[0];
}
