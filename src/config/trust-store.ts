/**
 * The files the user has trusted (`agentwire trust`), each with the SHA-256
 * of its content when trusted: a changed file is no longer trusted. Kept in
 * the user's data directory, $XDG_DATA_HOME/agentwire/trusted-configs.json
 * (default ~/.local/share/agentwire/), beside nothing a project can write.
 */
import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import * as z from "zod";
import { readBoundedFile, UnreadableFileError } from "./bounded-read.js";
import { ConfigFileError } from "./config-file.js";
import { directoryProblem, placeProblem } from "./config-place.js";
import { defaultDataDir } from "./user-dirs.js";

/** Room for thousands of entries; a larger file is not ours. */
const MAX_TRUST_STORE_BYTES = 4 * 1024 * 1024;

const TrustEntry = z.strictObject({
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  trustedAt: z.string(),
});
const TrustFile = z.strictObject({
  version: z.literal(1),
  files: z.record(z.string(), TrustEntry),
});
export type TrustEntry = z.infer<typeof TrustEntry>;

/** trusted: as it was when trusted; changed: trusted once, different now; untrusted: never trusted (or revoked). */
export type TrustVerdict = "trusted" | "changed" | "untrusted";

/** $XDG_DATA_HOME/agentwire/trusted-configs.json (an XDG_DATA_HOME that is not absolute is ignored, as the spec says). */
export function trustStorePath(env: NodeJS.ProcessEnv, home?: string): string {
  return join(defaultDataDir(env, home), "trusted-configs.json");
}

export class TrustStore {
  private constructor(
    readonly path: string,
    private readonly files: Map<string, TrustEntry>,
  ) {}

  /**
   * The store at `path` (empty when there is none yet). One that others could
   * have written, or that is not ours to read, is an error naming it: trust
   * must come from the user alone.
   */
  static load(path: string): TrustStore {
    let bytes: Buffer;
    try {
      const read = readBoundedFile(path, MAX_TRUST_STORE_BYTES);
      const problem = placeProblem(read.stat) ?? directoryProblem(dirname(path));
      if (problem) throw new ConfigFileError(path, "file", `is ${problem}; trust is taken only from a file no one else can change (fix it, or remove it and trust again)`);
      bytes = read.bytes;
    } catch (error) {
      if (error instanceof UnreadableFileError && error.code === "ENOENT") return new TrustStore(path, new Map());
      if (error instanceof UnreadableFileError) throw new ConfigFileError(path, "file", error.message);
      throw error;
    }
    let parsed;
    try {
      parsed = TrustFile.safeParse(JSON.parse(bytes.toString("utf8")));
    } catch {
      parsed = undefined;
    }
    if (!parsed?.success) throw new ConfigFileError(path, "file", "is not a trust list agentwire wrote; remove it and run agentwire trust again");
    return new TrustStore(path, new Map(Object.entries(parsed.data.files)));
  }

  /** `file` is a real path (symlinks resolved), as `trust` recorded it. */
  verdict(file: string, sha256: string): TrustVerdict {
    const entry = this.files.get(file);
    if (!entry) return "untrusted";
    return entry.sha256 === sha256 ? "trusted" : "changed";
  }

  entries(): [file: string, entry: TrustEntry][] {
    return [...this.files].sort(([a], [b]) => a.localeCompare(b));
  }

  trust(file: string, sha256: string): void {
    this.files.set(file, { sha256, trustedAt: new Date().toISOString() });
    this.save();
  }

  /** False when `file` was not trusted. */
  revoke(file: string): boolean {
    const had = this.files.delete(file);
    if (had) this.save();
    return had;
  }

  /** Written whole to a temp file and renamed over: a crash leaves the old list or the new one. Only the user may read or write it. */
  private save(): void {
    mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
    const temp = `${this.path}.${process.pid}.tmp`;
    const body = { version: 1, files: Object.fromEntries(this.entries()) };
    try {
      writeFileSync(temp, `${JSON.stringify(body, null, 2)}\n`, { mode: 0o600 });
      renameSync(temp, this.path);
    } catch (error) {
      rmSync(temp, { force: true });
      throw error;
    }
  }
}
