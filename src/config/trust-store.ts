/**
 * The files the user has trusted (`agentwire trust`), each with the SHA-256
 * of its content when trusted: a changed file is no longer trusted. Kept in
 * the user's data directory, $XDG_DATA_HOME/agentwire/trusted-configs.json
 * (default ~/.local/share/agentwire/), beside nothing a project can write.
 */
import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { readBoundedFile, UnreadableFileError } from "./bounded-read.js";
import { ConfigFileError } from "./config-file.js";
import { directoryProblem, placeProblem } from "./config-place.js";
import { defaultDataDir } from "./user-dirs.js";

/** Room for thousands of entries; a larger file is not ours. */
const MAX_TRUST_STORE_BYTES = 4 * 1024 * 1024;

/** One trusted file: its content's SHA-256 (hex) when it was trusted, and when. */
export interface TrustEntry {
  sha256: string;
  trustedAt: string;
}

/**
 * The entries of a trust list as `save` writes it ({ version: 1, files: {
 * path: { sha256, trustedAt } } }, no other key), or undefined for anything
 * else. Checked by hand, not with zod: every start that reads a
 * configuration file reads this list, and zod's error would not be shown.
 */
function trustFileEntries(value: unknown): Map<string, TrustEntry> | undefined {
  if (!isRecord(value) || !sameKeys(value, ["version", "files"]) || value.version !== 1 || !isRecord(value.files)) return undefined;
  const files = new Map<string, TrustEntry>();
  for (const [file, entry] of Object.entries(value.files)) {
    if (!isRecord(entry) || !sameKeys(entry, ["sha256", "trustedAt"])) return undefined;
    const { sha256, trustedAt } = entry;
    if (typeof sha256 !== "string" || !/^[0-9a-f]{64}$/.test(sha256) || typeof trustedAt !== "string") return undefined;
    files.set(file, { sha256, trustedAt });
  }
  return files;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
const sameKeys = (value: Record<string, unknown>, keys: readonly string[]) => {
  const own = Object.keys(value);
  return own.length === keys.length && keys.every((key) => Object.hasOwn(value, key));
};

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
    let files: Map<string, TrustEntry> | undefined;
    try {
      files = trustFileEntries(JSON.parse(bytes.toString("utf8")));
    } catch {
      files = undefined;
    }
    if (!files) throw new ConfigFileError(path, "file", "is not a trust list agentwire wrote; remove it and run agentwire trust again");
    return new TrustStore(path, files);
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
