/**
 * Text files as the file tools see them: regular files only, opened through
 * workspace-open.ts (a FIFO or a device would hang a read or never end; a
 * path swapped for a symlink would lead outside), binary files told apart
 * from text by their first bytes, and writes that are atomic — a reader, or
 * a crash, sees the old content or the new, never half of it.
 */
import { randomBytes } from "node:crypto";
import type { FileHandle } from "node:fs/promises";
import { basename, dirname } from "node:path";
import { FileToolError, rethrowFsError } from "./file-tool-error.js";
import { throwIfStopped } from "./file-tool-run.js";
import { openOrMakeDirectory, openWorkspaceFile, readUpTo, type OpenFileOptions, type WorkspaceFile } from "./workspace-open.js";

/** How much of a file is inspected to decide that it is binary (as git does with its first 8000 bytes). */
export const BINARY_SNIFF_BYTES = 8192;

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * True when the sample has a NUL byte or is not valid UTF-8. `truncated`:
 * the sample is a prefix of a longer file, so a character cut at its end is
 * not held against it.
 */
export function looksBinary(sample: Uint8Array, truncated: boolean): boolean {
  if (sample.includes(0)) return true;
  const end = truncated ? completeUtf8Length(sample) : sample.length;
  try {
    strictUtf8.decode(sample.subarray(0, end));
    return false;
  } catch {
    return true;
  }
}

/** The sample's length without a multi-byte character cut off at its end. */
function completeUtf8Length(bytes: Uint8Array): number {
  let lead = bytes.length - 1;
  // At most three continuation bytes precede a character's end.
  while (lead >= 0 && bytes.length - lead <= 4 && (bytes[lead] & 0xc0) === 0x80) lead--;
  if (lead < 0 || bytes.length - lead > 4) return bytes.length;
  const first = bytes[lead];
  const width = first >= 0xf0 ? 4 : first >= 0xe0 ? 3 : first >= 0xc0 ? 2 : 1;
  return lead + width > bytes.length ? lead : bytes.length;
}

export function binaryRefusal(display: string, size: number): FileToolError {
  return new FileToolError(`"${display}" looks like a binary file (${size} bytes: NUL bytes or invalid UTF-8 near its start); file tools read text only`);
}

/** Reads up to the first BINARY_SNIFF_BYTES of an open file. */
export async function readSample(handle: FileHandle): Promise<{ sample: Uint8Array; truncated: boolean }> {
  const buffer = Buffer.alloc(BINARY_SNIFF_BYTES + 1);
  const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
  return { sample: buffer.subarray(0, Math.min(bytesRead, BINARY_SNIFF_BYTES)), truncated: bytesRead > BINARY_SNIFF_BYTES };
}

/** A whole text file, for tools that rewrite it; refuses binary files and files over `maxBytes`. */
export async function readWholeText(
  real: string,
  display: string,
  maxBytes: number,
  signal: AbortSignal,
  options: OpenFileOptions,
): Promise<{ text: string; mode: number }> {
  const file = await openWorkspaceFile(real, display, options);
  try {
    return { text: await readOpenText(file, display, maxBytes, signal), mode: file.mode };
  } finally {
    await file.close();
  }
}

/** The text of an open file; refuses binary files and files over `maxBytes` (the read stops there, whatever the file claims). */
export async function readOpenText(file: WorkspaceFile, display: string, maxBytes: number, signal: AbortSignal): Promise<string> {
  if (file.size > maxBytes) {
    throw new FileToolError(`"${display}" is ${file.size} bytes, over the ${maxBytes}-byte limit for editing; use write_file or the shell`);
  }
  let bytes: Buffer;
  try {
    bytes = await readUpTo(file.handle, maxBytes + 1, signal);
  } catch (error) {
    throwIfStopped(signal);
    rethrowFsError(error, display);
  }
  if (bytes.length > maxBytes) throw new FileToolError(`"${display}" grew over the ${maxBytes}-byte limit while being read`);
  const sample = bytes.subarray(0, BINARY_SNIFF_BYTES);
  if (looksBinary(sample, bytes.length > BINARY_SNIFF_BYTES)) throw binaryRefusal(display, bytes.length);
  return bytes.toString("utf8");
}

/**
 * Replaces the file at `real` (inside the workspace whose real path is
 * `root`) with `text`: written to a temporary file in the same directory (a
 * rename is atomic only within one file system), synced, given `mode` (the
 * old file's permissions), then renamed over the target. Missing parent
 * directories are created. The directory is opened and verified first, and
 * the temporary file and the rename go through its descriptor, never through
 * the path again (workspace-open.ts says why that keeps them inside). The
 * signal is checked last before the rename: an interrupted write leaves the
 * old file and no temporary one.
 */
export async function writeAtomically(
  root: string,
  real: string,
  display: string,
  text: string,
  mode: number | undefined,
  signal: AbortSignal,
): Promise<void> {
  const name = basename(real);
  // The name is cut so that a long file name still leaves room for the suffix (255 bytes per name).
  const temp = `.${name.slice(0, 100)}.agentwire-${randomBytes(6).toString("hex")}.tmp`;
  const dir = await openOrMakeDirectory(root, dirname(real), display);
  let handle: FileHandle | undefined;
  let created = false;
  try {
    handle = await dir.createFile(temp, mode ?? 0o666, display);
    created = true;
    await handle.writeFile(text, "utf8");
    // open() applied the umask; the old file's bits are restored exactly.
    if (mode !== undefined) await handle.chmod(mode);
    await handle.sync();
    await handle.close();
    handle = undefined;
    throwIfStopped(signal);
    await dir.rename(temp, name);
  } catch (error) {
    await handle?.close().catch(() => {});
    if (created) await dir.remove(temp).catch(() => {});
    throwIfStopped(signal);
    rethrowFsError(error, display);
  } finally {
    await dir.close();
  }
}
