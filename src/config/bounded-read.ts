/**
 * Reading a small file someone else may have put in our way: a FIFO must not
 * hang the start (open without blocking), /dev/zero or a 50 MB file must not
 * be read whole (only regular files, and at most a bound). The checks are
 * made on the descriptor actually opened, so a file swapped after a check is
 * still checked.
 */
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from "node:fs";

/** A file that is not read, and why, in words that finish "FILE …". */
export class UnreadableFileError extends Error {
  constructor(
    message: string,
    /** The errno code when the system refused (ENOENT, EACCES…). */
    readonly code?: string,
  ) {
    super(message);
  }
}

export interface BoundedFile {
  bytes: Buffer;
  /** fstat of the descriptor that was read. */
  stat: Stats;
}

/** Reads `file` whole if it is a regular file of at most `maxBytes`; else throws UnreadableFileError saying why. */
export function readBoundedFile(file: string, maxBytes: number): BoundedFile {
  let fd: number;
  try {
    // O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting for one.
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (error) {
    throw new UnreadableFileError(`cannot be read: ${(error as Error).message}`, (error as NodeJS.ErrnoException).code);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new UnreadableFileError(`is not a regular file (${fileKind(stat)})`);
    if (stat.size > maxBytes) throw new UnreadableFileError(`is ${stat.size} bytes, more than the ${describeBytes(maxBytes)} a configuration file may have`);
    // One byte over the bound tells a file that grew since fstat from one that fits.
    const buffer = Buffer.alloc(maxBytes + 1);
    let length = 0;
    for (;;) {
      const n = readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
      if (length > maxBytes) throw new UnreadableFileError(`is more than the ${describeBytes(maxBytes)} a configuration file may have`);
    }
    return { bytes: buffer.subarray(0, length), stat };
  } catch (error) {
    if (error instanceof UnreadableFileError) throw error;
    throw new UnreadableFileError(`cannot be read: ${(error as Error).message}`, (error as NodeJS.ErrnoException).code);
  } finally {
    closeSync(fd);
  }
}

function fileKind(stat: Stats): string {
  if (stat.isDirectory()) return "a directory";
  if (stat.isFIFO()) return "a FIFO";
  if (stat.isCharacterDevice()) return "a character device";
  if (stat.isBlockDevice()) return "a block device";
  if (stat.isSocket()) return "a socket";
  return "not a plain file";
}

export function describeBytes(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}
