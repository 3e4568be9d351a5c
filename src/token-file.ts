/**
 * `--token-file PATH`: the token from a file, so it is neither on the command
 * line (which `ps` shows every local user) nor in the environment of the
 * process that starts agentwire. Read once at start, surrounding whitespace
 * trimmed. Opened without blocking and checked to be a regular file of a
 * sensible size, so a FIFO or /dev/zero given by mistake is a clear error,
 * not a hang or a read without end.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import { UsageError } from "./usage-error.js";

/** Far more than any token; a larger file is not a token file. */
const MAX_TOKEN_FILE_BYTES = 64 * 1024;

export function readTokenFile(path: string, flag = "--token-file"): string {
  if (path === "") throw new UsageError(`${flag} needs a file name`);
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw new UsageError(`${flag} ${path}: cannot be read (${(error as Error).message})`);
  }
  let text: string;
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw new UsageError(`${flag} ${path}: not a regular file`);
    if (stats.size > MAX_TOKEN_FILE_BYTES) throw new UsageError(`${flag} ${path}: ${stats.size} bytes is too large for a token file (at most ${MAX_TOKEN_FILE_BYTES})`);
    const buffer = Buffer.alloc(MAX_TOKEN_FILE_BYTES + 1);
    let length = 0;
    for (let n; length < buffer.length && (n = readSync(fd, buffer, length, buffer.length - length, null)) > 0; ) length += n;
    if (length > MAX_TOKEN_FILE_BYTES) throw new UsageError(`${flag} ${path}: too large for a token file (at most ${MAX_TOKEN_FILE_BYTES} bytes)`);
    text = buffer.subarray(0, length).toString("utf8").trim();
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`${flag} ${path}: cannot be read (${(error as Error).message})`);
  } finally {
    closeSync(fd);
  }
  if (text === "") throw new UsageError(`${flag} ${path}: the file is empty`);
  // A token travels in one HTTP header (or subprotocol): a line break cannot be part of it.
  if (/[\r\n]/.test(text)) throw new UsageError(`${flag} ${path}: holds more than one line; put only the token in it`);
  return text;
}
